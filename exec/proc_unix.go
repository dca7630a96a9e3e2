//go:build unix

package exec

import (
	"context"
	"os"
	"runtime"

	"github.com/agentgate/agentgate/exec/procspec"
	"github.com/agentgate/agentgate/unixpg"
	"github.com/agentgate/agentgate/unixpg/userscope"
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

// endStaleTrees ends what runs of hosts that are gone left behind in their
// cgroups (unixpg.CleanStaleCgroups; Linux with per-run cgroups).
func endStaleTrees() { unixpg.CleanStaleCgroups() }

// UseRunCgroups sets up per-run cgroups for this host's runs, where they
// can be had (docs/lifetime.md, "Per-run cgroups"), and says how: each run
// then starts in a cgroup of its own, which ends everything it forked
// however it detached. As root, or in a cgroup delegated to the user,
// they are made below the host's own cgroup; otherwise, in a systemd user
// session, the host asks the user manager for a delegated scope and moves
// into it. Call it once, before the first run; it returns a sentence for
// the host's log.
func UseRunCgroups(ctx context.Context) string {
	if runtime.GOOS != "linux" {
		return "per-run cgroups: none (Linux only)"
	}
	if base, _ := unixpg.CgroupBase(); base != "" {
		return "per-run cgroups: under " + base
	}
	_, why := unixpg.CgroupBase()
	if os.Geteuid() != 0 {
		dir, err := userscope.Delegate(ctx)
		if err == nil {
			unixpg.UseCgroupBase(dir)
			base, why := unixpg.CgroupBase()
			if base == "" {
				return "per-run cgroups: none (" + why + ")"
			}
			return "per-run cgroups: under " + base + " (a delegated systemd user scope)"
		}
		why += "; " + err.Error()
	}
	return "per-run cgroups: none (" + why + "); a run that kills its supervisor can leave detached descendants behind"
}
