//go:build windows

package cli

import (
	"fmt"
	"os"
	osexec "os/exec"
	"syscall"

	"golang.org/x/sys/windows"
)

// startAppDetached starts the desktop app (the agentgate binary with no
// arguments) detached from the console of `agentgate mcp`, in a process
// group of its own with stdio on NUL, and does not wait for it.
func startAppDetached(executable string) error {
	if executable == "" {
		return fmt.Errorf("the agentgate executable is unknown")
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer devnull.Close()
	cmd := osexec.Command(executable)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, devnull, devnull
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.DETACHED_PROCESS | windows.CREATE_NEW_PROCESS_GROUP}
	if err := cmd.Start(); err != nil {
		return err
	}
	return cmd.Process.Release()
}
