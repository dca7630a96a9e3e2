package exec

import (
	"os"
	"time"
)

// procSpec says what the platform layer starts: the fields of unixpg.Spec
// and winjob.Spec, which share this shape.
type procSpec struct {
	// Path is the absolute executable.
	Path string
	// Args is the full argv including argv[0].
	Args []string
	// Dir is the working directory.
	Dir string
	// Env is the complete environment.
	Env []string
	// Stdin, Stdout and Stderr are the target's standard files.
	Stdin, Stdout, Stderr *os.File
	// Grace is the time between the polite and the forced end of the tree.
	Grace time.Duration
}

// procExit says how the leader of a contained tree ended.
type procExit struct {
	// Code is the exit code when Exited, else -1.
	Code int
	// Signal names the signal that killed the leader, if one did.
	Signal string
	// Exited is true when the leader called exit.
	Exited bool
}

// proc is a contained, started process tree (unixpg.Process,
// winjob.Process).
type proc interface {
	// Pid returns the leader's pid.
	Pid() int
	// Terminate ends the tree politely then by force; asynchronous and
	// idempotent.
	Terminate()
	// Wait blocks until the whole tree is gone.
	Wait() (procExit, error)
}
