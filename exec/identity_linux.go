//go:build linux

package exec

import (
	"errors"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// openRootDir opens the directory path as an O_PATH handle (symlinks in it
// followed: it was resolved already, and its identity is what counts).
func openRootDir(path string) (*os.File, error) {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// openDirBeneath opens the directory rel beneath root as an O_PATH handle
// with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
// RESOLVE_NO_MAGICLINKS): no symlink is followed and nothing outside root
// is reached, whatever happens to the path meanwhile. Kernels before 5.6
// (no openat2) walk rel one component at a time with O_NOFOLLOW instead,
// which is as strict for a path without "..".
func openDirBeneath(root *os.File, rel string) (*os.File, error) {
	name := root.Name() + "/" + rel
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
	fd, err := unix.Openat2(int(root.Fd()), rel, &how)
	if errors.Is(err, unix.ENOSYS) {
		return walkBeneath(root, rel)
	}
	if err != nil {
		return nil, &os.PathError{Op: "openat2", Path: name, Err: err}
	}
	return os.NewFile(uintptr(fd), name), nil
}

// walkBeneath opens rel beneath root one component at a time, each with
// O_NOFOLLOW; "." and ".." components are refused.
func walkBeneath(root *os.File, rel string) (*os.File, error) {
	name := root.Name() + "/" + rel
	cur, err := unix.Openat(int(root.Fd()), ".", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "openat", Path: root.Name(), Err: err}
	}
	for _, c := range strings.Split(rel, "/") {
		if c == "" || c == "." {
			continue
		}
		if c == ".." {
			unix.Close(cur)
			return nil, &os.PathError{Op: "openat", Path: name, Err: unix.EXDEV}
		}
		next, err := unix.Openat(cur, c, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(cur)
		if err != nil {
			return nil, &os.PathError{Op: "openat", Path: name, Err: err}
		}
		cur = next
	}
	return os.NewFile(uintptr(cur), name), nil
}
