//go:build unix

package exec

import (
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// openRootDir opens the directory path as a handle of dirHandleMode
// (symlinks in it followed: it was resolved already, and its identity is
// what counts).
func openRootDir(path string) (*os.File, error) {
	fd, err := unix.Open(path, dirHandleMode|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// walkBeneath opens the directory rel beneath root one component at a
// time, each with O_NOFOLLOW, so that no symlink is followed and nothing
// outside root is reached; "." components are skipped and ".." is refused
// (EXDEV). Handles are opened with dirHandleMode.
func walkBeneath(root *os.File, rel string) (*os.File, error) {
	name := root.Name() + "/" + rel
	cur, err := unix.Openat(int(root.Fd()), ".", dirHandleMode|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
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
		next, err := unix.Openat(cur, c, dirHandleMode|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(cur)
		if err != nil {
			return nil, &os.PathError{Op: "openat", Path: name, Err: err}
		}
		cur = next
	}
	return os.NewFile(uintptr(cur), name), nil
}
