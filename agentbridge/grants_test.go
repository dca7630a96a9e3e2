package agentbridge_test

import (
	"os"
	osexec "os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/agentgate/agentgate/agentbridge/audit"
	"github.com/agentgate/agentgate/agentbridge/bridgetest"
	"github.com/agentgate/agentgate/agentbridge/wire"
	"github.com/agentgate/agentgate/exec/procspec"
	"github.com/agentgate/agentgate/prefs"
)

// TestAllowedByGrant: a temporary grant bound to the project, the provider
// and the resolved executable lets a proposal run without asking, and the
// decision is audited with the grant and its time left; a proposal it does
// not cover is asked about.
func TestAllowedByGrant(t *testing.T) {
	b := bridgetest.Start(t, bridgetest.Options{NoApprover: true})
	echo, err := osexec.LookPath("echo")
	if err != nil {
		t.Skip("no echo on PATH")
	}
	g, err := b.Grants.Give(prefs.GrantRequest{Kind: prefs.GrantExact, Argv: []string{"echo", "granted"}, Executable: echo,
		Project: b.Project, Provider: "claude", By: "card", For: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	c := b.Session(t, "claude")
	res, err := c.Propose(ctx, wire.ProposeParams{Argv: []string{"echo", "granted"}})
	if err != nil {
		t.Fatalf("propose: %v", err)
	}
	if res.State != "running" && res.State != "queued" {
		t.Fatalf("state %q, want it started without asking", res.State)
	}
	if _, out, err := c.WaitDone(ctx, res.RunID); err != nil || string(out) != "granted\n" {
		t.Fatalf("wait: %q %v", out, err)
	}
	awaitAudit(t, b, res.RunID, "proposal,decision/allowed_by_grant,run_start,run_end/exited,run_changes")
	for _, e := range b.AuditEntries(t) {
		if e.RunID == res.RunID && e.Kind == audit.KindDecision {
			if e.Grant == nil || e.Grant.ID != g.ID || e.Grant.LeftMS <= 0 || e.Grant.LeftMS > time.Hour.Milliseconds() || e.Executable != echo {
				t.Fatalf("decision %+v grant %+v, want the grant with its time left, bound to %s", e, e.Grant, echo)
			}
		}
	}
	// Another provider, or another argv, is not covered: nobody to ask here,
	// so it is refused.
	other := b.Session(t, "codex")
	if _, err := other.Propose(ctx, wire.ProposeParams{Argv: []string{"echo", "granted"}}); refusalCode(t, err) != wire.RefuseNoApprover {
		t.Fatalf("another provider's proposal: %v, want no_approver (not covered by a card grant)", err)
	}
	if _, err := c.Propose(ctx, wire.ProposeParams{Argv: []string{"echo", "granted", "more"}}); refusalCode(t, err) != wire.RefuseNoApprover {
		t.Fatalf("a longer argv: %v, want no_approver (not covered by an exact grant)", err)
	}
	if err := b.Grants.Revoke(g.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Propose(ctx, wire.ProposeParams{Argv: []string{"echo", "granted"}}); refusalCode(t, err) != wire.RefuseNoApprover {
		t.Fatalf("after revoke: %v, want no_approver", err)
	}
}

// TestGrantBoundToTheProgramsFile: a grant is bound to the identity of the
// program's file; once the file is rewritten (by anything, an allowed run
// included) the grant no longer allows it.
func TestGrantBoundToTheProgramsFile(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the program is a shell script")
	}
	b := bridgetest.Start(t, bridgetest.Options{NoApprover: true})
	tool := filepath.Join(b.Project, "tool.sh")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(tool, []byte("#!/bin/sh\necho harmless\n"), 0o755))
	id, err := procspec.StatFileID(tool)
	must(err)
	_, err = b.Grants.Give(prefs.GrantRequest{Kind: prefs.GrantExact, Argv: []string{"./tool.sh"}, Executable: tool, ProgramID: id,
		Project: b.Project, AllProviders: true, By: "terminal", For: time.Hour})
	must(err)
	ctx := ctxT(t)
	c := b.Session(t, "claude")
	res, err := c.Propose(ctx, wire.ProposeParams{Argv: []string{"./tool.sh"}})
	must(err)
	if _, out, err := c.WaitDone(ctx, res.RunID); err != nil || string(out) != "harmless\n" {
		t.Fatalf("the granted program: %q %v", out, err)
	}
	must(os.WriteFile(tool, []byte("#!/bin/sh\necho rewritten\n"), 0o755))
	if _, err := c.Propose(ctx, wire.ProposeParams{Argv: []string{"./tool.sh"}}); refusalCode(t, err) != wire.RefuseNoApprover {
		t.Fatalf("the rewritten program: %v, want no_approver (the grant is for the file as it was)", err)
	}
}
