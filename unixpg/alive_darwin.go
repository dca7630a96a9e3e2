//go:build darwin

package unixpg

import "golang.org/x/sys/unix"

// szomb is the p_stat value of a zombie in <sys/proc.h>.
const szomb = 5

// Alive reports whether pid names a process that has not ended: false when
// no such process exists and false for a zombie (ended, not yet reaped),
// which kill(pid, 0) would report as alive. macOS asks sysctl
// kern.proc.pid. A pid can be reused after its process is reaped; Alive
// cannot tell.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || int(kp.Proc.P_pid) != pid {
		return false
	}
	return kp.Proc.P_stat != szomb
}
