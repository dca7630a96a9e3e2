//go:build linux

package unixpg_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentgate/agentgate/exec/procspec"
	"github.com/agentgate/agentgate/unixpg"
)

// requireCgroups skips t unless runs get cgroups of their own here.
func requireCgroups(t *testing.T) string {
	t.Helper()
	base, why := unixpg.CgroupBase()
	if base == "" {
		t.Skip("no per-run cgroups here:", why)
	}
	return base
}

// TestKilledSupervisorCgroupEndsEscapees is the SIGKILL attack of the
// adversarial suite without Landlock: the run starts setsid escapees and
// SIGKILLs its own supervisor. The escapees, reparented away from any
// supervisor, are still in the run's cgroup, and the host ends it.
func TestKilledSupervisorCgroupEndsEscapees(t *testing.T) {
	requireCgroups(t)
	p, pids, _ := startAttack(t, `while [ ! -e "$D/go" ]; do sleep 0.01; done; kill -KILL $PPID`, 0)
	_, err := waitErr(t, p)
	if !errors.Is(err, procspec.ErrContainment) {
		t.Errorf("Wait error = %v, want one wrapping ErrContainment", err)
	}
	waitAllDead(t, pids) // every escapee too
}

// TestRunStartsInItsOwnCgroup: the target is in a cgroup of its own from
// its first instruction, and the cgroup is gone after the run.
func TestRunStartsInItsOwnCgroup(t *testing.T) { bothModes(t, testRunStartsInItsOwnCgroup) }

func testRunStartsInItsOwnCgroup(t *testing.T) {
	base := requireCgroups(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p, err := unixpg.Start(procspec.Spec{Path: "/bin/cat", Args: []string{"cat", "/proc/self/cgroup"}, Stdout: w})
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	out := make([]byte, 4096)
	n, _ := r.Read(out)
	waitWithin(t, p)
	var cg string
	for _, line := range strings.Split(string(out[:n]), "\n") {
		if v, ok := strings.CutPrefix(line, "0::"); ok {
			cg = v
		}
	}
	if !strings.HasPrefix(filepath.Base(cg), "agentgate-"+strconv.Itoa(os.Getpid())+"-") {
		t.Fatalf("the run's cgroup is %q, want one named agentgate-%d-…", cg, os.Getpid())
	}
	unixpg.WaitCgroupRemovals()
	if _, err := os.Stat(filepath.Join(base, filepath.Base(cg))); !os.IsNotExist(err) {
		t.Errorf("the run's cgroup is still there after the run (%v)", err)
	}
}

// TestStaleCgroupsOfDeadHostsAreEnded: a cgroup a dead host left, with a
// process in it, is ended and removed.
func TestStaleCgroupsOfDeadHostsAreEnded(t *testing.T) {
	base := requireCgroups(t)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(base, "agentgate-"+strconv.Itoa(dead.Process.Pid)+"-stale")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(dir) })
	cgf, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer cgf.Close()
	sleeper := exec.Command("sleep", "1000")
	sleeper.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: int(cgf.Fd()), Setsid: true}
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { sleeper.Wait(); close(done) }()
	if n := unixpg.CleanStaleCgroups(); n < 1 {
		t.Errorf("CleanStaleCgroups ended %d cgroups, want at least the stale one", n)
	}
	select {
	case <-done:
	case <-time.After(eventually):
		t.Fatal("the process in the stale cgroup is still running")
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the stale cgroup is still there (%v)", err)
	}
}
