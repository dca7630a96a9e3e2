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

// startSupervisor starts exe as a supervisor.
func startSupervisor(exe string, attr *os.ProcAttr) (*os.Process, error) {
	return os.StartProcess(exe, []string{exe, superviseArg}, attr)
}
