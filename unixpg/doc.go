// Package unixpg starts a command so that it and every descendant end when
// they must: on Terminate, on Kill, when the command's leader exits, and when
// the host process dies, even by SIGKILL.
//
// Runs are started by small supervising processes (the design of Bazel's
// process-wrapper): the host re-executes its own binary with a hidden first
// argument and an environment marker; MaybeSupervise (also run from this
// package's init function) recognises that and turns the process into a
// supervisor. A supervisor serves one run at a time and is reused: once a
// run's tree is completely gone it goes back to a small pool of idle
// supervisors (at most 4, each retired after 2 minutes idle), because a
// fresh one costs a whole Go start-up of the host binary. Start takes an
// idle one or starts a new one, so any number of runs may be in progress.
// Each run reaches its supervisor over a Unix socket: the description
// (path, argv, dir, env, grace) as JSON and the standard files as
// SCM_RIGHTS descriptors, which the supervisor closes as soon as the target
// holds them. The supervisor
//
//   - on Linux makes itself a child subreaper (PR_SET_CHILD_SUBREAPER), so that
//     descendants that leave the process group (setsid, double fork) are
//     re-parented to it and can be found and killed;
//   - starts the target in its own process group (its pgid is its pid);
//   - holds a lifeline: the socket to the host, whose end of file (the host
//     died or retired the supervisor) makes it SIGKILL the whole tree at
//     once and exit; an idle supervisor just exits;
//   - on a terminate request sends SIGTERM (and SIGCONT) to the group and to
//     every descendant it can find, waits the grace period for the tree to
//     go, then SIGKILLs the group and sweeps (Linux: every descendant,
//     repeatedly, until the supervisor has no child left);
//   - when the leader exits by itself, ends the rest of the tree the same way
//     (SIGTERM, grace, SIGKILL, sweep), so a grandchild holding the stdout
//     pipe cannot keep the run alive;
//   - reports the leader's exit status only when nothing of the tree
//     remains (Linux) or the process group is empty (other Unix), and only
//     then can it serve another run.
//
// On macOS there is no subreaper: a descendant that calls setsid (or
// setpgid) leaves the process group and is not caught. docs/lifetime.md lists
// exactly what each platform catches.
//
// The package compiles on every platform; Start and Process exist only on
// Unix. On other platforms MaybeSupervise does nothing.
package unixpg

import (
	"errors"
	"os"
	"strconv"
	"time"
)

// ErrContainment is wrapped by every error that means the containment a run
// needs could not be set up or was lost. Such an error is not the command's
// fault and retrying or running the command another way would bypass the
// bounds a person relies on; errors.Is(err, ErrContainment) identifies it.
var ErrContainment = errors.New("process containment unavailable: do not retry or run the command another way; " +
	"the person running agentgate must fix this")

// DefaultGrace is the time between SIGTERM and SIGKILL when Spec.Grace is
// zero or negative.
const DefaultGrace = 2 * time.Second

// Spec says what to run. The host keeps ownership of the files in it: Start
// neither closes them nor keeps references after it returns.
type Spec struct {
	// Path is the absolute path of the executable; it is not looked up in
	// PATH.
	Path string
	// Args is the full argv including argv[0]; it must not be empty.
	Args []string
	// Dir is the working directory; empty means the host's working
	// directory when Start is called (if that cannot be determined, e.g.
	// it was removed, the supervisor's).
	Dir string
	// Env is the complete environment of the target, in "KEY=value" form.
	// nil or empty gives the target an empty environment.
	Env []string
	// Stdin, Stdout and Stderr are the target's standard files; nil means
	// /dev/null. Descendants inherit them unless they redirect.
	Stdin, Stdout, Stderr *os.File
	// Grace is the time between SIGTERM and SIGKILL when the tree is ended;
	// zero or negative means DefaultGrace.
	Grace time.Duration
}

// ExitStatus says how the target (the leader of the tree) ended.
type ExitStatus struct {
	// Code is the exit code when Exited is true, and -1 when the leader was
	// killed by a signal.
	Code int
	// Signal names the signal that killed the leader, as "SIGTERM" or
	// "SIGKILL"; it is empty unless the leader was killed by a signal.
	Signal string
	// Exited is true when the leader ended by calling exit (any code), false
	// when a signal killed it.
	Exited bool
}

// String returns "exit status N" or "signal: SIGNAME".
func (s ExitStatus) String() string {
	if s.Exited {
		return "exit status " + strconv.Itoa(s.Code)
	}
	return "signal: " + s.Signal
}
