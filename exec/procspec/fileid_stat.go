//go:build linux || darwin

package procspec

import (
	"os"
	"syscall"
)

// FileIDOf returns the identity of the open file f (fstat). On Linux an
// O_PATH descriptor is enough.
func FileIDOf(f *os.File) (FileID, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return FileID{}, &os.PathError{Op: "fstat", Path: f.Name(), Err: err}
	}
	return fileIDFromStat(&st), nil
}

// StatFileID returns the identity of the file at path, symlinks followed.
func StatFileID(path string) (FileID, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return FileID{}, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	return fileIDFromStat(&st), nil
}

// FileIDFromInfo returns the identity an os.FileInfo of Stat or Lstat
// holds, without another system call; ok is false when it holds none.
func FileIDFromInfo(fi os.FileInfo) (FileID, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return FileID{}, false
	}
	return fileIDFromStat(st), true
}
