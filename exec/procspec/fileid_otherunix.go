//go:build unix && !linux && !darwin

package procspec

import (
	"os"
	"syscall"
)

// FileIDOf returns the identity of the open file f: device and inode from
// its stat buffer, size and modification time from os.FileInfo; the change
// time is not read on these systems (CtimeNS 0).
func FileIDOf(f *os.File) (FileID, error) {
	fi, err := f.Stat()
	if err != nil {
		return FileID{}, err
	}
	return fileIDFromInfo(fi), nil
}

// StatFileID returns the identity of the file at path, symlinks followed.
func StatFileID(path string) (FileID, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return FileID{}, err
	}
	return fileIDFromInfo(fi), nil
}

// fileIDFromInfo converts a FileInfo whose Sys is a *syscall.Stat_t.
func fileIDFromInfo(fi os.FileInfo) FileID {
	id := FileID{Size: fi.Size(), MtimeNS: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id.Dev, id.Ino = uint64(st.Dev), uint64(st.Ino)
	}
	return id
}

// FileIDFromInfo returns the identity an os.FileInfo holds (no change
// time here); ok is always true.
func FileIDFromInfo(fi os.FileInfo) (FileID, bool) { return fileIDFromInfo(fi), true }
