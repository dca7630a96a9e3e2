//go:build windows

package exec

import (
	"context"

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

// endStaleTrees does nothing: a Job Object ends with its host.
func endStaleTrees() {}

// UseRunCgroups does nothing on Windows: every run's Job Object holds all
// of it already.
func UseRunCgroups(context.Context) string { return "per-run cgroups: not needed (Job Objects)" }
