//go:build unix

package exec

import (
	"errors"

	"github.com/agentgate/agentgate/unixpg"
)

// unixProc adapts *unixpg.Process to proc.
type unixProc struct{ p *unixpg.Process }

// startProc starts spec under a per-run supervising process (package
// unixpg). containment is true when the error means the containment could
// not be set up.
func startProc(spec procSpec) (p proc, containment bool, err error) {
	up, err := unixpg.Start(unixpg.Spec(spec))
	if err != nil {
		return nil, errors.Is(err, unixpg.ErrContainment), err
	}
	return unixProc{up}, false, nil
}

// Pid returns the leader's pid.
func (u unixProc) Pid() int { return u.p.Pid() }

// Terminate asks the supervisor to end the tree.
func (u unixProc) Terminate() { u.p.Terminate() }

// Wait waits for the whole tree to be gone.
func (u unixProc) Wait() (procExit, error) {
	st, err := u.p.Wait()
	return procExit(st), err
}
