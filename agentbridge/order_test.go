package agentbridge_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgate/agentgate/agentbridge"
	"github.com/agentgate/agentgate/agentbridge/approvertest"
	"github.com/agentgate/agentgate/agentbridge/audit"
	"github.com/agentgate/agentgate/agentbridge/bridgetest"
	"github.com/agentgate/agentgate/agentbridge/client"
	"github.com/agentgate/agentgate/agentbridge/wire"
	"github.com/agentgate/agentgate/exec"
	"github.com/agentgate/agentgate/prefs"
)

// holdRecord holds the broker's audit write of the first entry set that
// matches, until release is called; held is closed once the write is being
// held. Not parallel-safe (a package-level hook).
func holdRecord(t *testing.T, match func(audit.Entry) bool) (held <-chan struct{}, release func()) {
	heldCh, releaseCh := make(chan struct{}), make(chan struct{})
	var once sync.Once
	restore := agentbridge.SetTestHookRecord(func(entries []audit.Entry) {
		for _, e := range entries {
			if match(e) {
				first := false
				once.Do(func() { first = true })
				if first {
					close(heldCh)
					<-releaseCh
				}
				return
			}
		}
	})
	released := false
	release = func() {
		if !released {
			released = true
			close(releaseCh)
		}
	}
	t.Cleanup(func() { release(); restore() })
	return heldCh, release
}

// TestOutcomeRecordedBeforeAgentHears holds the audit write of each outcome
// that ends a proposal without a run and checks that, meanwhile, the agent
// still sees it pending (or queued), and that once the agent hears of it
// the entry is in the log — no waiting for it.
func TestOutcomeRecordedBeforeAgentHears(t *testing.T) {
	cases := []struct {
		name     string
		steps    []approvertest.Step
		settings func(*prefs.Settings)
		act      func(ctx context.Context, c *client.Client, id string) // what ends the proposal, if the approver does not
		entry    func(audit.Entry) bool
		code     string
	}{
		{name: "denied", steps: []approvertest.Step{approvertest.Deny("no")}, code: wire.RefuseDenied,
			entry: func(e audit.Entry) bool { return e.Decision == audit.DecisionDenied }},
		{name: "expired", steps: []approvertest.Step{approvertest.Hold}, code: wire.RefuseExpired,
			settings: func(s *prefs.Settings) { s.ApprovalExpiry = 200 * time.Millisecond },
			entry:    func(e audit.Entry) bool { return e.Decision == audit.DecisionExpired }},
		{name: "no approver", steps: []approvertest.Step{{Err: errors.New("display gone")}}, code: wire.RefuseNoApprover,
			entry: func(e audit.Entry) bool { return e.Kind == audit.KindRefusal }},
		{name: "withdrawn", steps: []approvertest.Step{approvertest.Hold}, code: wire.RefuseWithdrawn,
			act:   func(ctx context.Context, c *client.Client, id string) { go c.Cancel(ctx, id) },
			entry: func(e audit.Entry) bool { return e.Decision == audit.DecisionWithdrawn }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := bridgetest.Start(t, bridgetest.Options{Steps: tc.steps, Settings: tc.settings})
			c := b.Session(t, "")
			ctx := ctxT(t)
			held, release := holdRecord(t, tc.entry)
			res, err := c.Propose(ctx, wire.ProposeParams{Argv: []string{"true"}})
			if err != nil || res.State != wire.StatePending {
				t.Fatalf("propose = %+v, %v", res, err)
			}
			if tc.act != nil {
				b.Approver.NextRequest(eventually)
				tc.act(ctx, c, res.RunID)
			}
			select {
			case <-held:
			case <-ctx.Done():
				t.Fatal("the outcome was never audited")
			}
			// The write is held: the agent must not know the outcome yet.
			list, err := c.List(ctx)
			if err != nil || len(list.Runs) != 1 || list.Runs[0].State != wire.StatePending {
				t.Fatalf("while the audit write is held, list = %+v, %v; want pending", list, err)
			}
			zero := int64(0)
			if w, err := c.Wait(ctx, wire.WaitParams{RunID: res.RunID, WaitMS: &zero}); err != nil || w.State != wire.StatePending {
				t.Fatalf("while the audit write is held, wait = %+v, %v; want pending", w, err)
			}
			release()
			_, err = c.Wait(ctx, wire.WaitParams{RunID: res.RunID})
			if code := refusalCode(t, err); code != tc.code {
				t.Fatalf("wait = %v, want %s", err, tc.code)
			}
			found := false
			for _, e := range b.AuditEntries(t) {
				found = found || (e.RunID == res.RunID && tc.entry(e))
			}
			if !found {
				t.Fatalf("the agent heard %s before it was in the audit log: %v", tc.code, auditKinds(t, b, res.RunID))
			}
		})
	}
}

// TestQueuedCancelRecordedBeforeAgentHears: a queued run cancelled by the
// agent is audited before exec.cancel answers.
func TestQueuedCancelRecordedBeforeAgentHears(t *testing.T) {
	b := bridgetest.Start(t, bridgetest.Options{Settings: func(s *prefs.Settings) { s.MaxConcurrentRuns = 1 }})
	b.Allow(t, "sleep")
	c := b.Session(t, "")
	ctx := ctxT(t)
	if _, err := c.Propose(ctx, wire.ProposeParams{Argv: []string{"sleep", "60"}}); err != nil {
		t.Fatal(err)
	}
	queued, err := c.Propose(ctx, wire.ProposeParams{Argv: []string{"sleep", "61"}})
	if err != nil || queued.State != wire.StateQueued {
		t.Fatalf("second = %+v, %v; want queued", queued, err)
	}
	cr, err := c.Cancel(ctx, queued.RunID)
	if err != nil || cr.State != string(exec.StateCancelled) {
		t.Fatalf("cancel = %+v, %v", cr, err)
	}
	if got := joined(auditKinds(t, b, queued.RunID)); got != "proposal,decision/allowed_by_rule,run_end/cancelled" {
		t.Fatalf("audit when exec.cancel answered = %s", got)
	}
}

// TestRunEndWrittenBeforeAgentHears: when exec.wait reports a run's end,
// the audit log already holds its run_end line.
func TestRunEndWrittenBeforeAgentHears(t *testing.T) {
	b := bridgetest.Start(t, bridgetest.Options{})
	b.Allow(t, "true")
	c := b.Session(t, "")
	ctx := ctxT(t)
	for range 20 {
		res, err := c.Propose(ctx, wire.ProposeParams{Argv: []string{"true"}})
		if err != nil {
			t.Fatal(err)
		}
		w, err := c.Wait(ctx, wire.WaitParams{RunID: res.RunID})
		if err != nil || w.State != "exited" {
			t.Fatalf("wait = %+v, %v", w, err)
		}
		if got := joined(auditKinds(t, b, res.RunID)); !strings.Contains(got, "run_end/exited") {
			t.Fatalf("the agent heard of the end before the log held it: %s", got)
		}
	}
}
