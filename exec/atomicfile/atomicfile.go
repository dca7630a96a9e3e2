// Package atomicfile replaces files so that readers see the old content or
// the new, never a mix, and reads them so that a replacement can proceed
// while they are read — on Windows too, where an open file normally blocks
// renaming over it.
//
// Writers: WriteFile, or WriteTemp then Commit when the caller checks
// something between the two (prefs does, to keep a concurrent hand edit).
// Readers and long-lived handles: Open, ReadFile, OpenAppend.
//
// On Unix these are the usual calls (a temporary file, fsync, rename(2), a
// directory fsync; os.Open). On Windows, a rename over a file fails while
// any process holds that file open without FILE_SHARE_DELETE (os.Open does
// not share delete), and virus scanners, indexers and editors open files
// briefly all the time. So there:
//   - Open, ReadFile and OpenAppend open with FILE_SHARE_READ,
//     FILE_SHARE_WRITE and FILE_SHARE_DELETE, so that agentgate's own
//     readers and appenders never block a replacement or a rotation;
//   - Commit and Rename, and the opens, retry for up to RetryFor on a
//     sharing violation, a lock violation, access denied or a pending
//     delete — what another process's short-lived handle causes — and
//     then return the last error.
package atomicfile

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"
)

// RetryFor bounds how long a Windows rename or open keeps retrying while
// another process's handle is in the way (the figure cmd/go uses for the
// same problem). On Unix nothing is retried.
const RetryFor = 2 * time.Second

// WriteFile replaces the file at path with data durably: it writes a
// temporary file in the same directory with mode perm (before the umask;
// on Windows only the read-only bit means anything), syncs it, renames it
// over path (Rename) and syncs the directory (SyncDir). A missing directory
// is an error. On failure the temporary file is removed and path is left as
// it was.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	tmp, err := WriteTemp(path, data, perm, true)
	if err != nil {
		return err
	}
	return Commit(tmp, path, true)
}

// WriteTemp writes data to a new temporary file beside path (same
// directory, name "."+base+".tmp-*"), with mode perm, synced to disk when
// durable, and closed; it returns the file's name for Commit. On failure
// nothing is left behind.
func WriteTemp(path string, data []byte, perm os.FileMode, durable bool) (string, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return "", fmt.Errorf("writing %s: cannot create a temporary file beside it: %w", path, err)
	}
	name := tmp.Name()
	fail := func(what string, err error) (string, error) {
		tmp.Close()
		os.Remove(name)
		return "", fmt.Errorf("writing %s: %s: %w", path, what, err)
	}
	if perm != 0o600 { // os.CreateTemp's mode already
		if err := tmp.Chmod(perm); err != nil {
			return fail(fmt.Sprintf("cannot set mode %v", perm), err)
		}
	}
	if _, err := tmp.Write(data); err != nil {
		return fail("writing the temporary file failed", err)
	}
	if durable {
		if err := tmp.Sync(); err != nil {
			return fail("syncing the temporary file to disk failed", err)
		}
	}
	if err := tmp.Close(); err != nil {
		return fail("closing the temporary file failed", err)
	}
	return name, nil
}

// Commit renames the temporary file tmp (from WriteTemp) over path with
// Rename; on failure it removes tmp. With durable it then syncs the
// directory (SyncDir) so that the rename survives a crash; a caller
// committing several files of one directory may pass false and call
// SyncDir once.
func Commit(tmp, path string, durable bool) error {
	if err := Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: cannot replace it: %w", path, err)
	}
	if !durable {
		return nil
	}
	if err := SyncDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("writing %s: the file was replaced but syncing its directory failed: %w", path, err)
	}
	return nil
}

// Rename is os.Rename (replacing newpath if it exists) that, on Windows,
// retries for up to RetryFor while another process's handle on either file
// is in the way; see the package comment.
func Rename(oldpath, newpath string) error {
	return Retry(func() error { return rename(oldpath, newpath) })
}

// ReadFile reads the whole file at name; see Open.
func ReadFile(name string) ([]byte, error) {
	f, err := Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// Open opens name for reading. On Windows the file may be renamed, replaced
// or deleted while the handle is open (FILE_SHARE_DELETE), and the open
// retries for up to RetryFor on the transient errors of the package
// comment. Errors are *fs.PathError; a missing file satisfies
// errors.Is(err, fs.ErrNotExist) and is not retried.
func Open(name string) (*os.File, error) {
	var f *os.File
	err := Retry(func() (err error) {
		f, err = openRead(name)
		return err
	})
	return f, err
}

// OpenAppend opens name for appending, creating it with mode perm if it is
// missing: every write goes to the end of the file, whatever other
// appenders wrote. On Windows the file may be renamed (rotated) or deleted
// while the handle is open (FILE_SHARE_DELETE), and the open retries as
// Open does.
func OpenAppend(name string, perm os.FileMode) (*os.File, error) {
	var f *os.File
	err := Retry(func() (err error) {
		f, err = openAppend(name, perm)
		return err
	})
	return f, err
}

// testHookTransient, when a test sets it, is called with each transient
// error before retry sleeps.
var testHookTransient func(error)

// Retry runs op, a rename or open, until it succeeds, fails with an error
// other than those another process's short-lived handle causes on Windows
// (see the package comment), or RetryFor has passed, sleeping between
// attempts with a randomised backoff from 1 ms doubling up to 100 ms. It
// returns op's last error. On Unix it runs op once. For callers that rename
// or open by other means than this package's (os.Root, descriptors).
func Retry(op func() error) error {
	var deadline time.Time
	backoff := time.Millisecond
	for {
		err := op()
		if err == nil || !transient(err) {
			return err
		}
		if testHookTransient != nil {
			testHookTransient(err)
		}
		now := time.Now()
		if deadline.IsZero() {
			deadline = now.Add(RetryFor)
		} else if now.After(deadline) {
			return err
		}
		time.Sleep(backoff/2 + rand.N(backoff/2+1))
		backoff = min(2*backoff, 100*time.Millisecond)
	}
}
