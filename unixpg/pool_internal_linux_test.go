//go:build linux

package unixpg

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentgate/agentgate/exec/procspec"
)

// eventuallyInternal is the generous bound for anything that must happen
// "soon" on a shared, noisy machine; not a performance assertion.
const eventuallyInternal = 10 * time.Second

// usePoolLimits sets the pool's limits for one test (a zero answerBound
// keeps the one in force), starting from an empty pool, and restores the
// old limits and an empty pool afterwards.
func usePoolLimits(t *testing.T, lim poolLimits) {
	t.Helper()
	drainPool(t)
	limitsMu.Lock()
	old := limits
	if lim.answerBound == 0 {
		lim.answerBound = old.answerBound
	}
	limits = lim
	limitsMu.Unlock()
	t.Cleanup(func() {
		limitsMu.Lock()
		limits = old
		limitsMu.Unlock()
		drainPool(t)
	})
}

// drainPool retires every idle supervisor (and a spare still coming) and
// waits until each has exited.
func drainPool(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(eventuallyInternal)
	for {
		supervisors.mu.Lock()
		idle := supervisors.idle
		supervisors.idle = nil
		coming := supervisors.spareComing
		for _, sc := range idle {
			sc.idleTimer.Stop()
		}
		supervisors.mu.Unlock()
		for _, sc := range idle {
			sc.retire()
			waitExited(t, sc)
		}
		if !coming && len(idle) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the pool did not become empty")
		}
		time.Sleep(time.Millisecond)
	}
}

// waitExited fails the test unless sc's process is reaped within
// eventuallyInternal.
func waitExited(t *testing.T, sc *supervisorConn) {
	t.Helper()
	select {
	case <-sc.exited:
	case <-time.After(eventuallyInternal):
		t.Fatalf("supervisor %d did not exit", sc.proc.Pid)
	}
}

// idlePids returns the pids of the idle supervisors, bottom first.
func idlePids() []int {
	supervisors.mu.Lock()
	defer supervisors.mu.Unlock()
	var pids []int
	for _, sc := range supervisors.idle {
		pids = append(pids, sc.proc.Pid)
	}
	return pids
}

// runParentPid runs `sh -c 'echo $PPID'` and returns the supervisor's pid as
// the run saw it.
func runParentPid(t *testing.T) int {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p, err := Start(procspec.Spec{Path: "/bin/sh", Args: []string{"sh", "-c", "echo $PPID"}, Stdout: w})
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(r)
	if _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("run printed %q", out)
	}
	return pid
}

// waitGone fails the test unless pid ends within eventuallyInternal.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(eventuallyInternal)
	for Alive(pid) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if Alive(pid) {
		t.Errorf("supervisor %d is still running", pid)
	}
}

func TestIdleTimeoutRetiresSupervisor(t *testing.T) {
	usePoolLimits(t, poolLimits{maxIdle: 4, idleTimeout: 200 * time.Millisecond, retireKillAfter: 5 * time.Second})
	sup := runParentPid(t)
	if !slices.Contains(idlePids(), sup) {
		t.Fatalf("supervisor %d is not idle in the pool after its run (pool %v)", sup, idlePids())
	}
	waitGone(t, sup)
	if slices.Contains(idlePids(), sup) {
		t.Errorf("supervisor %d exited but is still in the pool", sup)
	}
}

func TestReuseRestartsIdleTimeout(t *testing.T) {
	usePoolLimits(t, poolLimits{maxIdle: 4, idleTimeout: time.Hour, retireKillAfter: 5 * time.Second})
	first := runParentPid(t)
	if again := runParentPid(t); again != first {
		t.Fatalf("second run had supervisor %d, want the idle %d again", again, first)
	}
	supervisors.mu.Lock()
	gen := supervisors.idle[len(supervisors.idle)-1].idleGen
	supervisors.mu.Unlock()
	if gen != 2 {
		t.Errorf("supervisor entered the pool %d times, want 2", gen)
	}
}

// TestBackToBackRunsReuseOneSupervisor starts each run the moment the
// previous Wait returns, which races the supervisor's final status line
// against its return to the pool: every run must succeed on the same
// supervisor.
func TestBackToBackRunsReuseOneSupervisor(t *testing.T) {
	usePoolLimits(t, poolLimits{maxIdle: 4, idleTimeout: time.Hour, retireKillAfter: 5 * time.Second})
	var first *supervisorConn
	for i := range 1000 {
		p, err := Start(procspec.Spec{Path: "/bin/true", Args: []string{"true"}})
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		if st, err := p.Wait(); err != nil || st.Code != 0 {
			t.Fatalf("run %d: %+v, %v", i, st, err)
		}
		if first == nil {
			first = p.sc
		}
		if p.sc != first {
			t.Fatalf("run %d used supervisor %d, want %d again", i, p.sc.proc.Pid, first.proc.Pid)
		}
	}
}

func TestConcurrentStartsRespectPoolLimit(t *testing.T) {
	const runs = 20
	usePoolLimits(t, poolLimits{maxIdle: 4, idleTimeout: time.Hour, retireKillAfter: 5 * time.Second})
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[int]bool{}
	release := make(chan struct{})
	for i := range runs {
		wg.Go(func() {
			r, w, err := os.Pipe()
			if err != nil {
				t.Error(err)
				return
			}
			defer r.Close()
			in, hold, err := os.Pipe()
			if err != nil {
				t.Error(err)
				return
			}
			// Every run waits on stdin until all have started, so that
			// they really run at the same time.
			p, err := Start(procspec.Spec{Path: "/bin/sh", Args: []string{"sh", "-c", `read x; echo "$PPID $0 $N"`, "run"},
				Env: []string{"N=" + strconv.Itoa(i)}, Stdin: in, Stdout: w})
			in.Close()
			w.Close()
			if err != nil {
				hold.Close()
				t.Error(err)
				return
			}
			<-release
			hold.Close()
			out, _ := io.ReadAll(r)
			st, err := p.Wait()
			if err != nil || !st.Exited || st.Code != 0 {
				t.Errorf("run %d: %+v, %v", i, st, err)
				return
			}
			f := strings.Fields(string(out))
			if len(f) != 3 || f[1] != "run" || f[2] != strconv.Itoa(i) {
				t.Errorf("run %d printed %q", i, out)
				return
			}
			sup, _ := strconv.Atoi(f[0])
			mu.Lock()
			seen[sup] = true
			mu.Unlock()
		})
	}
	time.Sleep(50 * time.Millisecond) // let the Starts happen; correctness does not depend on it
	close(release)
	wg.Wait()
	if len(seen) < 2 {
		t.Errorf("%d runs at once used %d supervisor(s)", runs, len(seen))
	}
	idle := idlePids()
	if len(idle) > 4 {
		t.Errorf("%d supervisors idle, want at most 4", len(idle))
	}
	for sup := range seen {
		if !slices.Contains(idle, sup) {
			waitGone(t, sup) // retired: the pool was full
		}
	}
}

// startFakeSupervisor starts /bin/sh as a "supervisor" that answers a run
// with the lines in answer (each followed by a newline; "$$" is its pid,
// which is also its process group), then sleeps, and returns its host side.
func startFakeSupervisor(t *testing.T, answer ...string) *supervisorConn {
	t.Helper()
	hostEnd, supEnd, err := controlSocketpair()
	if err != nil {
		t.Fatal(err)
	}
	script := "read line <&3; "
	for _, a := range answer {
		script += "echo \"" + strings.ReplaceAll(a, `"`, `\"`) + "\" >&3; "
	}
	script += "exec sleep 1000"
	proc, err := os.StartProcess("/bin/sh", []string{"sh", "-c", script}, &os.ProcAttr{
		Files: []*os.File{nil, nil, os.Stderr, supEnd},
		Sys:   &syscall.SysProcAttr{Setpgid: true},
	})
	supEnd.Close()
	if err != nil {
		t.Fatal(err)
	}
	sc := newSupervisorConn(proc, hostEnd)
	t.Cleanup(func() { _ = proc.Kill(); waitExited(t, sc) })
	return sc
}

// pushIdle puts sc on top of the pool, as the next one Start takes.
func pushIdle(sc *supervisorConn) {
	supervisors.mu.Lock()
	defer supervisors.mu.Unlock()
	sc.idleTimer = time.AfterFunc(time.Hour, func() {})
	supervisors.idle = append(supervisors.idle, sc)
}

func TestMisbehavingSupervisorIsDiscarded(t *testing.T) {
	usePoolLimits(t, poolLimits{maxIdle: 4, idleTimeout: time.Hour, retireKillAfter: 100 * time.Millisecond})
	cases := []struct {
		name   string
		answer []string
		// started is true when Start succeeds.
		started bool
		// waitOK is true when the run itself was reported correctly and
		// only the supervisor misbehaved afterwards.
		waitOK bool
	}{
		{"garbage instead of started", []string{"hello"}, false, false},
		{"exit before started", []string{`end {"exited":true,"code":0}`}, false, false},
		{"garbage after started", []string{"started $$", "bogus"}, true, false},
		{"second started", []string{"started $$", "started $$"}, true, false},
		{"extra line after the final status", []string{"started $$", `end {"exited":true,"code":0}`, `end {"exited":true,"code":0}`}, true, true},
		{"tampered with, by its own account", []string{"started $$", `end {"exited":true,"code":0,"off":"it is no longer a child subreaper"}`}, true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sc := startFakeSupervisor(t, c.answer...)
			pushIdle(sc)
			p, err := Start(procspec.Spec{Path: "/bin/true", Args: []string{"true"}})
			if c.started {
				if err != nil {
					t.Fatalf("Start: %v", err)
				}
				if p.sc != sc {
					t.Fatal("Start did not take the idle (fake) supervisor")
				}
				_, err = p.Wait()
			}
			if c.waitOK && err != nil {
				t.Errorf("Wait: %v; the run was reported correctly", err)
			}
			if !c.waitOK && !errors.Is(err, procspec.ErrContainment) {
				t.Errorf("error = %v, want one wrapping ErrContainment", err)
			}
			waitExited(t, sc) // retired and, since it ignores its lifeline, killed
			if slices.Contains(idlePids(), sc.proc.Pid) {
				t.Errorf("misbehaving supervisor %d is back in the pool", sc.proc.Pid)
			}
		})
	}
}

func TestDeadIdleSupervisorIsSkipped(t *testing.T) {
	usePoolLimits(t, poolLimits{maxIdle: 4, idleTimeout: time.Hour, retireKillAfter: 5 * time.Second})
	sup := runParentPid(t)
	if err := syscall.Kill(sup, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Whether Start finds it already gone from the pool or fails to send
	// to it, the run must go to another supervisor.
	if again := runParentPid(t); again == sup {
		t.Fatalf("run went to the killed supervisor %d", sup)
	}
	waitGone(t, sup)
}

func TestStartAfterChdirUsesNewDirectory(t *testing.T) {
	runParentPid(t) // leaves a supervisor idle that started in the old directory
	dir := t.TempDir()
	t.Chdir(dir)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p, err := Start(procspec.Spec{Path: "/bin/pwd", Args: []string{"pwd"}, Stdout: w})
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(r)
	if _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(got)) != dir {
		t.Errorf("pwd = %q, want the host's current directory %s", got, dir)
	}
}

// TestHostDeadlineWhenSupervisorSilent: a supervisor that started the run
// and then neither ends it nor answers (but is not stopped, so only the
// deadline can tell) does not stretch the run: at deadline + grace +
// hostDeadlineMargin the host ends the tree itself.
func TestHostDeadlineWhenSupervisorSilent(t *testing.T) {
	usePoolLimits(t, poolLimits{maxIdle: 4, idleTimeout: time.Hour, retireKillAfter: 100 * time.Millisecond, answerBound: time.Hour})
	sc := startFakeSupervisor(t, "started $$")
	pushIdle(sc)
	p, err := Start(procspec.Spec{Path: "/bin/true", Args: []string{"true"}, Timeout: 50 * time.Millisecond, Grace: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if p.sc != sc {
		t.Fatal("Start did not take the idle (fake) supervisor")
	}
	st, err := p.Wait()
	if !errors.Is(err, procspec.ErrContainment) || !strings.Contains(err.Error(), "deadline") || !st.TimedOut {
		t.Errorf("Wait = %+v, %v; want a timed-out status and an error wrapping ErrContainment about the deadline", st, err)
	}
	waitExited(t, sc)
}

// TestUnansweringSupervisorIsTakenOver: a busy supervisor that stops
// answering pings (without being stopped or traced) is taken over once
// answerBound passed.
func TestUnansweringSupervisorIsTakenOver(t *testing.T) {
	usePoolLimits(t, poolLimits{maxIdle: 4, idleTimeout: time.Hour, retireKillAfter: 100 * time.Millisecond, answerBound: 300 * time.Millisecond})
	sc := startFakeSupervisor(t, "started $$")
	pushIdle(sc)
	p, err := Start(procspec.Spec{Path: "/bin/true", Args: []string{"true"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Wait()
	if !errors.Is(err, procspec.ErrContainment) || !strings.Contains(err.Error(), "not answered") {
		t.Errorf("Wait error = %v; want one wrapping ErrContainment that says the supervisor stopped answering", err)
	}
	waitExited(t, sc)
}

// TestCheckSelfSeesTampering: the supervisor's check of itself passes in
// a hardened process and names what a tamperer changed. It runs in a
// helper process, since hardening changes the process for good.
func TestCheckSelfSeesTampering(t *testing.T) {
	if os.Getenv("UNIXPG_TEST_CHECKSELF") == "1" {
		if err := hardenSupervisor(); err != nil {
			fmt.Println("harden:", err)
			os.Exit(1)
		}
		fmt.Printf("fresh=%q\n", checkSelf())
		_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
		fmt.Printf("subreaper=%q\n", checkSelf())
		_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
		_ = unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0)
		fmt.Printf("dumpable=%q\n", checkSelf())
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestCheckSelfSeesTampering$")
	cmd.Env = append(os.Environ(), "UNIXPG_TEST_CHECKSELF=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helper: %v (%s)", err, out)
	}
	for _, want := range []string{`fresh=""`, `subreaper="it is no longer a child subreaper"`, `dumpable="it became dumpable again"`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("helper said %q; want %s", out, want)
		}
	}
}
