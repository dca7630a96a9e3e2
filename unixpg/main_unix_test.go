//go:build unix

package unixpg_test

import (
	"bufio"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/agentgate/agentgate/unixpg"

	"github.com/agentgate/agentgate/exec/procspec"
)

// hostDirEnv, when set, makes the test binary a helper host that runs the
// adversarial tree (see runTestHost).
const hostDirEnv = "UNIXPG_TEST_HOST_DIR"

// hostIdleEnv, when set, makes the test binary a helper host that leaves
// supervisors idle in its pool (see runIdleHost).
const hostIdleEnv = "UNIXPG_TEST_HOST_IDLE"

// directEnv, when set, makes a helper host start its runs directly
// (bothModes' "direct" half); otherwise they have supervisors.
const directEnv = "UNIXPG_TEST_DIRECT"

// Every test of this package runs its commands under supervisors unless it
// says otherwise (bothModes): most of them test the supervisor itself.
func TestMain(m *testing.M) {
	unixpg.MaybeSupervise()
	unixpg.UseSupervisors(os.Getenv(directEnv) == "")
	runHelperMode() // returns unless this binary was started as a test helper
	if dir := os.Getenv(hostDirEnv); dir != "" {
		runTestHost(dir)
		return
	}
	if os.Getenv(hostIdleEnv) != "" {
		runIdleHost()
		return
	}
	if t := os.Getenv(hostDeadlineEnv); t != "" {
		runDeadlineHost(t)
		return
	}
	os.Exit(m.Run())
}

// runTestHost is a host process for the host-death tests: it runs /bin/true
// (so that the tree gets a reused supervisor), starts the adversarial tree
// in dir through unixpg, prints "started PID", and then waits for a line on
// stdin (or its end) and exits without ending the run, as an app that quits
// or crashes would. The test may SIGKILL it instead.
func runTestHost(dir string) {
	if p, err := unixpg.Start(procspec.Spec{Path: "/bin/true", Args: []string{"true"}}); err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	} else if _, err := p.Wait(); err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	p, err := unixpg.Start(treeSpec(dir, "ignore", nil))
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Printf("started %d\n", p.Pid())
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	os.Exit(0)
}

// hostDeadlineEnv, when set to a duration, makes the test binary a helper
// host that runs `sleep 30` with that timeout (see runDeadlineHost).
const hostDeadlineEnv = "UNIXPG_TEST_HOST_DEADLINE"

// runDeadlineHost is a host process for the deadline tests: it starts
// `sleep 30` with the given timeout, prints "started PID", waits for the
// run and prints "ended STATUS timedout=BOOL" (or "error …"), then exits.
func runDeadlineHost(timeout string) {
	d, err := time.ParseDuration(timeout)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	p, err := unixpg.Start(procspec.Spec{Path: "/bin/sleep", Args: []string{"sleep", "30"}, Timeout: d, Grace: 200 * time.Millisecond})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Printf("started %d\n", p.Pid())
	st, err := p.Wait()
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Printf("ended %s timedout=%v\n", st, st.TimedOut)
	os.Exit(0)
}

// treeSpec runs leader.sh (written by writeTreeScripts) in dir with the
// given mode and stdout, with a short grace so that tests are quick.
func treeSpec(dir, mode string, stdout *os.File) procspec.Spec {
	return procspec.Spec{
		Path:   "/bin/sh",
		Args:   []string{"sh", dir + "/leader.sh", mode},
		Dir:    dir,
		Env:    []string{"D=" + dir, "PATH=/usr/local/bin:/usr/bin:/bin"},
		Stdout: stdout,
		Grace:  300 * time.Millisecond,
	}
}

// idleHostRuns is how many runs runIdleHost keeps in progress at once, and
// so how many supervisors it leaves idle at least.
const idleHostRuns = 3

// runIdleHost is a host process for the idle-pool host-death tests: it runs
// idleHostRuns commands at the same time (cat, each reading a pipe until
// the host closes it), so that as many supervisors exist, waits for all,
// prints "idle", and then waits for a line on stdin (or its end) and exits.
// Its supervisors are idle in its pool by then.
func runIdleHost() {
	var procs []*unixpg.Process
	var writers []*os.File
	for range idleHostRuns {
		r, w, err := os.Pipe()
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		p, err := unixpg.Start(procspec.Spec{Path: "/bin/cat", Args: []string{"cat"}, Stdin: r})
		r.Close()
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		procs = append(procs, p)
		writers = append(writers, w)
	}
	for i, p := range procs {
		writers[i].Close()
		if _, err := p.Wait(); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
	}
	fmt.Println("idle")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	os.Exit(0)
}

// bothModes runs test twice, as subtests: "supervisor", every run under a
// per-run supervisor, and "direct", every run the host's own child in its
// cgroup (Linux where per-run cgroups can be made; skipped elsewhere). A
// helper host the test starts inherits the mode through directEnv.
func bothModes(t *testing.T, test func(*testing.T)) {
	t.Run("supervisor", test)
	t.Run("direct", func(t *testing.T) {
		if base, why := unixpg.CgroupBase(); base == "" {
			t.Skipf("no per-run cgroups here (%s), so no direct runs", why)
		}
		unixpg.UseSupervisors(false)
		t.Setenv(directEnv, "1")
		t.Cleanup(func() { unixpg.UseSupervisors(true) })
		test(t)
	})
}
