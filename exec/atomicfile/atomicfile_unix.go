//go:build !windows

package atomicfile

import (
	"os"
)

// transient is false: on Unix an open handle never blocks a rename, so
// nothing is retried.
func transient(error) bool { return false }

// rename is os.Rename.
func rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }

// openRead is os.Open.
func openRead(name string) (*os.File, error) { return os.Open(name) }

// openAppend is os.OpenFile with O_WRONLY|O_APPEND|O_CREATE.
func openAppend(name string, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, perm)
}

// SyncDir fsyncs the directory dir, so that a rename into it survives a
// crash.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
