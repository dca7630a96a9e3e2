package exec

import "github.com/agentgate/agentgate/exec/procspec"

// proc is a contained, started process tree: *unixpg.Process or
// *winjob.Process, which share this method set.
type proc interface {
	// Pid returns the leader's pid.
	Pid() int
	// Terminate ends the tree politely then by force; asynchronous and
	// idempotent.
	Terminate()
	// Wait blocks until the whole tree is gone.
	Wait() (procspec.ExitStatus, error)
}
