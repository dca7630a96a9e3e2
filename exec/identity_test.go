//go:build linux

package exec

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// Checks at the moment of use (directories and programs), tried as an
// agent would: the directory or program is swapped after it was checked.

// swapAttempts bounds every swap loop: enough interleavings to meet the
// race many times, few enough to stay quick under load.
const swapAttempts = 40

// identityProject makes a project with a subdirectory "sub" and a
// directory "outside" next to it (outside the project), and returns the
// project root, sub and outside.
func identityProject(t *testing.T) (root, sub, outside string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	root = filepath.Join(base, "project")
	sub = filepath.Join(root, "sub")
	outside = filepath.Join(base, "outside")
	require.NoError(t, os.MkdirAll(sub, 0o755))
	require.NoError(t, os.MkdirAll(outside, 0o755))
	return root, sub, outside
}

// validateIn validates argv with cwd in root.
func validateIn(t *testing.T, e *Executor, root, cwd string, argv ...string) Command {
	t.Helper()
	cmd, err := Validate(Proposal{Argv: argv, ProjectRoot: root, Cwd: cwd}, PathFromEnv(e.cfg.Env))
	require.NoError(t, err)
	return cmd
}

// requireRefused checks that Start refused cmd with code and ran nothing.
func requireRefused(t *testing.T, e *Executor, cmd Command, code string) Record {
	t.Helper()
	r, err := e.Start(cmd, Meta{})
	var ref *Refusal
	require.ErrorAs(t, err, &ref)
	assert.Equal(t, code, ref.Code)
	rec := waitRun(t, r)
	assert.Equal(t, StateFailedToStart, rec.State)
	assert.Zero(t, rec.PID, "nothing may have started")
	return rec
}

// TestCwdSwappedAfterApprovalIsRefused: the card showed "sub"; while the
// person read it, sub became a symlink to a folder outside the project
// (or another directory). Start refuses and says so; nothing runs.
func TestCwdSwappedAfterApprovalIsRefused(t *testing.T) {
	e, _ := testExecutor(t, Config{})
	for _, swap := range []string{"symlink out", "other directory", "removed"} {
		t.Run(swap, func(t *testing.T) {
			root, sub, outside := identityProject(t)
			cmd := validateIn(t, e, root, "sub", "touch", "ran")
			require.NoError(t, os.Rename(sub, sub+".orig"))
			switch swap {
			case "symlink out":
				require.NoError(t, os.Symlink(outside, sub))
			case "other directory":
				require.NoError(t, os.Mkdir(sub, 0o755))
			}
			rec := requireRefused(t, e, cmd, CodeCwdChanged)
			assert.Contains(t, rec.Error, `"sub"`)
			assert.NoFileExists(t, filepath.Join(outside, "ran"))
			assert.NoFileExists(t, filepath.Join(sub, "ran"))
		})
	}
}

// TestProjectRootSwappedIsRefused: the project root itself is replaced.
func TestProjectRootSwappedIsRefused(t *testing.T) {
	e, _ := testExecutor(t, Config{})
	root, _, outside := identityProject(t)
	cmd := validateIn(t, e, root, "", "touch", "ran")
	require.NoError(t, os.Rename(root, root+".orig"))
	require.NoError(t, os.Symlink(outside, root))
	requireRefused(t, e, cmd, CodeCwdChanged)
	assert.NoFileExists(t, filepath.Join(outside, "ran"))
}

// exchange atomically swaps the entries a and b (renameat2
// RENAME_EXCHANGE).
func exchange(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}

// TestCwdSwapLoop: while an agent swaps "sub" with a symlink to a folder
// outside the project as fast as it can (atomic exchange), commands in sub
// are validated and started. Each is refused or runs in sub itself:
// never outside.
func TestCwdSwapLoop(t *testing.T) {
	e, _ := testExecutor(t, Config{})
	root, sub, outside := identityProject(t)
	link := filepath.Join(root, "link")
	require.NoError(t, os.Symlink(outside, link))
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			_ = exchange(sub, link)
		}
	}()
	ran, refused := 0, 0
	for range swapAttempts {
		cmd, err := Validate(Proposal{Argv: []string{"pwd", "-P"}, ProjectRoot: root, Cwd: "sub"}, PathFromEnv(e.cfg.Env))
		if err != nil {
			refused++
			continue
		}
		r, err := e.Start(cmd, Meta{})
		if err != nil {
			refused++
			continue
		}
		rec := waitRun(t, r)
		require.Equal(t, StateExited, rec.State, rec.Error)
		pwd := strings.TrimSpace(string(readStream(t, r, Stdout)))
		// The directory that was sub may be named link at this moment:
		// what matters is that it is inside the project, never outside.
		assert.True(t, strings.HasPrefix(pwd, root+"/"), "ran in %s, outside the project %s", pwd, root)
		ran++
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("%d runs in the project, %d refused", ran, refused)
}

// writeScript writes an executable script that prints what.
func writeScript(t *testing.T, path, what string) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte("#!/bin/sh\necho "+what+"\n"), 0o755))
}

// TestProgramChangedAfterApprovalIsRefused: a program inside the project is
// replaced, rewritten in place (same size, old modification time put
// back), or a symlink to it retargeted, after it was checked. Start
// refuses and says so; nothing runs.
func TestProgramChangedAfterApprovalIsRefused(t *testing.T) {
	e, _ := testExecutor(t, Config{})
	for _, change := range []string{"replaced", "rewritten in place", "symlink retargeted", "removed"} {
		t.Run(change, func(t *testing.T) {
			root, _, _ := identityProject(t)
			tool := filepath.Join(root, "tool")
			writeScript(t, filepath.Join(root, "good"), "good")
			writeScript(t, filepath.Join(root, "evil"), "evil")
			argv0 := tool
			if change == "symlink retargeted" {
				require.NoError(t, os.Symlink("good", tool))
			} else {
				writeScript(t, tool, "good")
			}
			cmd := validateIn(t, e, root, "", argv0)
			assert.NotEmpty(t, cmd.ProgramSHA256, "a program inside the project is bound by content")
			fi, err := os.Stat(tool)
			require.NoError(t, err)
			switch change {
			case "replaced":
				require.NoError(t, os.Rename(filepath.Join(root, "evil"), tool))
			case "rewritten in place":
				writeScript(t, tool, "evil")
				require.NoError(t, os.Chtimes(tool, fi.ModTime(), fi.ModTime()))
			case "symlink retargeted":
				require.NoError(t, os.Remove(tool))
				require.NoError(t, os.Symlink("evil", tool))
			case "removed":
				require.NoError(t, os.Remove(tool))
			}
			rec := requireRefused(t, e, cmd, CodeProgramChanged)
			assert.Contains(t, rec.Error, tool)
		})
	}
}

// TestProgramChangedJustBeforeExecIsRefused: the host's check at Start
// passes, and the program changes before the supervisor forks: the
// supervisor's own check refuses it.
func TestProgramChangedJustBeforeExecIsRefused(t *testing.T) {
	e, _ := testExecutor(t, Config{})
	root, _, _ := identityProject(t)
	tool := filepath.Join(root, "tool")
	writeScript(t, tool, "good")
	writeScript(t, filepath.Join(root, "evil"), "evil")
	cmd := validateIn(t, e, root, "", tool)
	testHookVerified = func() { require.NoError(t, os.Rename(filepath.Join(root, "evil"), tool)) }
	defer func() { testHookVerified = nil }()
	requireRefused(t, e, cmd, CodeProgramChanged)
}

// TestValidateBindsIdentity: Validate records the directory's and the
// program's identity and resolves symlinks in the program's path.
func TestValidateBindsIdentity(t *testing.T) {
	e, _ := testExecutor(t, Config{})
	root, sub, _ := identityProject(t)
	writeScript(t, filepath.Join(root, "real"), "x")
	require.NoError(t, os.Symlink("real", filepath.Join(root, "alias")))
	cmd := validateIn(t, e, root, "sub", "../alias")
	assert.Equal(t, filepath.Join(root, "real"), cmd.ExecutableResolved)
	assert.NotZero(t, cmd.DirID.Ino)
	assert.NotZero(t, cmd.RootID.Ino)
	var st unix.Stat_t
	require.NoError(t, unix.Stat(sub, &st))
	assert.Equal(t, st.Ino, cmd.DirID.Ino)
	sys := validateIn(t, e, root, "", "sh")
	assert.Empty(t, sys.ProgramSHA256, "a program outside the project is bound by identity only")
	assert.NotZero(t, sys.ProgramID.Ino)
}
