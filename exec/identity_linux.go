//go:build linux

package exec

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// dirHandleMode is how directory handles are opened here: O_PATH, which
// needs no read permission and cannot be read from.
const dirHandleMode = unix.O_PATH

// openDirBeneath opens the directory rel beneath root as an O_PATH handle
// with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
// RESOLVE_NO_MAGICLINKS): no symlink is followed and nothing outside root
// is reached, whatever happens to the path meanwhile. Kernels before 5.6
// (no openat2) walk rel one component at a time with O_NOFOLLOW instead,
// which is as strict for a path without "..".
func openDirBeneath(root *os.File, rel string) (*os.File, error) {
	name := root.Name() + "/" + rel
	how := unix.OpenHow{Flags: dirHandleMode | unix.O_DIRECTORY | unix.O_CLOEXEC,
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
