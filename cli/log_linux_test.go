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

// TestLogAcrossRotatedAndCompressedFiles: `agentgate log` reads the whole
// history — files of the former numbered naming, compressed rotated files,
// the newest rotated file and the active one — oldest first.
func TestLogAcrossRotatedAndCompressedFiles(t *testing.T) {
	s := newCLISandbox(t, "")
	path := audit.Path(s.paths.StateDir)
	log, err := audit.Open(path, audit.Options{Host: "test", MaxBytes: 2 << 10})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 60 {
		if err := log.Append(audit.Entry{Kind: audit.KindProposal, RunID: "r" + strconv.Itoa(1000+i), Argv: []string{"echo", strings.Repeat("x", 40)}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := log.Housekeep(); err != nil {
		t.Fatal(err)
	}
	log.Close()
	files, _ := audit.Files(path)
	compressed := 0
	for _, f := range files {
		if strings.HasSuffix(f, ".gz") {
			compressed++
		}
	}
	if compressed < 2 {
		t.Fatalf("files %v: want several compressed ones", files)
	}
	code, stdout, stderr := runCLI(t, s, "log", "-n", "0", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 60 || !strings.Contains(lines[0], `"run_id":"r1000"`) || !strings.Contains(lines[59], `"run_id":"r1059"`) {
		t.Fatalf("log printed %d lines, first %q, last %q", len(lines), lines[0], lines[len(lines)-1])
	}
	code, stdout, _ = runCLI(t, s, "log", "-n", "3", "--json")
	if lines := strings.Split(strings.TrimSpace(stdout), "\n"); code != exitOK || len(lines) != 3 || !strings.Contains(lines[2], `"run_id":"r1059"`) {
		t.Fatalf("log -n 3: exit %d, %q", code, stdout)
	}
}
