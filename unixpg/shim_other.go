//go:build unix && !linux

package unixpg

// startThroughShim reports that sandboxes are Linux-only: nothing starts.
func startThroughShim(req controlMsg, std []uintptr, pidfd *int, cgroupFD int) (pid, _ int, ok bool) {
	report(statusMsg{Verb: statusConfine, Text: "a sandbox (write confinement) is available on Linux only"})
	return 0, -1, false
}
