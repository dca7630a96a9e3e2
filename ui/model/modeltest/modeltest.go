// Package modeltest holds the fakes and helpers that the tests of the
// models (ui/model) and of the windows over them (ui) share: a settable
// clock, approval requests, a scripted Ask, an in-memory rule adder, a gate
// that records cancels, and run records written as exec writes them.
package modeltest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentgate/agentgate/agentbridge"
	"github.com/agentgate/agentgate/exec"
	"github.com/agentgate/agentgate/prefs"
	"github.com/agentgate/agentgate/ui/model"
)

// Clock is a settable clock for the models' Now fields. Safe for
// concurrent use.
type Clock struct {
	// mu guards t.
	mu sync.Mutex
	// t is the current time.
	t time.Time
}

// NewClock returns a clock showing t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Add moves the clock forward by d.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// Request returns an approval request with id for argv, proposed by
// provider "claude" (client "Claude Code", pid 42) in project /p/repo from
// its subdirectory sub, with a 2 min timeout, expiring at 2026-01-01 10:10
// UTC.
func Request(id string, argv ...string) *agentbridge.ApprovalRequest {
	return &agentbridge.ApprovalRequest{
		ID: id, Provider: "claude", Client: "Claude Code", PeerPID: 42, PeerExe: "/usr/bin/node",
		ProjectRoot: "/p/repo",
		Command: exec.Command{Argv: argv, Executable: "/usr/bin/" + argv[0], Dir: "/p/repo/sub", DirRel: "sub",
			ProjectRoot: "/p/repo", Timeout: 2 * time.Minute},
		Reason:  "run the tests",
		Expires: time.Date(2026, 1, 1, 10, 10, 0, 0, time.UTC),
	}
}

// Asked is one Ask's result.
type Asked struct {
	// Answer is the person's answer.
	Answer agentbridge.Answer
	// Err is why there is none (the context's error).
	Err error
}

// Ask calls q.Ask(ctx, req) on a goroutine of its own and returns the
// channel its result arrives on, once the proposal is in the queue.
func Ask(t testing.TB, ctx context.Context, q *model.Queue, req *agentbridge.ApprovalRequest) <-chan Asked {
	t.Helper()
	before := q.Len()
	ch := make(chan Asked, 1)
	go func() {
		a, err := q.Ask(ctx, req)
		ch <- Asked{a, err}
	}()
	require.Eventually(t, func() bool { return q.Len() == before+1 }, 10*time.Second, time.Millisecond)
	return ch
}

// Result waits for an Ask's result; the test fails if none arrives within
// 10 s.
func Result(t testing.TB, ch <-chan Asked) Asked {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("Ask did not return")
	}
	return Asked{}
}

// Rules is a model.RuleAdder that keeps the rules added in memory, or fails
// with Err. Safe for concurrent use.
type Rules struct {
	// Err, when set, is returned by every Add (nothing is added).
	Err error
	// mu guards added.
	mu sync.Mutex
	// added are the rules added, in order.
	added []prefs.Rule
}

// Add records the rule, or returns r.Err.
func (r *Rules) Add(scope prefs.Scope, provider, project string, tokens []string) (prefs.Rule, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.Err != nil {
		return prefs.Rule{}, r.Err
	}
	rule := prefs.Rule{Tokens: tokens, Scope: scope, Provider: provider, Project: project}
	r.added = append(r.added, rule)
	return rule, nil
}

// Added returns the rules added so far, in order.
func (r *Rules) Added() []prefs.Rule {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.added)
}

// Gate is a model.Gate that records what it was asked. Safe for concurrent
// use.
type Gate struct {
	// mu guards the fields below.
	mu sync.Mutex
	// cancelled are the run ids CancelRun got, in order.
	cancelled []string
	// stopped counts StopEverything calls.
	stopped int
}

// CancelRun records id.
func (g *Gate) CancelRun(id string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.cancelled = append(g.cancelled, id)
	return nil
}

// StopEverything counts the call.
func (g *Gate) StopEverything() {
	g.mu.Lock()
	g.stopped++
	g.mu.Unlock()
}

// Cancelled returns the ids CancelRun got so far and forgets them.
func (g *Gate) Cancelled() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	ids := g.cancelled
	g.cancelled = nil
	return ids
}

// Stopped returns how many times StopEverything was called.
func (g *Gate) Stopped() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.stopped
}

// WriteRecord writes rec as a run record file under stateDir, as exec
// writes it.
func WriteRecord(t testing.TB, stateDir string, rec exec.Record) {
	t.Helper()
	data, err := json.Marshal(rec)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(stateDir, "runs"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(stateDir, "runs", rec.ID+".json"), data, 0o600))
}
