//go:build windows

package procspec

import (
	"os"
	"syscall"
)

// FileIDOf returns the identity of the open file f: volume serial number,
// file index, size and last write time (GetFileInformationByHandle).
func FileIDOf(f *os.File) (FileID, error) {
	var d syscall.ByHandleFileInformation
	if err := syscall.GetFileInformationByHandle(syscall.Handle(f.Fd()), &d); err != nil {
		return FileID{}, &os.PathError{Op: "GetFileInformationByHandle", Path: f.Name(), Err: err}
	}
	return FileID{
		Dev:     uint64(d.VolumeSerialNumber),
		Ino:     uint64(d.FileIndexHigh)<<32 | uint64(d.FileIndexLow),
		Size:    int64(d.FileSizeHigh)<<32 | int64(d.FileSizeLow),
		MtimeNS: d.LastWriteTime.Nanoseconds(),
	}, nil
}

// StatFileID returns the identity of the file at path, symlinks followed.
func StatFileID(path string) (FileID, error) {
	f, err := os.Open(path)
	if err != nil {
		return FileID{}, err
	}
	defer f.Close()
	return FileIDOf(f)
}

// FileIDFromInfo returns no identity on Windows: an os.FileInfo does not
// hold the volume serial and file index (FileIDOf reads them).
func FileIDFromInfo(os.FileInfo) (FileID, bool) { return FileID{}, false }
