//go:build linux

package unixpg_test

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentgate/agentgate/exec/procspec"
	"github.com/agentgate/agentgate/unixpg"
	"github.com/agentgate/agentgate/unixpg/asuser"
)

// Adversarial tests: a run attacks its own supervisor, as any
// allowed command could. The tree (leader.sh, tree_linux_test.go) has
// setsid and double-fork escapees, so each test also proves that nothing
// of the tree survives the attack.

// helperEnv, when set, makes the test binary a helper a run starts:
// "attach PID" stays attached to PID with ptrace; "clear PID" injects
// prctl(PR_SET_CHILD_SUBREAPER, 0) into PID and detaches. Each prints one
// line: "ok" or the error.
const helperEnv = "UNIXPG_TEST_HELPER"

// runHelperMode runs the helper named by helperEnv with os.Args[1] as the
// target pid, and exits; it returns at once when helperEnv is unset.
func runHelperMode() {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		return
	}
	pid, _ := strconv.Atoi(os.Args[1])
	switch mode {
	case "attach":
		if err := unix.PtraceAttach(pid); err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println("ok")
		select {} // stay attached until killed
	case "clear":
		if err := injectClearSubreaper(pid); err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println("ok")
		os.Exit(0)
	}
	fmt.Println("error: unknown helper mode", mode)
	os.Exit(2)
}

// attackSpec runs leader.sh in mode "ignore" (tree built, SIGTERM ignored
// everywhere) after attack, a shell snippet the leader runs once the tree
// is complete (with $PPID its supervisor and $HELPER this test binary).
// Its stdout goes to out.
func attackSpec(t *testing.T, dir, attack string, out *os.File) procspec.Spec {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	spec := treeSpec(dir, "ignore", out)
	spec.Env = append(spec.Env, "HELPER="+exe, "ATTACK="+attack)
	return spec
}

// waitErr calls p.Wait and fails the test if it does not return within
// eventually; it returns Wait's results.
func waitErr(t *testing.T, p *unixpg.Process) (procspec.ExitStatus, error) {
	t.Helper()
	type result struct {
		s   procspec.ExitStatus
		err error
	}
	ch := make(chan result, 1)
	go func() { s, err := p.Wait(); ch <- result{s, err} }()
	select {
	case r := <-ch:
		return r.s, r.err
	case <-time.After(eventually):
		t.Fatalf("Wait did not return within %v", eventually)
	}
	panic("unreachable")
}

// waitAllDead waits (bounded by eventually) until no pid in pids runs.
func waitAllDead(t *testing.T, pids map[string]int) {
	t.Helper()
	deadline := time.Now().Add(eventually)
	for anyAlive(pids) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	assertAllDead(t, pids)
}

// startAttack starts the tree with attack and returns the run, the tree's
// pids (leader and supervisor included) and the first line the attack
// printed on the run's stdout ("" when it printed none before the tree
// ended). The file "go" in the tree's directory appears once the pids are
// read (an attack that kills the supervisor waits for it). A pid the
// attack writes to the file "late" in the tree's
// directory is killed when the test ends.
func startAttack(t *testing.T, attack string, timeout time.Duration) (*unixpg.Process, map[string]int, string) {
	t.Helper()
	dir := t.TempDir()
	writeTreeScripts(t, dir)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	spec := attackSpec(t, dir, attack, w)
	spec.Timeout = timeout
	p, err := unixpg.Start(spec)
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	pids := readTreePids(t, dir)
	pids["leader"] = p.Pid()
	pids["supervisor"] = parentOf(t, p.Pid())
	// An attack that must not start before the pids are read waits for
	// this file.
	if err := os.WriteFile(dir+"/go", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		if b, err := os.ReadFile(dir + "/late"); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	br := bufio.NewReader(r)
	line := ""
	for {
		l, err := br.ReadString('\n')
		if err != nil {
			break
		}
		if l = strings.TrimSpace(l); l != "tree-ready" {
			line = l
			break
		}
	}
	return p, pids, line
}

// TestSupervisorEnforcesDeadline: the deadline ends the whole tree, every
// member ignoring SIGTERM, and Wait says it was the deadline.
func TestSupervisorEnforcesDeadline(t *testing.T) {
	dir := t.TempDir()
	writeTreeScripts(t, dir)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	spec := treeSpec(dir, "ignore", w)
	spec.Timeout = 500 * time.Millisecond
	p, err := unixpg.Start(spec)
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	pids := readTreePids(t, dir)
	pids["leader"] = p.Pid()
	st := waitWithin(t, p)
	assertAllDead(t, pids)
	assertEOF(t, r)
	if !st.TimedOut || st.Exited {
		t.Errorf("status = %+v, want ended by the deadline", st)
	}
}

// TestStoppedSupervisorIsTakenOver: the run SIGSTOPs its supervisor (the
// first attack of docs/lifetime.md, "A run against its supervisor"). The host sees the stopped supervisor, ends the
// tree itself, escapees included (they are still the stopped subreaper's
// children), and says why.
func TestStoppedSupervisorIsTakenOver(t *testing.T) {
	p, pids, line := startAttack(t, `kill -STOP $PPID && echo stopped`, 0)
	if line != "stopped" {
		t.Fatalf("the attack printed %q, want stopped", line)
	}
	_, err := waitErr(t, p)
	if !errors.Is(err, procspec.ErrContainment) || !strings.Contains(err.Error(), "stopped") {
		t.Errorf("Wait error = %v; want one wrapping ErrContainment that says the supervisor was stopped", err)
	}
	waitAllDead(t, pids)
}

// TestTracedSupervisorIsTakenOver: the run attaches to its supervisor with
// ptrace and stays attached. A non-root run is refused (the supervisor is
// not dumpable); root may attach, and then the host sees the tracer, ends
// the tree itself and says why.
func TestTracedSupervisorIsTakenOver(t *testing.T) {
	p, pids, line := startAttack(t, `UNIXPG_TEST_HELPER=attach "$HELPER" $PPID &`, 0)
	if os.Geteuid() != 0 {
		if !strings.Contains(line, "operation not permitted") {
			t.Errorf("the attach said %q, want EPERM (the supervisor is not dumpable)", line)
		}
		p.Kill()
		if _, err := waitErr(t, p); err != nil {
			t.Errorf("Wait after a refused attach: %v", err)
		}
		delete(pids, "supervisor") // untouched: back in the pool
		waitAllDead(t, pids)
		return
	}
	if line != "ok" {
		t.Fatalf("the attach said %q, want ok (root may trace a non-dumpable process)", line)
	}
	_, err := waitErr(t, p)
	if !errors.Is(err, procspec.ErrContainment) || !strings.Contains(err.Error(), "trace") {
		t.Errorf("Wait error = %v; want one wrapping ErrContainment that says the supervisor was traced", err)
	}
	waitAllDead(t, pids)
}

// TestTamperedSupervisorIsRetired is the ptrace attack on the subreaper flag: the run
// makes its supervisor clear its subreaper flag, detaches, starts a late
// escapee and exits. A non-root run cannot attach (the supervisor is not
// dumpable). Root can; the late escapee then leaves the supervisor's reach
// (Landlock's ptrace scoping prevents the attack, see docs/lifetime.md),
// but the supervisor's check after the run finds the flag cleared: Wait
// reports lost containment, the host ends the run's cgroup (with the late
// escapee in it) where runs get one, and the supervisor never serves
// again.
func TestTamperedSupervisorIsRetired(t *testing.T) {
	if !ptraceInjectSupported {
		t.Skip("the ptrace injection helper is written for amd64 only")
	}
	attack := `UNIXPG_TEST_HELPER=clear "$HELPER" $PPID
( setsid sh -c 'echo $$ > "$D/late"; exec sleep 1000' & )
while [ ! -s "$D/late" ]; do sleep 0.01; done
exit 0`
	p, pids, line := startAttack(t, attack, 0)
	sup := pids["supervisor"]
	if os.Geteuid() != 0 {
		if !strings.Contains(line, "operation not permitted") {
			t.Errorf("the injection said %q, want EPERM (the supervisor is not dumpable)", line)
		}
		if _, err := waitErr(t, p); err != nil {
			t.Errorf("Wait after a refused injection: %v", err)
		}
		delete(pids, "supervisor") // untouched: back in the pool
		waitAllDead(t, pids)
		return
	}
	if line != "ok" {
		t.Fatalf("the injection said %q, want ok", line)
	}
	_, err := waitErr(t, p)
	if !errors.Is(err, procspec.ErrContainment) || !strings.Contains(err.Error(), "subreaper") {
		t.Errorf("Wait error = %v; want one wrapping ErrContainment that says the supervisor is no longer a subreaper", err)
	}
	waitAllDead(t, map[string]int{"supervisor": sup}) // retired, never back in the pool
}

// TestLifetimeAsUnprivilegedUser runs the attacks on the supervisor and
// the sandbox tests again as a fresh unprivileged user: root may trace a
// non-dumpable process, a user may not, and the sandbox needs a user
// namespace then.
func TestLifetimeAsUnprivilegedUser(t *testing.T) {
	asuser.Run(t, "^(TestSupervisorEnforcesDeadline|TestStoppedSupervisorIsTakenOver|TestTracedSupervisorIsTakenOver|TestTamperedSupervisorIsRetired|TestSandbox)")
}
