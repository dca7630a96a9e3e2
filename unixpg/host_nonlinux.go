//go:build unix && !linux

package unixpg

import (
	"os"
	"syscall"
)

// supervisorSysProcAttr puts the supervisor in its own process group, so a
// terminal's Ctrl-C reaches the host, which decides, and not the supervisor.
// There is no parent-death signal here; the lifeline socket covers host death.
func supervisorSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// startHelperProcess starts exe with args, the hidden argument (a
// supervisor's).
func startHelperProcess(exe string, args []string, attr *os.ProcAttr) (*os.Process, error) {
	return os.StartProcess(exe, append([]string{exe}, args...), attr)
}
