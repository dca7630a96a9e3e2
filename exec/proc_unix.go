//go:build unix

package exec

import (
	"github.com/agentgate/agentgate/exec/procspec"
	"github.com/agentgate/agentgate/unixpg"
)

// startProc starts spec under a per-run supervising process (package
// unixpg). An error that means the containment could not be set up wraps
// procspec.ErrContainment.
func startProc(spec procspec.Spec) (proc, error) {
	p, err := unixpg.Start(spec)
	if err != nil {
		return nil, err
	}
	return p, nil
}
