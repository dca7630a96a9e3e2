//go:build linux

package exec

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// processIdentity returns an opaque string that tells the process pid apart
// from any later process reusing its pid: the boot id and the start time
// (field 22 of /proc/<pid>/stat, in clock ticks since boot). ok is false
// when the process does not exist or is a zombie.
func processIdentity(pid int) (id string, ok bool) {
	if pid <= 0 {
		return "", false
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", false
	}
	// The command name (field 2) may hold spaces and parentheses: the
	// fields after it start after the last ')'.
	i := strings.LastIndexByte(string(data), ')')
	if i < 0 {
		return "", false
	}
	fields := strings.Fields(string(data[i+1:]))
	// fields[0] is field 3 (state); field 22 (starttime) is fields[19].
	if len(fields) < 20 || fields[0] == "Z" || fields[0] == "X" {
		return "", false
	}
	boot, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	return fmt.Sprintf("%s:%s", strings.TrimSpace(string(boot)), fields[19]), true
}

// hostAlive reports whether the process pid is alive and, when start is
// recorded, is the same process that recorded it.
func hostAlive(pid int, start string) bool {
	id, ok := processIdentity(pid)
	return ok && (start == "" || id == start)
}
