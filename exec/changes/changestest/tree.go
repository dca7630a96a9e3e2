// Package changestest provides a realistic large project for tests and
// benchmarks: a git work tree of 100,000 files, 20,000 committed under src/
// and 80,000 under a gitignored node_modules/ (an ordinary JavaScript
// project). It is generated once and cached outside the clone, under
// ${XDG_CACHE_HOME:-$HOME/.cache}/agentgate-test/ (AGENTGATE_TEST_CACHE
// overrides the directory), and shared by every test process through a lock.
package changestest

import (
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/gofrs/flock"
)

// The generated tree's shape.
const (
	// SrcFiles are committed, under src/.
	SrcFiles = 20_000
	// NodeModulesFiles are gitignored, under node_modules/.
	NodeModulesFiles = 80_000
	// Files is every file of the tree: the two above, .gitignore and
	// package.json (besides .git).
	Files = SrcFiles + NodeModulesFiles + 2
	// version names the cache entry; bump it when the shape changes.
	version = "tree100k-v1"
)

// Project is a project benchmarks and tests run in.
type Project struct {
	// Name names it in sub-benchmark names: "empty" or "tree100k".
	Name string
	// Root returns its root (symlinks resolved), made or found for tb; the
	// tree is shared read-only (Tree with exclusive false).
	Root func(tb testing.TB) string
}

// Projects are the two projects every executor, bridge and MCP benchmark
// runs in: an empty project and the 100,000-file tree. The empty project is
// a git repository as `git init` makes it, holding no file: the two then
// differ only in the files of the work tree, what these benchmarks compare.
// (A bare empty directory would also leave out what every run pays for a
// real repository's .git/config and .git/hooks: confinement makes them
// read-only for the run, docs/lifetime.md.)
var Projects = []Project{
	{"empty", func(tb testing.TB) string {
		root, err := filepath.EvalSymlinks(tb.TempDir())
		if err != nil {
			tb.Fatal(err)
		}
		if err := git(root, "init", "-q"); err != nil {
			tb.Fatal(err)
		}
		return root
	}},
	{"tree100k", func(tb testing.TB) string { return Tree(tb, false) }},
}

// CacheDir returns the directory cached test fixtures live in.
func CacheDir() (string, error) {
	if d := os.Getenv("AGENTGATE_TEST_CACHE"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "agentgate-test"), nil
}

// Tree returns the root of the 100,000-file project (symlinks resolved),
// generating it first if the cache has none. The tree is shared: with
// exclusive false the caller must not change it (other test processes may
// be reading it at the same time); with exclusive true it holds the tree
// alone until the end of the test and must undo what it changed. Either
// way the lock is released at the end of the test.
func Tree(tb testing.TB, exclusive bool) string {
	tb.Helper()
	cache, err := CacheDir()
	if err != nil {
		tb.Fatalf("changestest: no cache directory: %v", err)
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		tb.Fatalf("changestest: %v", err)
	}
	lock := flock.New(filepath.Join(cache, version+".lock"))
	if err := lock.Lock(); err != nil {
		tb.Fatalf("changestest: locking the tree: %v", err)
	}
	root := filepath.Join(cache, version)
	if _, err := os.Stat(filepath.Join(root, ".complete")); err != nil {
		tb.Logf("changestest: generating a %d-file project in %s (once)", Files, root)
		if err := generate(root); err != nil {
			lock.Unlock()
			tb.Fatalf("changestest: generating the tree: %v", err)
		}
	}
	if !exclusive {
		// Held shared from here: other readers may share it; a writer waits.
		lock.Unlock()
		if err := lock.RLock(); err != nil {
			tb.Fatalf("changestest: locking the tree: %v", err)
		}
	}
	tb.Cleanup(func() { lock.Unlock() })
	project := filepath.Join(root, "project")
	if resolved, err := filepath.EvalSymlinks(project); err == nil {
		project = resolved
	}
	return project
}

// generate writes the tree into a temporary directory beside root, commits
// src/ (and the top-level files) with git, and renames it into place.
func generate(root string) error {
	tmp := root + fmt.Sprintf(".tmp-%d", os.Getpid())
	os.RemoveAll(tmp)
	os.RemoveAll(root)
	project := filepath.Join(tmp, "project")
	files := map[string]string{
		".gitignore":   "node_modules/\n",
		"package.json": `{"name":"big","version":"1.0.0","private":true}` + "\n",
	}
	// src/: 50 modules × 20 packages × 20 files.
	for i := range SrcFiles {
		pkg := i / 20
		files[fmt.Sprintf("src/mod%02d/pkg%04d/file%02d.js", pkg/20, pkg, i%20)] = fmt.Sprintf("// src %d\nexport const value%d = %d;\n", i, i, i)
	}
	// node_modules/: 2,000 packages × 4 directories × 10 files.
	for i := range NodeModulesFiles {
		pkg, dir := i/40, (i/10)%4
		files[fmt.Sprintf("node_modules/pkg%04d/lib%d/f%d.js", pkg, dir, i%10)] = fmt.Sprintf("module.exports = %d;\n", i)
	}
	if err := writeAll(project, files); err != nil {
		return err
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "generated"}} {
		if err := git(project, args...); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, ".complete"), nil, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, root)
}

// git runs git with args in dir, with no system or global configuration.
func git(dir string, args ...string) error {
	cmd := osexec.Command("git", append([]string{"-c", "user.name=agentgate test", "-c", "user.email=test@agentgate.invalid",
		"-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git %v: %v: %s", args, err, out)
	}
	return nil
}

// writeAll writes files (relative slash paths → content) under dir, with a
// few goroutines.
func writeAll(dir string, files map[string]string) error {
	dirs := map[string]bool{}
	for name := range files {
		dirs[filepath.Dir(filepath.Join(dir, filepath.FromSlash(name)))] = true
	}
	for d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	jobs := make(chan string)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name := range jobs {
				if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), []byte(files[name]), 0o644); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		}()
	}
	for name := range files {
		jobs <- name
	}
	close(jobs)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

// settleAttempts is how many times Settle waits for an index.
const settleAttempts = 5

// Settle waits until tracker has indexed and hashed the project at root
// (its Settle), trying again when one wait ends first: each is bounded by
// the keeper's own limit (2 minutes), and the first hash of the
// 100,000-file tree reads about 440 MB, which from a cold page cache (after
// a CI run here) took longer than that. It fails tb after settleAttempts.
func Settle(tb testing.TB, tracker interface{ Settle(string) error }, root string) {
	tb.Helper()
	var err error
	for range settleAttempts {
		if err = tracker.Settle(root); err == nil {
			return
		}
	}
	tb.Fatalf("%v (%d times)", err, settleAttempts)
}
