//go:build windows

package exec

import (
	"github.com/agentgate/agentgate/exec/procspec"
	"github.com/agentgate/agentgate/winjob"
)

// startProc starts spec suspended inside a Job Object (package winjob). An
// error that means the job could not be set up wraps
// procspec.ErrContainment.
func startProc(spec procspec.Spec) (proc, error) {
	p, err := winjob.Start(spec)
	if err != nil {
		return nil, err
	}
	return p, nil
}
