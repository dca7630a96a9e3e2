package agentbridge_test

import (
	"strings"
	"testing"

	"github.com/agentgate/agentgate/agentbridge"
	"github.com/agentgate/agentgate/agentbridge/approvertest"
	"github.com/agentgate/agentgate/agentbridge/audit"
	"github.com/agentgate/agentgate/agentbridge/bridgetest"
	"github.com/agentgate/agentgate/agentbridge/wire"
)

// TestApprovalWithoutWriteConfinement: the person is shown how the run
// would be confined, and a one-time approval without write confinement is
// audited as such, with the confinement the run got in its run_start; a
// rule never carries it.
func TestApprovalWithoutWriteConfinement(t *testing.T) {
	b := bridgetest.Start(t, bridgetest.Options{Steps: []approvertest.Step{approvertest.Hold}})
	c := b.Session(t, "")
	ctx := ctxT(t)
	res, err := c.Propose(ctx, wire.ProposeParams{Argv: []string{"true"}})
	if err != nil {
		t.Fatal(err)
	}
	req := b.Approver.NextRequest(eventually)
	if req == nil {
		t.Fatal("the person was not asked")
	}
	if req.Confinement.Unconfined == "" && len(req.Confinement.Writes) == 0 {
		t.Errorf("the request says nothing of the run's confinement: %+v", req.Confinement)
	}
	b.Approver.Answer(req.ID, agentbridge.Answer{Approved: true, By: "card", WithoutWriteConfinement: true})
	wait := int64(10000)
	if _, err := c.Wait(ctx, wire.WaitParams{RunID: res.RunID, WaitMS: &wait}); err != nil {
		t.Fatal(err)
	}
	awaitAudit(t, b, res.RunID, "proposal,decision/approved,run_start,run_end/exited,run_changes")
	var decided, started bool
	for _, e := range b.AuditEntries(t) {
		switch {
		case e.RunID == res.RunID && e.Kind == audit.KindDecision:
			decided = e.WithoutWriteConfinement
		case e.RunID == res.RunID && e.Kind == audit.KindRunStart:
			started = e.Confinement != nil
		}
	}
	if !decided || !started {
		t.Errorf("audit: decision without write confinement %v, run_start with confinement %v", decided, started)
	}

	b.Allow(t, "true")
	res, err = c.Propose(ctx, wire.ProposeParams{Argv: []string{"true"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range b.AuditEntries(t) {
		if e.RunID == res.RunID && e.WithoutWriteConfinement {
			t.Errorf("a rule-allowed run was audited without write confinement: %+v", e)
		}
	}
}

// TestQuestionShowsProtectedChanges: a run that changed a file that steers
// agents and tools (here it creates .mcp.json) is shown on the next
// question about the project, until a person has answered one that showed
// it; the audit log's run_end names the change.
func TestQuestionShowsProtectedChanges(t *testing.T) {
	b := bridgetest.Start(t, bridgetest.Options{Steps: []approvertest.Step{approvertest.Approve, approvertest.Deny("seen"), approvertest.Deny("again")}})
	c := b.Session(t, "")
	ctx := ctxT(t)
	wait := int64(10000)
	res, err := c.Propose(ctx, wire.ProposeParams{Argv: []string{"touch", ".mcp.json"}})
	if err != nil {
		t.Fatal(err)
	}
	if first := b.Approver.NextRequest(eventually); first == nil || len(first.ProtectedChanged) != 0 {
		t.Fatalf("first question: %+v", first)
	}
	if w, err := c.Wait(ctx, wire.WaitParams{RunID: res.RunID, WaitMS: &wait}); err != nil || w.State != "exited" {
		t.Fatalf("wait: %+v %v", w, err)
	}
	var audited []string
	for _, e := range b.AuditEntries(t) {
		if e.RunID == res.RunID && e.Kind == audit.KindRunEnd {
			audited = e.ProtectedChanged
		}
	}
	if len(audited) != 1 || audited[0] != "created .mcp.json" {
		t.Errorf("run_end protected_changed %q", audited)
	}

	for i, want := range []int{1, 0} {
		if _, err := c.Propose(ctx, wire.ProposeParams{Argv: []string{"ls"}}); err != nil {
			t.Fatal(err)
		}
		req := b.Approver.NextRequest(eventually)
		if req == nil {
			t.Fatal("the person was not asked")
		}
		if len(req.ProtectedChanged) != want {
			t.Fatalf("question %d shows %q, want %d line(s)", i+2, req.ProtectedChanged, want)
		}
		if want == 1 && !strings.Contains(req.ProtectedChanged[0], "touch .mcp.json (run "+res.RunID+"): created .mcp.json") {
			t.Errorf("line %q", req.ProtectedChanged[0])
		}
	}
}
