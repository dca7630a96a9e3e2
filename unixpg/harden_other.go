//go:build unix && !linux

package unixpg

import (
	"fmt"
	"os"
	"runtime"
)

// hardenSupervisor prepares the supervisor before any run. There are no
// child subreapers outside Linux: a descendant that leaves the target's
// process group (setsid, setpgid) is not caught (docs/lifetime.md). On
// macOS the supervisor denies debuggers (ptrace PT_DENY_ATTACH), the
// closest to Linux's non-dumpable flag; a failure is an error, and the
// supervisor then refuses every run.
func hardenSupervisor() error {
	if runtime.GOOS == "darwin" {
		if err := ptraceDenyAttach(); err != nil {
			return fmt.Errorf("denying debuggers to the run's supervisor (ptrace PT_DENY_ATTACH): %v", err)
		}
	}
	return nil
}

// checkSelf finds nothing off: outside Linux there is no cheap way for a
// process to see that it is traced, and nothing set up in hardenSupervisor
// can be undone from outside without a debugger, which PT_DENY_ATTACH
// refuses on macOS.
func checkSelf() string { return "" }

// inspectSupervisor returns "": without /proc the host cannot see a
// supervisor's state. The ping it sends during runs, the run's host-side
// deadline and the control socket's end still catch a supervisor that
// stopped answering or died.
func inspectSupervisor(int, *os.File) string { return "" }

// openProcStatus returns nil: there is no /proc to hold.
func openProcStatus(int) *os.File { return nil }
