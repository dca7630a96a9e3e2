//go:build linux

package cli

import (
	"bytes"
	"errors"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentgate/agentgate/exec"
	"github.com/agentgate/agentgate/unixpg"
)

// TestRunDeadlineHoldsWhileHostStopped: Ctrl-Z on `agentgate run` stops the
// host only; the run's supervisor is in its own process group and ends the
// run at its deadline anyway. The host, continued, reports the timeout.
// (SIGSTOP stands in for the terminal's SIGTSTP, which needs a foreground
// job; both stop the host's process the same way.)
func TestRunDeadlineHoldsWhileHostStopped(t *testing.T) {
	s := newCLISandbox(t, runRules)
	pidFile := filepath.Join(s.project, "run.pid")
	cmd := s.command(t, "run", "--timeout", "1s", "--", "sh", "-c", "echo $$ > run.pid; exec sleep 30")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var target int
	deadline := time.Now().Add(eventually)
	for target == 0 && time.Now().Before(deadline) {
		b, _ := os.ReadFile(pidFile)
		if bytes.HasSuffix(b, []byte("\n")) {
			target, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		time.Sleep(5 * time.Millisecond)
	}
	if target == 0 {
		t.Fatalf("the run wrote no pid (stderr %s)", stderr.String())
	}
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// The run sleeps 30 s; only its own deadline (1 s) ends it while the
	// host is stopped.
	deadline = time.Now().Add(eventually)
	for unixpg.Alive(target) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	stillAlive := unixpg.Alive(target)
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if stillAlive {
		t.Fatalf("the run (pid %d) outlived its 1 s deadline by %v while its host was stopped", target, eventually)
	}
	var exitErr *osexec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != exitFailed || !strings.Contains(stderr.String(), "timed out") {
		t.Errorf("host: %v, stderr %q; want exit %d and a timeout", err, stderr.String(), exitFailed)
	}
	recs, _ := exec.ListRecords(s.paths.StateDir)
	if len(recs) != 1 || recs[0].State != exec.StateTimedOut {
		t.Errorf("run records = %+v; want one timed_out run", recs)
	}
}
