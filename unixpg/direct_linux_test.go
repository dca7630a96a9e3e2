//go:build linux

package unixpg_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentgate/agentgate/exec/procspec"
	"github.com/agentgate/agentgate/unixpg"
)

// directOnly runs the calling test with direct runs (skipping it where no
// per-run cgroups can be made), as bothModes' "direct" half does.
func directOnly(t *testing.T) {
	t.Helper()
	if base, why := unixpg.CgroupBase(); base == "" {
		t.Skipf("no per-run cgroups here (%s), so no direct runs", why)
	}
	unixpg.UseSupervisors(false)
	t.Setenv(directEnv, "1")
	t.Cleanup(func() { unixpg.UseSupervisors(true) })
}

// startDeadlineHost starts the test binary as a helper host in direct mode
// whose run (`sleep 30`) has the given timeout, and returns it with the
// run's pid and the reader of the rest of its output.
func startDeadlineHost(t *testing.T, timeout time.Duration) (*exec.Cmd, int, *bufio.Reader) {
	t.Helper()
	host := exec.Command(os.Args[0], "-test.run=^$")
	host.Env = append(os.Environ(), hostDeadlineEnv+"="+timeout.String())
	host.Stderr = os.Stderr
	stdout, err := host.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = host.Process.Signal(syscall.SIGCONT)
		_ = host.Process.Kill()
		_ = host.Wait()
	})
	br := bufio.NewReader(stdout)
	line, err := br.ReadString('\n')
	pid, perr := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "started ")))
	if err != nil || perr != nil {
		t.Fatalf("helper host said %q (%v)", line, err)
	}
	return host, pid, br
}

// waitGone waits (up to eventually) until pid has ended and reports whether
// it did.
func waitGone(pid int) bool {
	deadline := time.Now().Add(eventually)
	for unixpg.Alive(pid) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	return !unixpg.Alive(pid)
}

// TestDirectDeadlineHoldsWhileHostStopped: the host of a direct run is
// stopped (as Ctrl-Z stops `agentgate run`); its warden ends the run at the
// deadline anyway, and the host, continued, reports the timeout.
func TestDirectDeadlineHoldsWhileHostStopped(t *testing.T) {
	directOnly(t)
	host, pid, out := startDeadlineHost(t, time.Second)
	if err := host.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	if !waitGone(pid) {
		t.Fatalf("the run (pid %d) outlived its 1 s deadline by %v while its host was stopped", pid, eventually)
	}
	t.Logf("the run ended %v after its host was stopped", time.Since(stopped).Round(time.Millisecond))
	if err := host.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	line, _ := out.ReadString('\n')
	if !strings.Contains(line, "timedout=true") {
		t.Errorf("host reported %q; want the run timed out", line)
	}
}

// wardenOf returns the pid of the warden among pid's children (of any of
// its threads: the warden is started from the host's starter thread), or 0.
func wardenOf(t *testing.T, pid int) int {
	t.Helper()
	tasks, _ := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	for _, task := range tasks {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + task.Name() + "/children")
		for _, f := range strings.Fields(string(b)) {
			cmd, _ := os.ReadFile("/proc/" + f + "/cmdline")
			if bytes.Contains(cmd, []byte("__agentgate_warden")) {
				n, _ := strconv.Atoi(f)
				return n
			}
		}
	}
	return 0
}

// TestDirectWardenKilledIsReplaced: a direct run's warden is killed (as an
// unscoped run could kill it); the host starts another at once, which finds
// the run on its cgroup, so the deadline still holds once the host is
// stopped too.
func TestDirectWardenKilledIsReplaced(t *testing.T) {
	directOnly(t)
	host, pid, out := startDeadlineHost(t, 2*time.Second)
	old := wardenOf(t, host.Process.Pid)
	if old == 0 {
		t.Fatal("the helper host has no warden")
	}
	if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var next int
	deadline := time.Now().Add(eventually)
	for next = wardenOf(t, host.Process.Pid); (next == 0 || next == old) && time.Now().Before(deadline); next = wardenOf(t, host.Process.Pid) {
		time.Sleep(5 * time.Millisecond)
	}
	if next == 0 || next == old {
		t.Fatalf("no new warden after the old one (pid %d) was killed", old)
	}
	if err := host.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	if !waitGone(pid) {
		t.Fatalf("the run (pid %d) outlived its deadline with its first warden killed and its host stopped", pid)
	}
	_ = host.Process.Signal(syscall.SIGCONT)
	if line, _ := out.ReadString('\n'); !strings.Contains(line, "timedout=true") {
		t.Errorf("host reported %q; want the run timed out", line)
	}
}

// TestDirectRunGetsOnlyItsFiles: a descriptor the host holds without
// close-on-exec (as one inherited from a launcher would be) does not reach
// a direct run.
func TestDirectRunGetsOnlyItsFiles(t *testing.T) {
	directOnly(t)
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := unix.FcntlInt(f.Fd(), unix.F_SETFD, 0); err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p, err := unixpg.Start(procspec.Spec{Path: "/bin/sh", Args: []string{"sh", "-c", "ls /proc/$$/fd"}, Stdout: w})
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := bufio.NewReader(r).ReadString(0)
	if _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	fds := strings.Fields(b)
	for _, fd := range fds {
		if fd == strconv.Itoa(int(f.Fd())) {
			t.Errorf("the run holds the host's descriptor %s; it has %v", fd, fds)
		}
	}
}
