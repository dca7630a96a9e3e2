package agentbridge

// SetTestHookAnswered makes the broker call f after it takes a person's
// approval and before it audits and acts on it, so that tests can step in
// at that moment; the returned function removes it. Tests using it must not
// run in parallel.
func SetTestHookAnswered(f func(id string)) (restore func()) {
	testHookAnswered = f
	return func() { testHookAnswered = nil }
}
