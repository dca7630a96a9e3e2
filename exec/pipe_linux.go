//go:build linux

package exec

import (
	"os"

	"golang.org/x/sys/unix"
)

// pipeSize is the capacity asked for a run's stdout pipe: larger than the
// 64 KiB default, so a fast writer and the reader switch less often. The
// kernel caps it at /proc/sys/fs/pipe-max-size for unprivileged users.
const pipeSize = 1 << 20

// enlargePipe raises the pipe's capacity; failure leaves the default,
// which only costs speed.
func enlargePipe(f *os.File) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	rc.Control(func(fd uintptr) {
		unix.FcntlInt(fd, unix.F_SETPIPE_SZ, pipeSize)
	})
}
