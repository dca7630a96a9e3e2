//go:build linux

package cli

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// mcpStdin returns what `agentgate mcp` reads its requests from, served by
// the Go runtime's poller where it can be: a read waiting for the next
// request then parks its goroutine instead of a thread, so the goroutines
// that take the request to the tool handler run at once on the freed
// processor instead of waiting to be stolen by another thread. That is
// about 60 µs of every call's latency on a 2-core machine.
//
//   - A pipe (Rust and Go clients, a shell) is opened a second time in
//     non-blocking mode (reopenPollable): fd 0's open file description is
//     left alone, so a process sharing it sees no change.
//   - A Unix socket (every Node.js client: libuv hands a child its stdio as
//     socketpairs; Claude Code and Gemini CLI among them) cannot be opened
//     again, so a duplicate of fd 0 is made non-blocking (pollableSocket).
//     That flag lives on the open file description fd 0 shares; the other
//     end, the client's, is a description of its own, and nothing this
//     process starts inherits fd 0 (the app it may start gets /dev/null).
//   - Anything else (a terminal, a file), or a failure, gives os.Stdin.
func mcpStdin() *os.File {
	if f, err := reopenPollable(syscall.Stdin); err == nil {
		return f
	}
	if f, err := pollableSocket(syscall.Stdin); err == nil {
		return f
	}
	return os.Stdin
}

// pollableSocket returns a duplicate of fd, which must be a socket, in
// non-blocking mode as an *os.File the runtime poller serves (reads honour
// deadlines, Close unblocks a waiting read). The non-blocking flag is set
// on the open file description fd and the duplicate share. fd stays open.
func pollableSocket(fd int) (*os.File, error) {
	if err := requireType(fd, syscall.S_IFSOCK, "a socket"); err != nil {
		return nil, err
	}
	dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return nil, err
	}
	if err := unix.SetNonblock(dup, true); err != nil {
		unix.Close(dup)
		return nil, err
	}
	// A descriptor already non-blocking is what makes NewFile hand it to
	// the poller.
	return os.NewFile(uintptr(dup), "/dev/stdin"), nil
}

// reopenPollable opens the pipe behind fd again through /proc/self/fd, with
// O_NONBLOCK on the new open file description only, and returns it as an
// *os.File that the runtime poller serves (reads honour deadlines, Close
// unblocks a waiting read). It fails for anything that is not a pipe, and
// when /proc is not mounted; fd itself is not changed and stays open.
func reopenPollable(fd int) (*os.File, error) {
	if err := requireType(fd, syscall.S_IFIFO, "a pipe"); err != nil {
		return nil, err
	}
	return os.OpenFile(fmt.Sprintf("/proc/self/fd/%d", fd), os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// requireType fails unless fd is open on a file of type typ (S_IFIFO,
// S_IFSOCK, …), named what in the error.
func requireType(fd int, typ uint32, what string) error {
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return err
	}
	if st.Mode&syscall.S_IFMT != typ {
		return fmt.Errorf("fd %d is not %s", fd, what)
	}
	return nil
}
