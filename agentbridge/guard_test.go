package agentbridge_test

import (
	"errors"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/agentbridge/approvertest"
	"github.com/agentgate/agentgate/agentbridge/bridgetest"
	"github.com/agentgate/agentgate/agentbridge/client"
	"github.com/agentgate/agentgate/agentbridge/wire"
	"github.com/agentgate/agentgate/prefs"
)

// TestGuardAsksAboutRuleMatchedDangerousArguments: the rule `sort` allows
// `sort -u in.txt` without asking, but `sort -o FILE` goes to the person,
// who is shown the rule and the finding; a denial runs nothing.
func TestGuardAsksAboutRuleMatchedDangerousArguments(t *testing.T) {
	b := bridgetest.Start(t, bridgetest.Options{Steps: []approvertest.Step{approvertest.Deny("no")}})
	b.Allow(t, "sort")
	os.WriteFile(filepath.Join(b.Project, "in.txt"), []byte("b\na\n"), 0o600)
	c := b.Session(t, "claude")
	ctx := ctxT(t)

	res, err := c.Propose(ctx, wire.ProposeParams{Argv: []string{"sort", "-u", "in.txt"}})
	if err != nil || res.State == wire.StatePending {
		t.Fatalf("everyday sort: %+v, %v", res, err)
	}
	if _, out, err := c.WaitDone(ctx, res.RunID); err != nil || string(out) != "a\nb\n" {
		t.Fatalf("sort -u: %q, %v", out, err)
	}

	outside := filepath.Join(t.TempDir(), "written")
	res, err = c.Propose(ctx, wire.ProposeParams{Argv: []string{"sort", "-uo" + outside, "in.txt"}})
	if err != nil || res.State != wire.StatePending {
		t.Fatalf("sort -o was not sent to a person: %+v, %v", res, err)
	}
	req := b.Approver.NextRequest(eventually)
	if req == nil {
		t.Fatal("the person was not asked")
	}
	if req.MatchedRule == nil || joined(req.MatchedRule.Tokens) != "sort" || len(req.Findings) != 1 || req.Findings[0].Arg != 1 ||
		!strings.Contains(req.Findings[0].Why, "writes the sorted output to a file anywhere") {
		t.Fatalf("request rule %+v findings %+v", req.MatchedRule, req.Findings)
	}
	if w, _, err := c.WaitDone(ctx, res.RunID); err == nil || w.State == "exited" {
		t.Fatalf("denied command: %+v, %v", w, err)
	}
	if _, err := os.Stat(outside); err == nil {
		t.Fatal("sort -o wrote its file although the person denied it")
	}
}

// TestGuardRefusesWithNobodyToAsk: without an approver the refusal names
// the rule, the argument and why.
func TestGuardRefusesWithNobodyToAsk(t *testing.T) {
	b := bridgetest.Start(t, bridgetest.Options{NoApprover: true})
	b.Allow(t, "env")
	c := b.Session(t, "claude")
	_, err := c.Propose(ctxT(t), wire.ProposeParams{Argv: []string{"env", "LD_PRELOAD=/tmp/x.so", "true"}})
	if refusalCode(t, err) != wire.RefuseNoApprover {
		t.Fatalf("refusal %v", err)
	}
	var remote *client.Error
	msg := err.Error()
	if errors.As(err, &remote) {
		msg = remote.Message
	}
	for _, want := range []string{"rule «env»", "argument guard", "LD_PRELOAD", "nobody can be asked"} {
		if !strings.Contains(msg, want) {
			t.Errorf("refusal %q does not mention %q", msg, want)
		}
	}
	if len(b.Executor.Runs()) != 0 {
		t.Fatal("something ran")
	}
}

// TestGuardReadsTheRepositoryConfiguration: a run that wrote
// core.fsmonitor into the project's .git/config cannot get it run by the
// rule `git status`: the person is asked and shown the key and value.
func TestGuardReadsTheRepositoryConfiguration(t *testing.T) {
	b := bridgetest.Start(t, bridgetest.Options{Steps: []approvertest.Step{approvertest.Deny("no")}})
	b.Allow(t, "git", "status")
	os.MkdirAll(filepath.Join(b.Project, ".git", "objects"), 0o700)
	os.MkdirAll(filepath.Join(b.Project, ".git", "refs"), 0o700)
	os.WriteFile(filepath.Join(b.Project, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o600)
	marker := filepath.Join(t.TempDir(), "pwned")
	os.WriteFile(filepath.Join(b.Project, ".git", "config"), []byte("[core]\n\tfsmonitor = touch "+marker+"\n"), 0o600)
	c := b.Session(t, "claude")
	ctx := ctxT(t)
	res, err := c.Propose(ctx, wire.ProposeParams{Argv: []string{"git", "status"}})
	if err != nil || res.State != wire.StatePending {
		t.Fatalf("git status with a core.fsmonitor was not sent to a person: %+v, %v", res, err)
	}
	req := b.Approver.NextRequest(eventually)
	if req == nil || len(req.Findings) == 0 || !strings.Contains(req.Findings[0].Text, "core.fsmonitor = 'touch ") {
		t.Fatalf("request %+v", req)
	}
	c.WaitDone(ctx, res.RunID)
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("core.fsmonitor ran")
	}
}

// TestHookAskShowsFindings: a hook question for literal words carries the
// guard's findings and the matched rule to the card.
func TestHookAskShowsFindings(t *testing.T) {
	b := bridgetest.Start(t, bridgetest.Options{Steps: []approvertest.Step{approvertest.Deny("no")}})
	b.Allow(t, "git", "diff")
	c := b.Session(t, "claude")
	res, err := c.HookAsk(ctxT(t), wire.HookAskParams{CommandLine: "git diff --output=/tmp/x", Cwd: b.Project, AgentTool: "Bash"})
	if err != nil || res.Decision != "deny" {
		t.Fatalf("hook ask = %+v, %v", res, err)
	}
	req := b.Approver.Asked()[0]
	if req.MatchedRule == nil || len(req.Findings) != 1 || !strings.Contains(req.Findings[0].Text, "--output=/tmp/x") {
		t.Fatalf("request rule %+v findings %+v", req.MatchedRule, req.Findings)
	}
}

// TestGuardAppliesToGrants: a program grant for sort allows `sort -u` but
// not `sort -o FILE`, as a rule for sort would.
func TestGuardAppliesToGrants(t *testing.T) {
	b := bridgetest.Start(t, bridgetest.Options{NoApprover: true})
	sort, err := osexec.LookPath("sort")
	if err != nil {
		t.Skip("no sort on PATH")
	}
	if _, err := b.Grants.Give(prefs.GrantRequest{Kind: prefs.GrantProgram, Argv: []string{"sort"}, Executable: sort,
		Project: b.Project, Provider: "claude", By: "card", For: time.Hour}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(b.Project, "in.txt"), []byte("b\na\n"), 0o600)
	c := b.Session(t, "claude")
	ctx := ctxT(t)
	if res, err := c.Propose(ctx, wire.ProposeParams{Argv: []string{"sort", "-u", "in.txt"}}); err != nil || res.State == wire.StatePending {
		t.Fatalf("sort -u under a program grant: %+v, %v", res, err)
	}
	outside := filepath.Join(t.TempDir(), "x")
	if _, err := c.Propose(ctx, wire.ProposeParams{Argv: []string{"sort", "-o", outside, "in.txt"}}); refusalCode(t, err) != wire.RefuseNoApprover {
		t.Fatalf("sort -o under a program grant: %v, want no_approver", err)
	}
	if _, err := os.Stat(outside); err == nil {
		t.Fatal("sort -o wrote its file")
	}
}
