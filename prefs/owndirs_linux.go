package prefs

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// realPath returns the real path of path (absolute, clean): the longest
// existing prefix, opened with O_PATH (symbolic links followed, nothing
// read) and named by the kernel through /proc/self/fd, with the rest of
// path appended. Three system calls where path exists, whatever its
// depth (filepath.EvalSymlinks makes one per component). Without /proc it
// falls back to evalExisting.
func realPath(path string) string {
	p, tail := path, ""
	for {
		fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err == nil {
			real, rerr := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
			unix.Close(fd)
			if rerr != nil || !filepath.IsAbs(real) {
				return evalExisting(path)
			}
			return filepath.Join(real, tail)
		}
		if !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.ENOTDIR) {
			return evalExisting(path)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return path
		}
		tail = filepath.Join(filepath.Base(p), tail)
		p = parent
	}
}
