//go:build darwin

package procspec

import (
	"os"
	"syscall"
)

// FileIDOf returns the identity of the open file f (fstat).
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

// fileIDFromStat converts a stat buffer.
func fileIDFromStat(st *syscall.Stat_t) FileID {
	return FileID{Dev: uint64(st.Dev), Ino: st.Ino, Size: st.Size,
		MtimeNS: st.Mtimespec.Nano(), CtimeNS: st.Ctimespec.Nano()}
}
