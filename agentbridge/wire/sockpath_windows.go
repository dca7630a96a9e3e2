//go:build windows

package wire

import (
	"fmt"
	"os"

	"golang.org/x/sys/windows"
)

// accountLocalAppData returns the account's local application data folder
// (the known folder, which no environment variable changes), or "".
func accountLocalAppData() string {
	dir, err := windows.KnownFolderPath(windows.FOLDERID_LocalAppData, 0)
	if err != nil {
		return ""
	}
	return dir
}

// CheckPrivateDir on Windows only checks that dir is a directory: the
// per-user profile directory's inherited ACL (the user, SYSTEM and
// Administrators) is what keeps other users out, and AF_UNIX on Windows has
// no peer credentials.
func CheckPrivateDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("check the socket directory: %w", err)
	}
	return checkPrivateInfo(dir, fi)
}

// checkPrivateInfo is CheckPrivateDir's check of dir's Stat result fi.
func checkPrivateInfo(dir string, fi os.FileInfo) error {
	if !fi.IsDir() {
		return fmt.Errorf("%w: %s is not a directory; remove it and start agentgate again", errNotPrivate, dir)
	}
	return nil
}
