//go:build unix

package changes

import "syscall"

// detached puts the keeper process in a session of its own, away from the
// host's terminal and process group.
func detached() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
