//go:build windows

package exec

import (
	"errors"

	"github.com/agentgate/agentgate/winjob"
)

// winProc adapts *winjob.Process to proc.
type winProc struct{ p *winjob.Process }

// startProc starts spec suspended inside a Job Object (package winjob).
// containment is true when the error means the job could not be set up.
func startProc(spec procSpec) (p proc, containment bool, err error) {
	wp, err := winjob.Start(winjob.Spec(spec))
	if err != nil {
		return nil, errors.Is(err, winjob.ErrContainment), err
	}
	return winProc{wp}, false, nil
}

// Pid returns the leader's pid.
func (w winProc) Pid() int { return w.p.Pid() }

// Terminate ends the job (TerminateJobObject).
func (w winProc) Terminate() { w.p.Terminate() }

// Wait waits for the whole job to be gone.
func (w winProc) Wait() (procExit, error) {
	st, err := w.p.Wait()
	return procExit(st), err
}
