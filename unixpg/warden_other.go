//go:build unix && !linux

package unixpg

// wardenArg is never passed outside Linux, where every run has a
// supervisor; it differs from superviseArg so that MaybeSupervise's switch
// compiles the same everywhere.
const wardenArg = "__agentgate_warden"

// ward is never entered outside Linux.
func ward() int { return 2 }
