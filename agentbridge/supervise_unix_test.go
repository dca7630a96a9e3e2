//go:build unix

package agentbridge_test

import "github.com/agentgate/agentgate/unixpg"

// maybeSupervise becomes a run's supervisor when the executor started this
// binary as one.
func maybeSupervise() { unixpg.MaybeSupervise() }
