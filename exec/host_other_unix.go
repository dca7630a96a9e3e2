//go:build unix && !linux

package exec

import (
	"errors"

	"golang.org/x/sys/unix"
)

// processIdentity returns "" and whether pid is alive: without /proc there
// is no cheap, portable start time, so pid reuse is not detected here.
func processIdentity(pid int) (string, bool) {
	if pid <= 0 {
		return "", false
	}
	err := unix.Kill(pid, 0)
	return "", err == nil || errors.Is(err, unix.EPERM)
}

// hostAlive reports whether the process pid is alive (pid liveness only).
func hostAlive(pid int, _ string) bool {
	_, ok := processIdentity(pid)
	return ok
}
