package prefs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// TestProjectEditRacingLinkSwap is the attack of issue #13: while the person
// adds project rules, an agent keeps exchanging the project's .agentgate
// directory with a symbolic link to the person's configuration directory
// (renameat2 RENAME_EXCHANGE, atomic, so every path lookup sees one or the
// other). A check by path followed by a write by path lands a rule in the
// global list within a few dozen attempts; edits by descriptor never do —
// each one lands in the project's own list or fails.
func TestProjectEditRacingLinkSwap(t *testing.T) {
	p := testPaths(t)
	writeFile(t, p.GlobalFile(), "# global\n")
	root := t.TempDir()
	real := filepath.Join(root, ".agentgate")
	if err := os.MkdirAll(real, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "swap")
	if err := os.Symlink(filepath.Dir(p.GlobalFile()), link); err != nil {
		t.Fatal(err)
	}
	if err := unix.Renameat2(unix.AT_FDCWD, real, unix.AT_FDCWD, link, unix.RENAME_EXCHANGE); err != nil {
		t.Skipf("renameat2 RENAME_EXCHANGE is not available here: %v", err)
	}
	unix.Renameat2(unix.AT_FDCWD, real, unix.AT_FDCWD, link, unix.RENAME_EXCHANGE) // back

	s := openStore(t, p)
	// Bounded: at least 300 attempts, and on until 5 rules reached the
	// project (so the race really wrote), at most 3000.
	const minAttempts, maxAttempts, wantLanded = 300, 3000, 5
	stop := make(chan struct{})
	var swapper sync.WaitGroup
	swaps := 0
	swapper.Add(1)
	go func() {
		defer swapper.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := unix.Renameat2(unix.AT_FDCWD, real, unix.AT_FDCWD, link, unix.RENAME_EXCHANGE); err != nil {
				t.Errorf("swap: %v", err)
				return
			}
			swaps++
		}
	}()
	landed, refused, attempts := 0, 0, 0
	for attempts < minAttempts || (landed < wantLanded && attempts < maxAttempts) {
		tokens := []string{fmt.Sprintf("tool%d", attempts)}
		attempts++
		if _, err := s.Add(ScopeProject, "", root, tokens); err != nil {
			refused++
		} else {
			landed++
		}
	}
	close(stop)
	swapper.Wait()
	// Put the real directory back under its name.
	if fi, err := os.Lstat(real); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		unix.Renameat2(unix.AT_FDCWD, real, unix.AT_FDCWD, link, unix.RENAME_EXCHANGE)
	}
	t.Logf("%d attempts during %d swaps: %d rules written to the project, %d refused", attempts, swaps, landed, refused)

	global, err := os.ReadFile(p.GlobalFile())
	if err != nil || string(global) != "# global\n" {
		t.Fatalf("the global list changed during the race: %q, %v", global, err)
	}
	entries, _ := os.ReadDir(filepath.Dir(p.GlobalFile()))
	for _, e := range entries {
		if strings.Contains(e.Name(), "tmp") || e.Name() == "allow.list.lock" {
			t.Errorf("the race left %s in the configuration directory", e.Name())
		}
	}
	project := readFile(t, ProjectFile(root))
	if n := strings.Count(project, "tool"); n < landed {
		t.Fatalf("the project list holds %d rules, but %d adds succeeded:\n%s", n, landed, project)
	}
	if landed == 0 {
		t.Fatal("no add succeeded: the test proves nothing about where rules land")
	}
}
