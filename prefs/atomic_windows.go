//go:build windows

package prefs

// syncDir does nothing on Windows: directories cannot be opened for syncing,
// and NTFS journals the rename (MoveFileEx) itself.
func syncDir(dir string) error { return nil }
