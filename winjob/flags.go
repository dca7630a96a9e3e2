package winjob

import (
	"fmt"

	"github.com/agentgate/agentgate/exec/procspec"
)

// Windows constants, spelled out here so that the pure logic below compiles
// and is tested on every platform; flags_windows_test.go checks each against
// golang.org/x/sys/windows when the tests are compiled for Windows.
const (
	createSuspended        = 0x00000004 // CREATE_SUSPENDED
	createNewProcessGroup  = 0x00000200 // CREATE_NEW_PROCESS_GROUP
	createBreakawayFromJob = 0x01000000 // CREATE_BREAKAWAY_FROM_JOB: must never be set
	createNoWindow         = 0x08000000 // CREATE_NO_WINDOW

	jobLimitBreakawayOK       = 0x00000800 // JOB_OBJECT_LIMIT_BREAKAWAY_OK: must never be set
	jobLimitSilentBreakawayOK = 0x00001000 // JOB_OBJECT_LIMIT_SILENT_BREAKAWAY_OK: must never be set
	jobLimitKillOnJobClose    = 0x00002000 // JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
)

// terminatedExitCode is the exit code TerminateJobObject gives every process
// of a job that Terminate or Kill ends: STATUS_CONTROL_C_EXIT, what a person
// sees for a console program stopped with Ctrl-C.
const terminatedExitCode = 0xC000013A

// creationFlags returns the process creation flags for a target: created
// suspended (so it runs only once it is in the job), without a console
// window, in a new process group; never with CREATE_BREAKAWAY_FROM_JOB.
func creationFlags() uint32 {
	return createSuspended | createNoWindow | createNewProcessGroup
}

// jobLimitFlags returns the job's limit flags: every process dies when the
// last handle to the job closes; no breakaway is allowed.
func jobLimitFlags() uint32 {
	return jobLimitKillOnJobClose
}

// containmentErr wraps ErrContainment with the step that failed for which
// command, so that a person can see what broke and an agent is told not to
// retry or bypass.
func containmentErr(path, step string, err error) error {
	return fmt.Errorf("start %q: %s failed: %v: %w", path, step, err, procspec.ErrContainment)
}
