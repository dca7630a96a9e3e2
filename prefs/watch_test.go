package prefs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgate/agentgate/exec/atomicfile"
)

// eventually waits (generously, for a busy machine) until cond holds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within 10 s: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// replaceByRename writes content the way editors do: a new file renamed over
// the old one (on Windows retrying while a reader holds the old one, as
// Wine, lacking POSIX rename semantics, needs).
func replaceByRename(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".editor-swp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Error(err)
		return
	}
	if err := atomicfile.Rename(tmp, path); err != nil {
		t.Error(err)
	}
}

func TestWatchSeesHandEdits(t *testing.T) {
	p := testPaths(t)
	root := t.TempDir()
	writeFile(t, p.GlobalFile(), "ls\n")
	s := openStore(t, p)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.Decide(Query{Argv: []string{"x"}, Provider: "codex", ProjectRoot: root, Dir: os.TempDir()}) // read provider and project lists before watching
	if err := s.Watch(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Watch(ctx); err == nil {
		t.Fatal("a second Watch must be refused")
	}

	// Rename-replace of the global list.
	replaceByRename(t, p.GlobalFile(), "ls\ngit status\n")
	eventually(t, "rename-replace edit of the global list", func() bool {
		return s.Decide(Query{Argv: []string{"git", "status"}, Provider: "", ProjectRoot: "", Dir: os.TempDir()}).Allowed
	})

	// In-place write (truncate and write) of the global list.
	if err := os.WriteFile(p.GlobalFile(), []byte("pwd\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	eventually(t, "in-place edit of the global list", func() bool {
		return s.Decide(Query{Argv: []string{"pwd"}, Provider: "", ProjectRoot: "", Dir: os.TempDir()}).Allowed && !s.Decide(Query{Argv: []string{"ls"}, Provider: "", ProjectRoot: "", Dir: os.TempDir()}).Allowed
	})

	// A provider list created after watching began.
	prov, _ := p.ProviderFile("codex")
	writeFile(t, prov, "cargo test\n")
	eventually(t, "new provider list", func() bool {
		return s.Decide(Query{Argv: []string{"cargo", "test"}, Provider: "codex", ProjectRoot: "", Dir: os.TempDir()}).Allowed
	})

	// A project list created (directory and all) after watching began, then
	// confirmed by another process through trust.json.
	writeFile(t, ProjectFile(root), "make\n")
	eventually(t, "new project list", func() bool {
		rules, _, _ := s.Rules(ScopeProject, "", root)
		return len(rules) == 1
	})
	if s.Decide(Query{Argv: []string{"make"}, Provider: "", ProjectRoot: root, Dir: os.TempDir()}).Allowed {
		t.Fatal("an unconfirmed project rule must not apply")
	}
	other := openStore(t, p)
	if err := other.Trust(root); err != nil {
		t.Fatal(err)
	}
	eventually(t, "trust confirmed by another process", func() bool {
		return s.Decide(Query{Argv: []string{"make"}, Provider: "", ProjectRoot: root, Dir: os.TempDir()}).Allowed
	})

	// Removing the file removes its rules.
	if err := os.Remove(p.GlobalFile()); err != nil {
		t.Fatal(err)
	}
	eventually(t, "deleted global list", func() bool {
		return !s.Decide(Query{Argv: []string{"pwd"}, Provider: "", ProjectRoot: "", Dir: os.TempDir()}).Allowed
	})

	cancel()
	eventually(t, "watch to stop", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.watcher == nil
	})
}

// TestReloadNeverEmpty: while a list is replaced again and again (by rename,
// so every version is complete), a rule present in every version is allowed
// by every single decision.
func TestReloadNeverEmpty(t *testing.T) {
	p := testPaths(t)
	writeFile(t, p.GlobalFile(), "ls\n")
	s := openStore(t, p)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := s.Watch(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 100 {
			replaceByRename(t, p.GlobalFile(), fmt.Sprintf("ls\nrule%d\n", i))
			time.Sleep(2 * time.Millisecond)
		}
	}()
	checks := 0
	for {
		select {
		case <-done:
			eventually(t, "last edit", func() bool {
				return s.Decide(Query{Argv: []string{"rule99"}, Provider: "", ProjectRoot: "", Dir: os.TempDir()}).Allowed
			})
			if checks == 0 {
				t.Fatal("no decision was checked")
			}
			return
		default:
		}
		if d := s.Decide(Query{Argv: []string{"ls", "-l"}, Provider: "", ProjectRoot: "", Dir: os.TempDir()}); !d.Allowed {
			t.Fatalf("decision %d: ls not allowed although every version of the file allows it", checks)
		}
		checks++
	}
}

func TestChangedSignalsReload(t *testing.T) {
	p := testPaths(t)
	s := openStore(t, p)
	ch := s.Changed()
	if _, err := s.Add(ScopeGlobal, "", "", []string{"ls"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("Changed not closed after an edit")
	}
}

// TestHandEditDuringAPIEditIsKept: a hand edit (rename-replace, by another
// goroutine, without the lock) that lands while Add is between reading and
// replacing the file is kept, and so is the added rule.
func TestHandEditDuringAPIEditIsKept(t *testing.T) {
	for _, inPlace := range []bool{false, true} {
		t.Run(fmt.Sprintf("inPlace=%v", inPlace), func(t *testing.T) {
			p := testPaths(t)
			writeFile(t, p.GlobalFile(), "# mine\n")
			s := openStore(t, p)
			edits := make(chan string)
			editsDone := make(chan struct{})
			go func() { // the person's editor
				defer close(editsDone)
				for line := range edits {
					old, err := os.ReadFile(p.GlobalFile())
					if err != nil {
						t.Error(err)
					}
					content := string(old) + line + "\n"
					if inPlace {
						if err := os.WriteFile(p.GlobalFile(), []byte(content), 0o600); err != nil {
							t.Error(err)
						}
					} else {
						replaceByRename(t, p.GlobalFile(), content)
					}
					edits <- "" // edit landed
				}
			}()
			hand := 0
			testHookBeforeCommit = func(string) {
				if hand < 5 {
					hand++
					edits <- fmt.Sprintf("hand%d", hand)
					<-edits
				}
			}
			defer func() { testHookBeforeCommit = nil }()
			for i := range 5 {
				if _, err := s.Add(ScopeGlobal, "", "", []string{fmt.Sprintf("api%d", i)}); err != nil {
					t.Fatal(err)
				}
			}
			close(edits)
			<-editsDone
			rules, _ := parseListFile([]byte(readFile(t, p.GlobalFile())))
			var got []string
			for _, r := range rules {
				got = append(got, r.tokens[0])
			}
			slices.Sort(got)
			want := []string{"api0", "api1", "api2", "api3", "api4", "hand1", "hand2", "hand3", "hand4", "hand5"}
			if !slices.Equal(got, want) {
				t.Fatalf("file holds %v, want %v", got, want)
			}
			if !strings.HasPrefix(readFile(t, p.GlobalFile()), "# mine\n") {
				t.Fatal("the comment was lost")
			}
		})
	}
}

// TestConcurrentEditsLoseNothing: many goroutines, through two Stores (as two
// processes would), add and remove rules in the same file at once.
func TestConcurrentEditsLoseNothing(t *testing.T) {
	p := testPaths(t)
	root := t.TempDir()
	stores := []*Store{openStore(t, p), openStore(t, p)}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := stores[g%2]
			for i := range 15 {
				tokens := []string{fmt.Sprintf("g%d", g), fmt.Sprint(i)}
				if _, err := s.Add(ScopeProject, "", root, tokens); err != nil {
					t.Error(err)
					return
				}
				if i%3 == 0 {
					if err := s.Remove(ScopeProject, "", root, tokens); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	fresh := openStore(t, p)
	rules, errs, err := fresh.Rules(ScopeProject, "", root)
	if err != nil || len(errs) != 0 {
		t.Fatal(err, errs)
	}
	if len(rules) != 8*10 {
		t.Fatalf("%d rules, want 80", len(rules))
	}
	for _, r := range rules {
		if !r.Active {
			t.Fatalf("rule %q added through agentgate is not confirmed", r.Tokens)
		}
	}
	entries, _ := os.ReadDir(filepath.Dir(ProjectFile(root)))
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Fatalf("temporary file left behind: %s", e.Name())
		}
	}
}
