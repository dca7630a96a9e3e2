//go:build unix

package wire

import (
	"fmt"
	"os"
	"syscall"
)

// accountLocalAppData is Windows' local application data folder: none here.
func accountLocalAppData() string { return "" }

// CheckPrivateDir returns nil when dir is a directory (not a symlink) owned by
// the current user with no group or other permission bits; otherwise an
// error (wrapping errNotPrivate for a directory that exists but is not
// private) that names the directory, what is wrong and what to do.
func CheckPrivateDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("check the socket directory: %w", err)
	}
	return checkPrivateInfo(dir, fi)
}

// checkPrivateInfo is CheckPrivateDir's check of dir's Lstat result fi.
func checkPrivateInfo(dir string, fi os.FileInfo) error {
	if fi.Mode()&os.ModeSymlink != 0 || !fi.IsDir() {
		return fmt.Errorf("%w: %s is not a directory (a symlink or a file); remove it and start agentgate again", errNotPrivate, dir)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("%w: cannot read the owner of %s", errNotPrivate, dir)
	}
	if int(st.Uid) != os.Getuid() {
		return fmt.Errorf("%w: %s belongs to uid %d, not to you (uid %d); someone else may be waiting for your agents there — remove it as its owner or set AGENTGATE_SOCKET", errNotPrivate, dir, st.Uid, os.Getuid())
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("%w: %s has mode %04o, which lets other users in; run chmod 700 %s", errNotPrivate, dir, perm, dir)
	}
	return nil
}
