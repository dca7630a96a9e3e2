//go:build unix

package cli

import "syscall"

// detachedAttr puts the app in a session of its own, away from the
// terminal and process group of `agentgate mcp`.
func detachedAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
