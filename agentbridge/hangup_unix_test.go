//go:build unix

package agentbridge_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentgate/agentgate/agentbridge"
	"github.com/agentgate/agentgate/agentbridge/approvertest"
	"github.com/agentgate/agentgate/agentbridge/audit"
	"github.com/agentgate/agentgate/agentbridge/bridgetest"
	"github.com/agentgate/agentgate/agentbridge/wire"
	"github.com/agentgate/agentgate/exec"
	"github.com/agentgate/agentgate/prefs"
)

// TestHangUpEndsTheSessionsRuns closes an agent's socket while it has a
// running command (with a grandchild), a queued one and a pending one: the
// whole running tree ends, the queued run never starts, the question is
// withdrawn, each is audited as ended by the hang-up, and the run's record
// (what the Processes window shows) says so.
func TestHangUpEndsTheSessionsRuns(t *testing.T) {
	b := bridgetest.Start(t, bridgetest.Options{Steps: []approvertest.Step{approvertest.Hold},
		Settings: func(s *prefs.Settings) { s.MaxConcurrentRuns = 1 }})
	b.Allow(t, "sh")
	b.Allow(t, "sleep")
	pidFile := filepath.Join(b.Project, "grandchild.pid")
	c := b.Session(t, "")
	other := b.Session(t, "") // another agent's session is left alone
	ctx := ctxT(t)

	running, err := c.Propose(ctx, wire.ProposeParams{Argv: []string{"sh", "-c", "sleep 300 & echo $! > grandchild.pid; wait"}})
	if err != nil || running.State != "running" {
		t.Fatalf("running = %+v, %v", running, err)
	}
	queued, err := c.Propose(ctx, wire.ProposeParams{Argv: []string{"sleep", "301"}})
	if err != nil || queued.State != wire.StateQueued {
		t.Fatalf("queued = %+v, %v", queued, err)
	}
	pending, err := c.Propose(ctx, wire.ProposeParams{Argv: []string{"true"}})
	if err != nil || pending.State != wire.StatePending {
		t.Fatalf("pending = %+v, %v", pending, err)
	}
	otherRun, err := other.Propose(ctx, wire.ProposeParams{Argv: []string{"sleep", "302"}})
	if err != nil || otherRun.State != wire.StateQueued {
		t.Fatalf("other session's run = %+v, %v", otherRun, err)
	}
	grandchild := awaitPID(t, pidFile)

	c.Close() // the agent hangs up

	run, ok := b.Executor.Get(running.RunID)
	if !ok {
		t.Fatal("the running run is unknown to the executor")
	}
	rec, err := run.Wait(ctx)
	if err != nil || rec.State != exec.StateCancelled || rec.CancelledBy != agentbridge.HangUpReason {
		t.Fatalf("running run ended as %s (cancelled by %q), %v", rec.State, rec.CancelledBy, err)
	}
	awaitGone(t, grandchild)
	awaitAudit(t, b, running.RunID, "proposal,decision/allowed_by_rule,run_start,run_end/cancelled,run_changes")
	awaitAudit(t, b, queued.RunID, "proposal,decision/allowed_by_rule,run_end/cancelled")
	awaitAudit(t, b, pending.RunID, "proposal,decision/withdrawn")
	for _, e := range b.AuditEntries(t) {
		if (e.RunID == running.RunID || e.RunID == queued.RunID || e.RunID == pending.RunID) &&
			(e.Kind == audit.KindRunEnd || e.Kind == audit.KindDecision && e.Decision == audit.DecisionWithdrawn) &&
			e.Message != agentbridge.HangUpReason {
			t.Errorf("%s entry of %s says %q, want %q", e.Kind, e.RunID, e.Message, agentbridge.HangUpReason)
		}
	}
	b.Executor.Flush()
	recs, err := exec.ListRecords(b.Paths.StateDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.ID == running.RunID && (r.State != exec.StateCancelled || r.CancelledBy != agentbridge.HangUpReason) {
			t.Errorf("the record on disk says %s, cancelled by %q", r.State, r.CancelledBy)
		}
		if r.ID == queued.RunID {
			t.Errorf("the queued run started after the hang-up: %+v", r)
		}
	}
	// The other agent's run took the freed slot and runs on.
	w, err := other.Wait(ctx, wire.WaitParams{RunID: otherRun.RunID, WaitMS: new(int64(0))})
	for err == nil && w.State == wire.StateQueued {
		w, err = other.Wait(ctx, wire.WaitParams{RunID: otherRun.RunID, WaitMS: new(int64(50))})
	}
	if err != nil || w.State != "running" {
		t.Fatalf("other session's run = %+v, %v; want running", w, err)
	}
}

// awaitPID reads a pid a command wrote to path.
func awaitPID(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(eventually)
	for {
		data, err := os.ReadFile(path)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && perr == nil && pid > 0 {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid in %s", path)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// awaitGone waits until pid no longer exists (or is a zombie about to be
// reaped: signal 0 then fails with ESRCH once reaped).
func awaitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(eventually)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("process %d outlived the session", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
