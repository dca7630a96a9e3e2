package cli

import (
	"bufio"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentgate/agentgate/agentbridge/audit"
)

// TestLogFollow runs `agentgate log -f --json` as a process: it prints the
// entries already there, then entries appended later by another writer,
// and exits 0 on SIGTERM.
func TestLogFollow(t *testing.T) {
	s := newCLISandbox(t, "")
	log, err := audit.Open(audit.Path(s.paths.StateDir), audit.Options{Host: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	if err := log.Append(audit.Entry{Kind: audit.KindProposal, RunID: "before", Argv: []string{"true"}}); err != nil {
		t.Fatal(err)
	}

	cmd := s.command(t, "log", "-f", "--json")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	waitFor := func(what string, tick func()) {
		t.Helper()
		deadline := time.After(10 * time.Second)
		ticker := time.NewTicker(200 * time.Millisecond)
		defer ticker.Stop()
		for {
			select {
			case line, ok := <-lines:
				if !ok {
					t.Fatalf("log -f ended before printing %s", what)
				}
				if strings.Contains(line, what) {
					return
				}
			case <-ticker.C:
				if tick != nil {
					tick()
				}
			case <-deadline:
				t.Fatalf("log -f never printed %s", what)
			}
		}
	}
	waitFor(`"run_id":"before"`, nil)
	// Appended after it started: keep appending until one is followed (the
	// follower may still be starting when the first lands).
	n := 0
	waitFor(`"run_id":"after-`, func() {
		n++
		if err := log.Append(audit.Entry{Kind: audit.KindProposal, RunID: "after-" + strconv.Itoa(n), Argv: []string{"true"}}); err != nil {
			t.Error(err)
		}
	})
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for range lines {
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("log -f after SIGTERM: %v", err)
	}
}
