// Package procspec declares, once, the shapes the per-OS containment
// packages share: what to start (Spec), how its leader ended (ExitStatus)
// and the error that means containment could not be set up
// (ErrContainment). unixpg (Linux, macOS) and winjob (Windows) take and
// return exactly these types, so package exec calls either without
// adapters. It imports only the standard library.
package procspec

import (
	"errors"
	"os"
	"strconv"
	"time"
)

// ErrContainment is wrapped by every error that means the containment a
// run needs could not be set up or was lost. Such an error is not the
// command's fault, and retrying or running the command another way would
// bypass the bounds a person relies on; errors.Is(err, ErrContainment)
// identifies it.
var ErrContainment = errors.New("process containment unavailable: do not retry or run the command another way; " +
	"the person running agentgate must fix this")

// DefaultGrace is the time between SIGTERM and SIGKILL when Spec.Grace is
// zero or negative (Unix; Windows ends a job at once).
const DefaultGrace = 2 * time.Second

// Spec says what to run. The host keeps ownership of the files in it: Start
// neither closes them nor keeps references after it returns.
type Spec struct {
	// Path is the absolute path of the executable; it is not looked up in
	// PATH. Windows: a .bat or .cmd path runs through cmd.exe, with Path in
	// place of Args[0] on the command line (winjob.BatchCommandLine), and
	// it and its arguments must pass winjob.CheckBatchArgs.
	Path string
	// Args is the full argv including argv[0]; it must not be empty.
	// Windows turns it into a command line with Go's standard quoting
	// (syscall.EscapeArg).
	Args []string
	// Dir is the working directory; empty means the host's working
	// directory when Start is called (Unix: if that cannot be determined,
	// e.g. it was removed, the supervisor's).
	Dir string
	// Env is the complete environment of the target, in "KEY=value" form.
	// nil or empty gives the target an empty environment.
	Env []string
	// Stdin, Stdout and Stderr are the target's standard files; nil means
	// the null device. Descendants inherit them unless they redirect.
	Stdin, Stdout, Stderr *os.File
	// Grace is the time between SIGTERM and SIGKILL when the tree is ended;
	// zero or negative means DefaultGrace. Windows has no SIGTERM and does
	// not use it: a job is terminated at once.
	Grace time.Duration
	// Timeout is the run's deadline, counted from the target's start: once
	// it has passed the tree is ended as by Terminate, and ExitStatus says
	// TimedOut. Zero or negative means none. Unix enforces it twice: in the
	// supervisor (so a stopped host does not stretch it) and in the host
	// (so a stopped supervisor does not either); Windows in the host.
	Timeout time.Duration
}

// ExitStatus says how the target (the leader of the tree or job) ended.
type ExitStatus struct {
	// Code is the exit code when Exited is true, and -1 otherwise.
	Code int
	// Signal is empty when the leader exited by itself. Otherwise it says
	// what ended it: on Unix the signal's name ("SIGTERM", "SIGKILL"), on
	// Windows "TerminateJobObject" (Terminate or Kill ended the job).
	Signal string
	// Exited is true when the leader ended by itself (any code), false when
	// a signal or the job's termination ended it.
	Exited bool
	// TimedOut is true when the tree was ended because Spec.Timeout passed
	// before anyone asked for its end (Terminate, Kill) and before the tree
	// ended by itself.
	TimedOut bool
}

// String returns "exit status N" or "signal: NAME".
func (s ExitStatus) String() string {
	if s.Exited {
		return "exit status " + strconv.Itoa(s.Code)
	}
	return "signal: " + s.Signal
}
