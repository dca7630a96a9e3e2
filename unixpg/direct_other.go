//go:build unix && !linux

package unixpg

import (
	"os"

	"github.com/agentgate/agentgate/exec/procspec"
)

// directRun does not exist outside Linux: every run has a supervisor.
type directRun struct{}

// UseSupervisors does nothing outside Linux, where every run has a
// supervisor anyway.
func UseSupervisors(bool) {}

// directWanted reports false: direct runs need per-run cgroups.
func directWanted() bool { return false }

// startDirect is never called outside Linux.
func startDirect(procspec.Spec, *runCgroup, *os.File, []*os.File) (*Process, error) {
	panic("unixpg: direct runs are Linux-only")
}

// inspectWarden does nothing: there is no warden.
func inspectWarden() {}

func (*directRun) terminate(bool) {}
func (*directRun) kill()          {}
