package changes

import (
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// modes are the ways a Keeper keeps an index: from events, and by walking.
var modes = []struct {
	name    string
	noWatch bool
}{{"watch", false}, {"walk", true}}

// newTestKeeper returns a Keeper with a private state directory, closed at
// the end of the test.
func newTestKeeper(t testing.TB, noWatch bool) *Keeper {
	t.Helper()
	k, err := NewKeeper(Options{StateDir: t.TempDir(), NoWatch: noWatch})
	require.NoError(t, err)
	t.Cleanup(func() { k.Close() })
	return k
}

// tree creates files (name → content; a name ending in "/" is a directory,
// content "->target" a symlink) under a fresh project root.
func tree(t testing.TB, files map[string]string) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	write(t, root, files)
	return root
}

// write creates files under root as tree does.
func write(t testing.TB, root string, files map[string]string) {
	t.Helper()
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := filepath.Join(root, filepath.FromSlash(n))
		switch c := files[n]; {
		case strings.HasSuffix(n, "/"):
			require.NoError(t, os.MkdirAll(p, 0o755))
		case strings.HasPrefix(c, "->"):
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, os.Symlink(c[2:], p))
		default:
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, os.WriteFile(p, []byte(c), 0o644))
		}
	}
}

// lists is a summary's three lists, for comparison.
type lists struct{ created, modified, deleted []string }

// got returns s's lists.
func got(s *Summary) lists { return lists{s.Created, s.Modified, s.Deleted} }

// want builds expected lists (nil is an empty list).
func want(created, modified, deleted []string) lists {
	e := func(l []string) []string {
		if l == nil {
			return []string{}
		}
		return l
	}
	return lists{e(created), e(modified), e(deleted)}
}

// during begins a run in dir of root, calls run, and finishes it.
func during(t *testing.T, k *Keeper, root, dir string, run func()) *Summary {
	t.Helper()
	m := k.Begin(root, dir)
	run()
	s := m.Finish()
	require.NotNil(t, s)
	return s
}

// TestKeeperScenarios makes each kind of change during a run, in both modes,
// and checks the summary lists exactly it.
func TestKeeperScenarios(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks and permissions are Unix-specific here")
	}
	base := map[string]string{
		"a.txt": "alpha", "b.txt": "beta", "keep.txt": "same",
		"dir/": "", "dir/x.txt": "x", "dir/sub/y.txt": "y",
		"link":                      "->a.txt",
		"node_modules/pkg/index.js": "module.exports = 1\n",
		".git/HEAD":                 "ref: refs/heads/main\n",
	}
	cases := []struct {
		name string
		run  func(t *testing.T, root string)
		want lists
	}{
		{"nothing", func(*testing.T, string) {}, want(nil, nil, nil)},
		{"create under a gitignored-like directory", func(t *testing.T, root string) {
			write(t, root, map[string]string{"node_modules/pkg/new.js": "n"})
		}, want([]string{"node_modules/pkg/new.js"}, nil, nil)},
		{"modify, same size, at once (racy)", func(t *testing.T, root string) {
			write(t, root, map[string]string{"a.txt": "ALPHA"})
		}, want(nil, []string{"a.txt"}, nil)},
		{"touch only", func(t *testing.T, root string) {
			now := time.Now().Add(time.Hour)
			require.NoError(t, os.Chtimes(filepath.Join(root, "keep.txt"), now, now))
		}, want(nil, nil, nil)},
		{"rewrite with the same content", func(t *testing.T, root string) {
			write(t, root, map[string]string{"keep.txt": "same"})
		}, want(nil, nil, nil)},
		{"delete a file", func(t *testing.T, root string) {
			require.NoError(t, os.Remove(filepath.Join(root, "b.txt")))
		}, want(nil, nil, []string{"b.txt"})},
		{"rename a file", func(t *testing.T, root string) {
			require.NoError(t, os.Rename(filepath.Join(root, "b.txt"), filepath.Join(root, "c.txt")))
		}, want([]string{"c.txt"}, nil, []string{"b.txt"})},
		{"rename a directory", func(t *testing.T, root string) {
			require.NoError(t, os.Rename(filepath.Join(root, "dir"), filepath.Join(root, "moved")))
		}, want([]string{"moved/", "moved/sub/", "moved/sub/y.txt", "moved/x.txt"}, nil, []string{"dir/", "dir/sub/", "dir/sub/y.txt", "dir/x.txt"})},
		{"rename a directory, then change inside it", func(t *testing.T, root string) {
			require.NoError(t, os.Rename(filepath.Join(root, "dir"), filepath.Join(root, "moved")))
			write(t, root, map[string]string{"moved/sub/y.txt": "changed", "moved/sub/z.txt": "z"})
		}, want([]string{"moved/", "moved/sub/", "moved/sub/y.txt", "moved/sub/z.txt", "moved/x.txt"}, nil, []string{"dir/", "dir/sub/", "dir/sub/y.txt", "dir/x.txt"})},
		{"delete a tree", func(t *testing.T, root string) {
			require.NoError(t, os.RemoveAll(filepath.Join(root, "dir")))
		}, want(nil, nil, []string{"dir/", "dir/sub/", "dir/sub/y.txt", "dir/x.txt"})},
		{"new tree", func(t *testing.T, root string) {
			write(t, root, map[string]string{"new/a/b/c.txt": "c"})
		}, want([]string{"new/", "new/a/", "new/a/b/", "new/a/b/c.txt"}, nil, nil)},
		{"file becomes a directory", func(t *testing.T, root string) {
			require.NoError(t, os.Remove(filepath.Join(root, "b.txt")))
			write(t, root, map[string]string{"b.txt/inner": "i"})
		}, want([]string{"b.txt/inner"}, []string{"b.txt/"}, nil)},
		{"symlink retargeted, not followed", func(t *testing.T, root string) {
			require.NoError(t, os.Remove(filepath.Join(root, "link")))
			require.NoError(t, os.Symlink("dir", filepath.Join(root, "link")))
		}, want(nil, []string{"link"}, nil)},
		{"symlink to a directory: its target's content is not listed twice", func(t *testing.T, root string) {
			require.NoError(t, os.Symlink("dir", filepath.Join(root, "dirlink")))
			write(t, root, map[string]string{"dir/x.txt": "X"})
		}, want([]string{"dirlink"}, []string{"dir/x.txt"}, nil)},
		{"chmod is not a content change", func(t *testing.T, root string) {
			require.NoError(t, os.Chmod(filepath.Join(root, "a.txt"), 0o600))
		}, want(nil, nil, nil)},
		{"inside .git is not listed", func(t *testing.T, root string) {
			write(t, root, map[string]string{".git/HEAD": "ref: refs/heads/other\n", ".git/objects/x": "o"})
		}, want(nil, nil, nil)},
	}
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			k := newTestKeeper(t, mode.noWatch)
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					root := tree(t, base)
					// The first run in a project waits for its first walk;
					// its files are then hashed in the background.
					during(t, k, root, root, func() {})
					require.NoError(t, k.Settle(root))
					s := during(t, k, root, root, func() { tc.run(t, root) })
					assert.Equal(t, tc.want, got(s))
					assert.False(t, s.Incomplete, s.Reason)
					assert.Equal(t, method, s.Method)
					require.NotNil(t, s.Cover)
					assert.Equal(t, !mode.noWatch, s.Cover.Watched)
				})
			}
		})
	}
}

// TestKeeperBeforeTheRunIsNotTheRuns: changes made before a run began, even
// when folded only after it began, are not listed; changes made after the
// previous run ended and before this one are not either.
func TestKeeperBeforeTheRunIsNotTheRuns(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			k := newTestKeeper(t, mode.noWatch)
			root := tree(t, map[string]string{"a": "a", "b": "b", "gone": "g"})
			during(t, k, root, root, func() {})
			write(t, root, map[string]string{"a": "edited by a person", "new-before": "n"})
			require.NoError(t, os.Remove(filepath.Join(root, "gone")))
			time.Sleep(3 * granularity) // the run starts clearly after
			s := during(t, k, root, root, func() { write(t, root, map[string]string{"b": "by the run"}) })
			assert.Equal(t, want(nil, []string{"b"}, nil), got(s))
		})
	}
}

// TestKeeperSubdirectory: a run in a subdirectory sees only changes there,
// named relative to it.
func TestKeeperSubdirectory(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			k := newTestKeeper(t, mode.noWatch)
			root := tree(t, map[string]string{"src/a.go": "a", "other/b": "b"})
			during(t, k, root, root, func() {})
			s := during(t, k, root, filepath.Join(root, "src"), func() {
				write(t, root, map[string]string{"src/new.go": "n", "other/c": "c"})
			})
			assert.Equal(t, want([]string{"new.go"}, nil, nil), got(s))
			assert.Equal(t, 2, s.Cover.Entries)
		})
	}
}

// TestKeeperConcurrentRuns: two overlapping runs each see the changes made
// during their own window, whichever finishes first.
func TestKeeperConcurrentRuns(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			k := newTestKeeper(t, mode.noWatch)
			root := tree(t, map[string]string{"f": "0"})
			during(t, k, root, root, func() {})
			a := k.Begin(root, root)
			write(t, root, map[string]string{"f": "1", "by-a": "a"})
			time.Sleep(3 * granularity)
			b := k.Begin(root, root)
			write(t, root, map[string]string{"f": "22", "by-b": "b"})
			sa := a.Finish()
			sb := b.Finish()
			assert.Equal(t, want([]string{"by-a", "by-b"}, []string{"f"}, nil), got(sa))
			assert.Equal(t, want([]string{"by-b"}, []string{"f"}, nil), got(sb))
		})
	}
}

// TestKeeperUnreadableDirectory: a directory the keeper cannot read is named
// in the cover and makes the summary incomplete; the rest is still listed.
func TestKeeperUnreadableDirectory(t *testing.T) {
	if runtime.GOOS == "windows" || os.Geteuid() == 0 {
		t.Skip("needs Unix permissions and a non-root user")
	}
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			k := newTestKeeper(t, mode.noWatch)
			root := tree(t, map[string]string{"secret/s": "s", "open/o": "o"})
			require.NoError(t, os.Chmod(filepath.Join(root, "secret"), 0))
			t.Cleanup(func() { os.Chmod(filepath.Join(root, "secret"), 0o755) })
			during(t, k, root, root, func() {})
			s := during(t, k, root, root, func() { write(t, root, map[string]string{"open/new": "n"}) })
			assert.Equal(t, want([]string{"open/new"}, nil, nil), got(s))
			assert.True(t, s.Incomplete)
			assert.Equal(t, []string{"secret/ (permission denied)"}, s.Cover.Skipped)
		})
	}
}

// TestKeeperPersistsAcrossRestarts: a keeper started later reads the index
// its predecessor saved, so the first run after a restart is summarised
// against it without waiting for a walk, and what changed while no keeper
// ran is not the run's.
func TestKeeperPersistsAcrossRestarts(t *testing.T) {
	state := t.TempDir()
	root := tree(t, map[string]string{"a": "a", "b": "b"})
	k1, err := NewKeeper(Options{StateDir: state})
	require.NoError(t, err)
	during(t, k1, root, root, func() {})
	require.NoError(t, k1.Close())

	write(t, root, map[string]string{"a": "changed while down", "c": "c"})
	time.Sleep(3 * granularity)

	k2, err := NewKeeper(Options{StateDir: state})
	require.NoError(t, err)
	defer k2.Close()
	s := during(t, k2, root, root, func() { write(t, root, map[string]string{"b": "by the run", "d": "d"}) })
	assert.Equal(t, want([]string{"d"}, []string{"b"}, nil), got(s))
	assert.False(t, s.Incomplete, s.Reason)
}

// TestKeeperIndexLocked: a second keeper of the same state directory does
// not take a project another keeper holds, yet still summarises it.
func TestKeeperIndexLocked(t *testing.T) {
	state := t.TempDir()
	root := tree(t, map[string]string{"a": "a"})
	k1, err := NewKeeper(Options{StateDir: state})
	require.NoError(t, err)
	defer k1.Close()
	during(t, k1, root, root, func() {})
	k2, err := NewKeeper(Options{StateDir: state})
	require.NoError(t, err)
	defer k2.Close()
	during(t, k2, root, root, func() {})
	k2.mu.Lock()
	p := k2.projects[root]
	k2.mu.Unlock()
	assert.Nil(t, p.lock, "the second keeper must not hold the lock")
	s := during(t, k2, root, root, func() { write(t, root, map[string]string{"n": "n"}) })
	assert.Equal(t, want([]string{"n"}, nil, nil), got(s))
}

// TestKeeperListCap: a list is capped and the summary says so.
func TestKeeperListCap(t *testing.T) {
	state := t.TempDir()
	k, err := NewKeeper(Options{StateDir: state, Limits: Limits{MaxListed: 2}})
	require.NoError(t, err)
	defer k.Close()
	root := tree(t, nil)
	during(t, k, root, root, func() {})
	s := during(t, k, root, root, func() { write(t, root, map[string]string{"1": "", "2": "", "3": ""}) })
	assert.Equal(t, []string{"1", "2"}, s.Created)
	assert.True(t, s.Incomplete)
	assert.Contains(t, s.Reason, "more than 2 entries")
}

// TestKeeperEntryLimit: beyond MaxEntries directories are not indexed and
// the cover names them.
func TestKeeperEntryLimit(t *testing.T) {
	k, err := NewKeeper(Options{StateDir: t.TempDir(), Limits: Limits{MaxEntries: 3}})
	require.NoError(t, err)
	defer k.Close()
	root := tree(t, map[string]string{"a/1": "", "a/2": "", "b/3": "", "b/4": ""})
	s := during(t, k, root, root, func() {})
	assert.True(t, s.Incomplete)
	assert.NotEmpty(t, s.Cover.Skipped)
	assert.Contains(t, s.Cover.Skipped[0], "over the limit of 3 entries")
}

// TestKeeperFinishIsIdempotentAndConcurrent: many runs finishing at once
// share folds, and each gets its summary.
func TestKeeperFinishIsIdempotentAndConcurrent(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			k := newTestKeeper(t, mode.noWatch)
			root := tree(t, nil)
			during(t, k, root, root, func() {})
			var wg sync.WaitGroup
			for i := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					dir := filepath.Join(root, "d"+string(rune('0'+i)))
					require.NoError(t, os.Mkdir(dir, 0o755))
					m := k.Begin(root, dir)
					require.NoError(t, os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644))
					s := m.Finish()
					assert.Same(t, s, m.Finish())
					assert.Equal(t, want([]string{"f"}, nil, nil), got(s))
				}()
			}
			wg.Wait()
		})
	}
}
