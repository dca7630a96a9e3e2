//go:build linux

package unixpg

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// readAfresh reads a file the kernel generates on each read (a /proc or
// cgroup file, held open) from its start into buf, with one pread at
// offset 0: the kernel generates its content again for every read at
// offset 0, so a held descriptor costs one system call a look instead of
// the open, read, read and close of os.ReadFile (1.6 µs against 14 µs for
// cgroup.events, 8 against 22 µs for /proc/PID/status on the project's
// VM). The read goes through the file's RawConn, so that a Close racing it
// fails it rather than reading whatever file took the
// number. A content longer than buf is cut off at len(buf).
func readAfresh(f *os.File, buf []byte) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n int
	var rerr error
	if err := rc.Read(func(fd uintptr) bool {
		n, rerr = unix.Pread(int(fd), buf, 0)
		return true
	}); err != nil {
		return 0, err
	}
	if rerr != nil {
		return 0, rerr
	}
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}
