//go:build !linux

package prefs

// realPath returns the real path of path (absolute, clean): evalExisting.
func realPath(path string) string { return evalExisting(path) }
