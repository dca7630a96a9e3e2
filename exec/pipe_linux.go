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

// newOutputPipe returns a pipe for one output stream, both ends
// close-on-exec from creation (pipe2, so no concurrent fork can inherit
// them): r is non-blocking and read through Go's poller by the host; w,
// which goes to the process, stays blocking and out of the poller. os.Pipe
// would register both ends with the poller and the platform layer would
// then switch w back to blocking mode: four system calls per stream spent
// on an end the host never reads.
func newOutputPipe() (r, w *os.File, err error) {
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
		return nil, nil, os.NewSyscallError("pipe2", err)
	}
	if err := unix.SetNonblock(fds[0], true); err != nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
		return nil, nil, os.NewSyscallError("setnonblock", err)
	}
	return os.NewFile(uintptr(fds[0]), "|0"), os.NewFile(uintptr(fds[1]), "|1"), nil
}
