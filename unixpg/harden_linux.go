//go:build linux

package unixpg

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hardenSupervisor prepares the supervisor before any run: it becomes a
// child subreaper (PR_SET_CHILD_SUBREAPER), so that orphaned descendants
// (setsid, double fork) are re-parented to it, and non-dumpable
// (PR_SET_DUMPABLE 0), so that a process of the same user without
// CAP_SYS_PTRACE can neither ptrace it nor open its /proc/PID/mem. Either
// failing is an error: the supervisor then refuses every run.
func hardenSupervisor() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("making the run's supervisor a child subreaper (prctl PR_SET_CHILD_SUBREAPER): %v", err)
	}
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("making the run's supervisor non-dumpable (prctl PR_SET_DUMPABLE): %v", err)
	}
	// Held for checkSelf after every run (a pooled supervisor serves
	// many); where it cannot be opened, checkSelf reads it by pid.
	selfStatus, _ = os.Open("/proc/self/status")
	return nil
}

// selfStatus is the supervisor's own /proc/self/status, opened once by
// hardenSupervisor; nil in a host, or when it could not be opened.
var selfStatus *os.File

// checkSelf is the supervisor's check of itself after each run: still a
// subreaper, still non-dumpable, not traced. It returns what is off, or ""
// when all is well. A run that managed to ptrace its supervisor (root
// without Landlock, or a kernel without Yama and dumpable checks) could
// have changed any of these; such a supervisor must not serve again.
func checkSelf() string {
	var subreaper int32
	if err := unix.Prctl(unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&subreaper)), 0, 0, 0); err != nil || subreaper == 0 {
		return "it is no longer a child subreaper"
	}
	if d, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0); err != nil || d != 0 {
		return "it became dumpable again"
	}
	st, err := readStatusOf(os.Getpid(), selfStatus)
	if err != nil {
		return "its /proc status is unreadable: " + err.Error()
	}
	if st.tracerPid != 0 {
		return fmt.Sprintf("it is being traced by pid %d", st.tracerPid)
	}
	return ""
}

// procStatus holds the fields of /proc/PID/status that tell whether a
// supervisor was stopped or is being traced.
type procStatus struct {
	// state is the one-letter state: 'T' stopped (SIGSTOP), 't' stopped
	// under a tracer, 'Z' zombie, …
	state byte
	// tracerPid is the pid of the process tracing it, 0 when none.
	tracerPid int
}

// readProcStatus reads the State and TracerPid lines of /proc/PID/status.
// The file stays readable (0444) when the process is non-dumpable.
func readProcStatus(pid int) (procStatus, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return procStatus{}, err
	}
	return parseProcStatus(b)
}

// openProcStatus opens /proc/PID/status of a child this host started and
// has not reaped (so that pid is still that child's), for the host's later
// looks at it (inspectSupervisor); nil when it cannot be opened. The
// descriptor stays bound to that process: once it is gone, reads fail,
// even if its pid was reused.
func openProcStatus(pid int) *os.File {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return nil
	}
	return f
}

// readStatusOf reads the status of process pid through held, its
// /proc/PID/status held open, or by pid when held is nil.
func readStatusOf(pid int, held *os.File) (procStatus, error) {
	if held == nil {
		return readProcStatus(pid)
	}
	return readHeldStatus(held)
}

// readHeldStatus reads and parses a held /proc/PID/status (readAfresh).
func readHeldStatus(f *os.File) (procStatus, error) {
	var buf [4096]byte // about 1.4 KiB; State and TracerPid are in the first lines
	n, err := readAfresh(f, buf[:])
	if err != nil {
		return procStatus{}, err
	}
	return parseProcStatus(buf[:n])
}

// parseProcStatus parses the State and TracerPid lines of a
// /proc/PID/status file; both must be present.
func parseProcStatus(b []byte) (procStatus, error) {
	var st procStatus
	var haveState, haveTracer bool
	for line := range bytes.Lines(b) {
		key, val, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		val = bytes.TrimSpace(val)
		switch string(key) {
		case "State":
			if len(val) > 0 {
				st.state, haveState = val[0], true
			}
		case "TracerPid":
			n, err := strconv.Atoi(string(val))
			if err == nil && n >= 0 {
				st.tracerPid, haveTracer = n, true
			}
		}
	}
	if !haveState || !haveTracer {
		return st, fmt.Errorf("no State or TracerPid line in /proc status")
	}
	return st, nil
}

// inspectSupervisor is the host's look at a supervisor from outside: it
// returns why the supervisor cannot be trusted with its run (stopped,
// stopped under a tracer, traced) or "" when nothing is seen. It reads
// status, the supervisor's /proc/PID/status held open since its start
// (openProcStatus), or, when status is nil, /proc/PID/status by pid. A
// supervisor that is gone is not inspected here: its control socket and
// pidfd say so.
func inspectSupervisor(pid int, status *os.File) string {
	st, err := readStatusOf(pid, status)
	if err != nil {
		return ""
	}
	switch {
	case st.state == 'T':
		return "its supervisor was stopped (SIGSTOP)"
	case st.state == 't':
		return "its supervisor is stopped under a tracer"
	case st.tracerPid != 0:
		return fmt.Sprintf("its supervisor is being traced by pid %d", st.tracerPid)
	}
	return ""
}
