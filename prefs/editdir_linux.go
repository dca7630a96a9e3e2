package prefs

import (
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// noOpenat2 is set once openat2 turned out to be unavailable (a kernel
// before 5.6, or a seccomp filter that refuses it).
var noOpenat2 atomic.Bool

// openBeneath opens name, a single path component, relative to the
// directory dirFD with openat2 RESOLVE_NO_SYMLINKS|RESOLVE_BENEATH: no
// symbolic link is followed anywhere and the result cannot lie outside the
// directory. Where openat2 is unavailable it uses openat with O_NOFOLLOW,
// which is the same for a single component. O_CLOEXEC is always added; a
// name with a separator or ".." is refused (EXDEV).
func openBeneath(dirFD int, name string, flags int, perm uint32) (int, error) {
	if !singleComponent(name) {
		return -1, unix.EXDEV
	}
	if !noOpenat2.Load() {
		how := unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC | unix.O_NOFOLLOW), Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_BENEATH}
		if flags&unix.O_CREAT != 0 {
			how.Mode = uint64(perm)
		}
		for {
			fd, err := unix.Openat2(dirFD, name, &how)
			switch err {
			case unix.EINTR, unix.EAGAIN:
				continue
			case unix.ENOSYS, unix.EPERM:
				noOpenat2.Store(true)
			default:
				return fd, err
			}
			break
		}
	}
	return openatNoFollow(dirFD, name, flags, perm)
}
