//go:build windows

package exec

import (
	"strconv"

	"golang.org/x/sys/windows"
)

// stillActive is the exit code GetExitCodeProcess reports for a live
// process (STILL_ACTIVE).
const stillActive = 259

// processIdentity returns the process's creation time (as 100 ns ticks) to
// tell it apart from a later process reusing its pid, and whether it is
// alive.
func processIdentity(pid int) (string, bool) {
	if pid <= 0 {
		return "", false
	}
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return "", false
	}
	defer windows.CloseHandle(h)
	var code uint32
	if err := windows.GetExitCodeProcess(h, &code); err != nil || code != stillActive {
		return "", false
	}
	var created, exited, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(h, &created, &exited, &kernel, &user); err != nil {
		return "", true
	}
	return strconv.FormatInt(created.Nanoseconds()/100, 10), true
}

// hostAlive reports whether the process pid is alive and, when start is
// recorded, is the same process that recorded it.
func hostAlive(pid int, start string) bool {
	id, ok := processIdentity(pid)
	return ok && (start == "" || id == "" || id == start)
}
