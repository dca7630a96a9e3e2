//go:build unix && !linux && !darwin

package unixpg

import "golang.org/x/sys/unix"

// Alive reports whether pid names a process that exists, by kill(pid, 0).
// On these systems (neither Linux nor macOS) a zombie counts as alive. A
// pid can be reused after its process is reaped; Alive cannot tell.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := unix.Kill(pid, 0)
	return err == nil || err == unix.EPERM
}
