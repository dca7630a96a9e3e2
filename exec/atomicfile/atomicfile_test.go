package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/agentgate/agentgate/exec/platformtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteFileReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	require.NoError(t, WriteFile(path, []byte("one"), 0o640))
	require.NoError(t, WriteFile(path, []byte("two"), 0o600))
	data, err := ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "two", string(data))
	if runtime.GOOS != "windows" {
		fi, err := os.Stat(path)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file is left behind")

	err = WriteFile(filepath.Join(dir, "missing", "f"), []byte("x"), 0o600)
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.Contains(t, err.Error(), filepath.Join(dir, "missing", "f"))
}

func TestOpenMissingIsNotExist(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	retried := 0
	testHookTransient = func(error) { retried++ }
	defer func() { testHookTransient = nil }()
	_, err := Open(missing)
	assert.ErrorIs(t, err, fs.ErrNotExist)
	var pe *fs.PathError
	assert.True(t, errors.As(err, &pe), "%T", err)
	_, err = ReadFile(missing)
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.Zero(t, retried, "a missing file is not retried")
}

// TestRenameWhileOpen renames files that this package's reader and
// appender hold open (the audit log's rotation while another process
// appends or follows): the rename succeeds at once, on Windows too, and the
// holders keep reading and writing the file they opened.
func TestRenameWhileOpen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	require.NoError(t, WriteFile(path, []byte("old"), 0o600))
	r, err := Open(path)
	require.NoError(t, err)
	defer r.Close()
	require.NoError(t, Rename(path, path+".1"))
	buf := make([]byte, 8)
	n, err := r.Read(buf)
	require.NoError(t, err)
	assert.Equal(t, "old", string(buf[:n]), "the reader keeps the file it opened")

	log := filepath.Join(dir, "log")
	a, err := OpenAppend(log, 0o600)
	require.NoError(t, err)
	defer a.Close()
	_, err = a.WriteString("one\n")
	require.NoError(t, err)
	require.NoError(t, Rename(log, log+".1"))
	_, err = a.WriteString("two\n")
	require.NoError(t, err)
	require.NoError(t, a.Sync())
	data, err := ReadFile(log + ".1")
	require.NoError(t, err)
	assert.Equal(t, "one\ntwo\n", string(data), "the appender follows its file to its new name")
}

// TestReplaceWhileOpen replaces a file that this package's reader holds
// open: the replacement succeeds at once and the reader keeps the old
// content. Windows allows it through POSIX rename semantics (Windows 10
// 1709 and later, NTFS), which Wine 8 lacks: there the replacement waits
// for the reader to close (TestReplaceWaitsForAnotherReader).
func TestReplaceWhileOpen(t *testing.T) {
	platformtest.RequirePOSIXRename(t)
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, WriteFile(path, []byte("old"), 0o600))
	r, err := Open(path)
	require.NoError(t, err)
	defer r.Close()
	require.NoError(t, WriteFile(path, []byte("new"), 0o600))
	buf := make([]byte, 8)
	n, err := r.Read(buf)
	require.NoError(t, err)
	assert.Equal(t, "old", string(buf[:n]), "the reader keeps the file it opened")
	data, err := ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "new", string(data))
}

// TestOpenAppendAppends appends through several handles at once (as
// several processes do): no write overwrites another.
func TestOpenAppendAppends(t *testing.T) {
	platformtest.RequireAtomicAppends(t)
	path := filepath.Join(t.TempDir(), "log")
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, err := OpenAppend(path, 0o600)
			if !assert.NoError(t, err) {
				return
			}
			defer f.Close()
			for range 50 {
				_, err := f.WriteString(strings.Repeat(string(rune('a'+i)), 9) + "\n")
				assert.NoError(t, err)
			}
		}()
	}
	wg.Wait()
	data, err := ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	assert.Len(t, lines, 200, "no write overwrote another")
	for _, l := range lines {
		assert.Len(t, l, 9)
		assert.Equal(t, strings.Repeat(l[:1], 9), l)
	}
	if runtime.GOOS != "windows" {
		fi, err := os.Stat(path)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	}
}

func TestWriteTempCommit(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	tmp, err := WriteTemp(path, []byte("x"), 0o644, false)
	require.NoError(t, err)
	assert.Equal(t, dir, filepath.Dir(tmp))
	assert.True(t, strings.HasPrefix(filepath.Base(tmp), ".f.tmp-"), tmp)
	require.NoError(t, Commit(tmp, path, false))
	assert.NoFileExists(t, tmp)
	data, err := ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "x", string(data))

	// A failed commit removes the temporary file.
	tmp, err = WriteTemp(path, []byte("y"), 0o600, true)
	require.NoError(t, err)
	require.NoError(t, os.Mkdir(filepath.Join(dir, "d"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "d", "inside"), nil, 0o600))
	assert.Error(t, Commit(tmp, filepath.Join(dir, "d"), true))
	assert.NoFileExists(t, tmp)
}

func TestRetryStopsOnSuccessAndOnOtherErrors(t *testing.T) {
	calls := 0
	assert.NoError(t, Retry(func() error { calls++; return nil }))
	assert.Equal(t, 1, calls)
	other := errors.New("not transient")
	calls = 0
	assert.Equal(t, other, Retry(func() error { calls++; return other }))
	assert.Equal(t, 1, calls)
}
