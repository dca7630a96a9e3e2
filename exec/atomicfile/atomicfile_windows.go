//go:build windows

package atomicfile

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/windows"
)

// transient reports whether err is what another process's short-lived
// handle causes: a sharing or lock violation, access denied (a rename over
// a file open without FILE_SHARE_DELETE), or a pending delete (the name of
// a file deleted while still open stays taken until its last handle
// closes).
func transient(err error) bool {
	var errno windows.Errno
	if !errors.As(err, &errno) {
		return false
	}
	switch errno {
	case windows.ERROR_SHARING_VIOLATION, windows.ERROR_LOCK_VIOLATION,
		windows.ERROR_ACCESS_DENIED, windows.ERROR_DELETE_PENDING:
		return true
	}
	return false
}

// rename renames oldpath to newpath, replacing newpath. Within one
// directory (every rename here: temporary files sit beside their target,
// rotated logs beside the log) it goes through os.Root, whose Rename asks
// for POSIX semantics (FILE_RENAME_POSIX_SEMANTICS: a target that others
// hold open with FILE_SHARE_DELETE is replaced all the same; Windows 10
// 1709 and later, on NTFS) and falls back to a classic rename where those
// are missing (FAT, Wine). Across directories it is os.Rename (MoveFileEx).
func rename(oldpath, newpath string) error {
	dir := filepath.Dir(newpath)
	if filepath.Dir(oldpath) != dir {
		return os.Rename(oldpath, newpath)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	defer root.Close()
	if err := root.Rename(filepath.Base(oldpath), filepath.Base(newpath)); err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: errors.Unwrap(err)}
	}
	return nil
}

// shareAll lets other handles read, write, rename and delete the file.
const shareAll = windows.FILE_SHARE_READ | windows.FILE_SHARE_WRITE | windows.FILE_SHARE_DELETE

// openRead opens name for reading with shareAll; the handle is not
// inherited by child processes.
func openRead(name string) (*os.File, error) {
	return createFile(name, "open", windows.GENERIC_READ, windows.OPEN_EXISTING, windows.FILE_ATTRIBUTE_NORMAL)
}

// appendAccess is what Go's os.OpenFile asks for with O_APPEND: every right
// of GENERIC_WRITE but FILE_WRITE_DATA, so that each write goes to the end.
const appendAccess = windows.FILE_APPEND_DATA | windows.FILE_WRITE_ATTRIBUTES | windows.FILE_WRITE_EA |
	windows.STANDARD_RIGHTS_WRITE | windows.SYNCHRONIZE

// openAppend opens name for appending with shareAll, creating it when
// missing (read-only when perm lacks the owner's write bit, as os.OpenFile
// does); the handle is not inherited by child processes.
func openAppend(name string, perm os.FileMode) (*os.File, error) {
	attrs := uint32(windows.FILE_ATTRIBUTE_NORMAL)
	if perm&0o200 == 0 {
		attrs = windows.FILE_ATTRIBUTE_READONLY
	}
	return createFile(name, "open", appendAccess, windows.OPEN_ALWAYS, attrs)
}

// createFile is CreateFile with shareAll and no security attributes (so the
// handle is not inheritable), as an *os.File; errors are *fs.PathError.
func createFile(name, op string, access, disposition, attrs uint32) (*os.File, error) {
	p, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return nil, &os.PathError{Op: op, Path: name, Err: err}
	}
	h, err := windows.CreateFile(p, access, shareAll, nil, disposition, attrs, 0)
	if err != nil {
		return nil, &os.PathError{Op: op, Path: name, Err: err}
	}
	return os.NewFile(uintptr(h), name), nil
}

// SyncDir does nothing on Windows: a directory cannot be opened for
// FlushFileBuffers, and NTFS journals the rename (MoveFileEx) itself.
func SyncDir(string) error { return nil }
