package prefs

import (
	"fmt"
	"os"
	"path/filepath"
)

// WriteFileAtomic replaces the file at path with data so that a reader, or a
// crash at any moment, sees either the old content or the new, never a mix:
// it writes a temporary file in the same directory, syncs it to disk, renames
// it over path and, on Unix, syncs the directory so the rename itself is
// durable. The new file gets perm (before the umask); a missing directory is
// an error (create it first). On failure the temporary file is removed and
// path is left as it was. On Windows the rename is MoveFileEx with
// MOVEFILE_REPLACE_EXISTING; a reader holding the file open may make it fail.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	tmpName, err := writeTempBeside(path, data, perm)
	if err != nil {
		return err
	}
	return commitTemp(tmpName, path)
}

// writeTempBeside writes data to a new, synced temporary file in path's
// directory and returns its name. The caller renames it with commitTemp or
// removes it.
func writeTempBeside(path string, data []byte, perm os.FileMode) (string, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return "", fmt.Errorf("writing %s: cannot create a temporary file beside it: %w", path, err)
	}
	tmpName := tmp.Name()
	fail := func(what string, err error) (string, error) {
		tmp.Close()
		os.Remove(tmpName)
		return "", fmt.Errorf("writing %s: %s: %w", path, what, err)
	}
	if err := tmp.Chmod(perm); err != nil {
		return fail(fmt.Sprintf("cannot set mode %v", perm), err)
	}
	if _, err := tmp.Write(data); err != nil {
		return fail("writing the temporary file failed", err)
	}
	if err := tmp.Sync(); err != nil {
		return fail("syncing the temporary file to disk failed", err)
	}
	if err := tmp.Close(); err != nil {
		return fail("closing the temporary file failed", err)
	}
	return tmpName, nil
}

// commitTemp renames the temporary file tmpName over path and makes the
// rename durable; on failure it removes tmpName.
func commitTemp(tmpName, path string) error {
	if err := os.Rename(tmpName, path); err != nil {
		os.Remove(tmpName)
		return fmt.Errorf("writing %s: cannot replace it: %w", path, err)
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("writing %s: the file was replaced but syncing its directory failed: %w", path, err)
	}
	return nil
}
