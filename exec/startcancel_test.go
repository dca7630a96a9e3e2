package exec

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The start-versus-cancel race: a run registered by Start is
// visible to Cancel and CancelAll before its process exists. Each test
// drives one interleaving deterministically through Start's test hooks; the
// race detector checks the shared fields.

// startWithHook starts a long sleep with hook installed at *at, and returns
// the run once Start returned.
func startWithHook(t *testing.T, at *func(*Run), hook func(*Run)) (*Run, *Executor) {
	t.Helper()
	e, root := testExecutor(t, Config{})
	*at = hook
	t.Cleanup(func() { *at = nil })
	cmd, err := Validate(Proposal{Argv: []string{"sleep", "60"}, ProjectRoot: root}, PathFromEnv(e.cfg.Env))
	require.NoError(t, err)
	r, err := e.Start(cmd, Meta{Session: "s1"})
	require.NoError(t, err)
	return r, e
}

// TestCancelAllBeforeProcessStarts: "Stop everything" reaches a run that is
// registered but has no process yet: the process never starts.
func TestCancelAllBeforeProcessStarts(t *testing.T) {
	r, _ := startWithHook(t, &testHookStarting, func(r *Run) { r.e.CancelAll() })
	rec := waitRun(t, r)
	assert.Equal(t, StateCancelled, rec.State)
	assert.Zero(t, rec.PID, "no process may have started")
}

// TestCancelBeforeProcessStarts: the same for a Cancel of that run.
func TestCancelBeforeProcessStarts(t *testing.T) {
	r, _ := startWithHook(t, &testHookStarting, func(r *Run) { r.Cancel() })
	rec := waitRun(t, r)
	assert.Equal(t, StateCancelled, rec.State)
	assert.Zero(t, rec.PID)
}

// TestCancelAllWhileProcessStarts: a CancelAll that comes after the process
// started but before the Run holds it ends the run at once.
func TestCancelAllWhileProcessStarts(t *testing.T) {
	r, _ := startWithHook(t, &testHookStarted, func(r *Run) { r.e.CancelAll() })
	rec := waitRun(t, r)
	assert.Equal(t, StateCancelled, rec.State)
	assert.NotZero(t, rec.PID, "the process had started")
}

// TestCancelWhileProcessStarts: the same for a Cancel of that run.
func TestCancelWhileProcessStarts(t *testing.T) {
	r, _ := startWithHook(t, &testHookStarted, func(r *Run) { r.Cancel() })
	assert.Equal(t, StateCancelled, waitRun(t, r).State)
}

// TestStartRacesCancelAll runs Starts and CancelAlls concurrently (for the
// race detector) and checks that every run ends once a last CancelAll has
// returned: none keeps running to its timeout.
func TestStartRacesCancelAll(t *testing.T) {
	e, root := testExecutor(t, Config{})
	cmd, err := Validate(Proposal{Argv: []string{"sleep", "60"}, ProjectRoot: root}, PathFromEnv(e.cfg.Env))
	require.NoError(t, err)
	const n = 8
	var wg sync.WaitGroup
	runs := make([]*Run, n)
	for i := range n {
		wg.Add(2)
		go func() {
			defer wg.Done()
			r, err := e.Start(cmd, Meta{Session: "s1"})
			assert.NoError(t, err)
			runs[i] = r
		}()
		go func() { defer wg.Done(); e.CancelAll() }()
	}
	wg.Wait()
	e.CancelAll()
	for _, r := range runs {
		if r != nil {
			assert.Equal(t, StateCancelled, waitRun(t, r).State)
		}
	}
}
