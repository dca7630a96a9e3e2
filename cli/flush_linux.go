//go:build linux

package cli

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// flushTerminalInput discards what was typed into the terminal in but not
// yet read (tcflush TCIFLUSH). Anything that is not a terminal is left alone.
func flushTerminalInput(in io.Reader) {
	f, ok := in.(*os.File)
	if !ok {
		return
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) {
		_ = unix.IoctlSetInt(int(fd), unix.TCFLSH, unix.TCIFLUSH)
	})
}
