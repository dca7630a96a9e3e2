package agentbridge_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/agentgate/agentgate/agentbridge"
	"github.com/agentgate/agentgate/agentbridge/approvertest"
	"github.com/agentgate/agentgate/agentbridge/bridgetest"
	"github.com/agentgate/agentgate/agentbridge/wire"
	"github.com/agentgate/agentgate/prefs"
)

// TestHookApprovalIsNotWithdrawnTwice: "Stop everything" pressed just after
// the person approved a hook question (before the answer is audited and
// reported) finds nothing pending. Before the fix the question was still
// pending then: it was both stopped and approved in the audit log, and the
// session's pending count went below zero, so the per-session cap let one
// more question through.
func TestHookApprovalIsNotWithdrawnTwice(t *testing.T) {
	b := bridgetest.Start(t, bridgetest.Options{
		Steps:    []approvertest.Step{approvertest.Approve, approvertest.Hold, approvertest.Hold},
		Settings: func(s *prefs.Settings) { s.MaxPendingPerSession = 1 },
	})
	var once sync.Once
	var hookID string
	restore := agentbridge.SetTestHookAnswered(func(id string) {
		once.Do(func() {
			hookID = id
			b.Broker.StopEverything()
		})
	})
	defer restore()
	c := b.Session(t, "claude-code")
	ctx := ctxT(t)
	res, err := c.HookAsk(ctx, wire.HookAskParams{CommandLine: "ls | wc -l"})
	if err != nil || res.Decision != "allow" {
		t.Fatalf("hook question approved before the stop = %+v, %v; want allow", res, err)
	}
	restore()
	awaitAudit(t, b, hookID, "proposal,decision/approved")

	if _, err := c.Propose(ctx, wire.ProposeParams{Argv: []string{"true"}}); err != nil {
		t.Fatalf("first pending proposal: %v", err)
	}
	_, err = c.Propose(ctx, wire.ProposeParams{Argv: []string{"false"}})
	if code := refusalCode(t, err); code != wire.RefuseTooManyPending {
		t.Fatalf("second pending proposal with a cap of 1: %v, want %s", err, wire.RefuseTooManyPending)
	}
}

// TestApprovalNotActedOnWithoutAudit: a person's approval that cannot be
// written to the audit log does not start the command (a gate that cannot
// record refuses, as it does for a rule's decision).
func TestApprovalNotActedOnWithoutAudit(t *testing.T) {
	b := bridgetest.Start(t, bridgetest.Options{Steps: []approvertest.Step{approvertest.Hold}})
	c := b.Session(t, "")
	ctx := ctxT(t)
	res, err := c.Propose(ctx, wire.ProposeParams{Argv: []string{"true"}})
	if err != nil {
		t.Fatal(err)
	}
	if req := b.Approver.NextRequest(eventually); req == nil || req.ID != res.RunID {
		t.Fatalf("the approver was not asked about %s: %+v", res.RunID, req)
	}
	b.Audit.Close() // from now on every append fails
	if !b.Approver.Answer(res.RunID, agentbridge.Answer{Approved: true, By: "script"}) {
		t.Fatal("the request was not held")
	}
	_, err = c.Wait(ctx, wire.WaitParams{RunID: res.RunID})
	if code := refusalCode(t, err); code != wire.RefuseAuditFailed {
		t.Fatalf("wait after an unrecordable approval = %v, want %s", err, wire.RefuseAuditFailed)
	}
	if runs := b.Executor.Runs(); len(runs) != 0 {
		t.Fatalf("an approval that could not be audited started %d run(s)", len(runs))
	}
}

// lateApprover approves only once the request has ended (expired or
// withdrawn), like a card clicked at the very moment it expires.
type lateApprover struct{}

func (lateApprover) Ask(ctx context.Context, _ *agentbridge.ApprovalRequest) (agentbridge.Answer, error) {
	<-ctx.Done()
	return agentbridge.Answer{Approved: true, By: "late"}, nil
}

// TestApprovalAfterExpiryDoesNotCount: an approval that arrives only once
// the proposal expired is not acted on; the proposal expires and nothing
// runs. (The broker also discards an answer that it receives in the same
// instant as the deadline; that interleaving cannot be forced from a test,
// so this checks the outcome over many proposals.)
func TestApprovalAfterExpiryDoesNotCount(t *testing.T) {
	b := bridgetest.Start(t, bridgetest.Options{NoApprover: true, Settings: func(s *prefs.Settings) {
		s.ApprovalExpiry = 50 * time.Millisecond
		s.MaxPendingPerSession = 100
	}})
	b.Broker.SetApprover(lateApprover{})
	c := b.Session(t, "")
	ctx := ctxT(t)
	const proposals = 60
	ids := make([]string, 0, proposals)
	for range proposals {
		res, err := c.Propose(ctx, wire.ProposeParams{Argv: []string{"true"}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.RunID)
	}
	for _, id := range ids {
		_, err := c.Wait(ctx, wire.WaitParams{RunID: id})
		if code := refusalCode(t, err); code != wire.RefuseExpired {
			t.Fatalf("proposal %s approved after its expiry: %v, want %s", id, err, wire.RefuseExpired)
		}
	}
	if runs := b.Executor.Runs(); len(runs) != 0 {
		t.Fatalf("%d proposal(s) ran on an approval that came after the expiry", len(runs))
	}
}
