//go:build linux

package exec

import (
	"io"
	"os"
	"syscall"

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

// spliceChunk is the most one splice moves from a stream's pipe into its
// spill file: the pipe's capacity.
const spliceChunk = pipeSize

// spliceToFile moves up to n bytes from the pipe src into dst at offset
// off with splice(2), in the kernel: the bytes are copied once, from the
// pipe's pages into the file's, instead of into the host's memory and out
// again. It waits for data through src's poller, so src's read deadline and
// Close apply as they do to Read. It returns the bytes moved (0 with a nil
// error at end of file), and ok false when splice cannot serve this pair
// (a file system without splice support, or src not a pipe): nothing was
// moved then, and the caller reads and writes instead.
func spliceToFile(src io.Reader, dst *os.File, off int64, n int) (moved int, ok bool, err error) {
	sc, isConn := src.(syscall.Conn)
	if !isConn {
		return 0, false, nil
	}
	in, err := sc.SyscallConn()
	if err != nil {
		return 0, false, nil
	}
	out, err := dst.SyscallConn()
	if err != nil {
		return 0, false, nil
	}
	ok = true
	var spliceErr error
	ctlErr := out.Control(func(outFD uintptr) {
		readErr := in.Read(func(inFD uintptr) bool {
			for {
				got, e := unix.Splice(int(inFD), nil, int(outFD), &off, n, unix.SPLICE_F_NONBLOCK|unix.SPLICE_F_MOVE)
				switch e {
				case unix.EINTR:
					continue
				case unix.EAGAIN:
					return false // wait for data through the poller
				case unix.EINVAL, unix.ENOSYS, unix.EOPNOTSUPP:
					ok = false
				case nil:
					moved = int(got)
				default:
					spliceErr = os.NewSyscallError("splice", e)
				}
				return true
			}
		})
		if readErr != nil && spliceErr == nil {
			spliceErr = readErr
		}
	})
	if ctlErr != nil {
		return 0, false, nil
	}
	return moved, ok, spliceErr
}
