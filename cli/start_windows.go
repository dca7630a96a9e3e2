//go:build windows

package cli

import (
	"syscall"

	"golang.org/x/sys/windows"
)

// detachedAttr detaches the app from the console of `agentgate mcp`, in a
// process group of its own.
func detachedAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: windows.DETACHED_PROCESS | windows.CREATE_NEW_PROCESS_GROUP}
}
