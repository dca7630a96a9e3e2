//go:build unix && !linux

package prefs

import "golang.org/x/sys/unix"

// openBeneath opens name, a single path component, relative to the
// directory dirFD with openat and O_NOFOLLOW: no symbolic link is followed
// and, for a single component, the result cannot lie outside the
// directory. O_CLOEXEC is always added; a name with a separator or ".." is
// refused (EXDEV).
func openBeneath(dirFD int, name string, flags int, perm uint32) (int, error) {
	if !singleComponent(name) {
		return -1, unix.EXDEV
	}
	return openatNoFollow(dirFD, name, flags, perm)
}
