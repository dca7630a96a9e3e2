package agentbridge

import "github.com/agentgate/agentgate/agentbridge/audit"

// SetTestHookAnswered makes the broker call f after it takes a person's
// approval and before it audits and acts on it, so that tests can step in
// at that moment; the returned function removes it. Tests using it must not
// run in parallel.
func SetTestHookAnswered(f func(id string)) (restore func()) {
	testHookAnswered = f
	return func() { testHookAnswered = nil }
}

// SetTestHookRecord makes the broker call f with the entries it is about to
// write (Broker.record), before writing them, so that tests can hold the
// write and look at what the agent sees meanwhile; the returned function
// removes it. Tests using it must not run in parallel.
func SetTestHookRecord(f func(entries []audit.Entry)) (restore func()) {
	testHookRecord = f
	return func() { testHookRecord = nil }
}
