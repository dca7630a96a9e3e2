// Package winjob starts a command on Windows inside a Job Object, so that it
// and every descendant end when they must: on Terminate or Kill, when the
// command's leader exits, and when the host process ends, even if it
// crashes or is killed.
//
// The job is unnamed, created with a handle that is not inheritable and
// never duplicated, and limited with JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE and
// no breakaway flag: children join it automatically and cannot leave, and
// when the host's only handle closes (the host exits, however) Windows
// terminates every process in it. The target is created suspended
// (CREATE_SUSPENDED | CREATE_NO_WINDOW | CREATE_NEW_PROCESS_GROUP), assigned
// to the job, and only then resumed, so it never runs outside the job; if
// assignment fails it is terminated and Start fails closed with an error
// wrapping ErrContainment.
//
// Windows has no SIGTERM: Terminate and Kill both end the whole job at once
// with TerminateJobObject, and Spec.Grace is not used. The package's API has
// the same shape as package unixpg so that callers stay thin.
//
// The Windows code is compiled and vetted from Linux but has not been run
// (nothing here runs Windows; see docs/lifetime.md). The pure parts (flag
// computation, error wording, CheckBatchArgs) are in files without build
// tags and are tested on every platform.
package winjob

import (
	"errors"
	"os"
	"strconv"
	"time"
)

// ErrContainment is wrapped by every error that means the Job Object a run
// needs could not be set up. Such an error is not the command's fault and
// retrying or running the command another way would bypass the bounds a
// person relies on; errors.Is(err, ErrContainment) identifies it.
var ErrContainment = errors.New("process containment unavailable: do not retry or run the command another way; " +
	"the person running agentgate must fix this")

// Spec says what to run. The host keeps ownership of the files in it: Start
// neither closes them nor keeps references after it returns.
type Spec struct {
	// Path is the absolute path of the executable; it is not looked up in
	// PATH. A .bat or .cmd path runs through cmd.exe and its arguments
	// must pass CheckBatchArgs.
	Path string
	// Args is the full argv including argv[0]; it must not be empty. It is
	// turned into a command line with Go's standard quoting
	// (syscall.EscapeArg).
	Args []string
	// Dir is the working directory; empty means the host's.
	Dir string
	// Env is the complete environment of the target, in "KEY=value" form.
	Env []string
	// Stdin, Stdout and Stderr are the target's standard files; nil means
	// the NUL device.
	Stdin, Stdout, Stderr *os.File
	// Grace exists for symmetry with unixpg and is not used: Windows has no
	// SIGTERM, so Terminate ends the job at once.
	Grace time.Duration
}

// ExitStatus says how the target (the leader of the job) ended.
type ExitStatus struct {
	// Code is the leader's exit code when Exited is true, and -1 when the
	// job was terminated before the leader exited.
	Code int
	// Signal is "" when the leader exited by itself and
	// "TerminateJobObject" when Terminate or Kill ended it.
	Signal string
	// Exited is true when the leader ended by itself (any code).
	Exited bool
}

// String returns "exit status N" or "signal: TerminateJobObject".
func (s ExitStatus) String() string {
	if s.Exited {
		return "exit status " + strconv.Itoa(s.Code)
	}
	return "signal: " + s.Signal
}
