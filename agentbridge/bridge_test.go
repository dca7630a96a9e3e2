package agentbridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/agentbridge"
	"github.com/agentgate/agentgate/agentbridge/approvertest"
	"github.com/agentgate/agentgate/agentbridge/audit"
	"github.com/agentgate/agentgate/agentbridge/bridgetest"
	"github.com/agentgate/agentgate/agentbridge/wire"
	"github.com/agentgate/agentgate/prefs"
)

func TestAllowedByRuleRunsAndRecordsProvenance(t *testing.T) {
	b := bridgetest.Start(t, bridgetest.Options{})
	rule := b.Allow(t, "echo")
	c := b.Session(t, "claude")
	ctx := ctxT(t)
	res, err := c.Propose(ctx, wire.ProposeParams{Argv: []string{"echo", "hello"}, Reason: "greet"})
	if err != nil {
		t.Fatalf("propose: %v", err)
	}
	if res.State != "running" {
		t.Fatalf("state = %q, want running", res.State)
	}
	if res.Rule == nil || res.Rule.Scope != "global" || res.Rule.File != rule.File || res.Rule.Line != rule.Line || res.Rule.Text != "echo" {
		t.Fatalf("rule = %+v, want global %s:%d", res.Rule, rule.File, rule.Line)
	}
	if !filepath.IsAbs(res.Executable) || res.Cwd != "." {
		t.Fatalf("executable %q cwd %q", res.Executable, res.Cwd)
	}
	w, out, err := c.WaitDone(ctx, res.RunID)
	if err != nil {
		t.Fatalf("wait: %v", err)
	}
	if w.State != "exited" || w.ExitCode == nil || *w.ExitCode != 0 || string(out) != "hello\n" {
		t.Fatalf("wait = %+v, stdout %q", w, out)
	}
	if len(b.Approver.Asked()) != 0 {
		t.Fatalf("a person was asked about an allow-listed command")
	}
	awaitAudit(t, b, res.RunID, "proposal,decision/allowed_by_rule,run_start,run_end/exited,run_changes")
	for _, e := range b.AuditEntries(t) {
		if e.RunID != res.RunID {
			continue
		}
		if e.Provider != "claude" || e.Client != "bridgetest" || e.Session == "" || e.PeerPID != os.Getpid() {
			t.Fatalf("entry without provenance: %+v", e)
		}
		switch e.Kind {
		case audit.KindDecision:
			if e.Rule == nil || e.Rule.Scope != "global" || e.Rule.File != rule.File || e.Rule.Line != rule.Line || e.Rule.Text != "echo" {
				t.Fatalf("decision rule = %+v", e.Rule)
			}
			if e.Executable != res.Executable || e.Cwd != b.Project || e.TimeoutMS != 120000 || e.StdinSHA256 == "" {
				t.Fatalf("decision not bound to the command: %+v", e)
			}
		case audit.KindRunStart:
			if e.PID <= 0 || e.Executable != res.Executable {
				t.Fatalf("run_start = %+v", e)
			}
		case audit.KindRunEnd:
			if e.ExitCode == nil || *e.ExitCode != 0 || e.StdoutBytes != 6 {
				t.Fatalf("run_end = %+v", e)
			}
		case audit.KindRunChanges:
			if e.Changes == nil || e.Changes.Cover == nil || len(e.Changes.Created)+len(e.Changes.Modified)+len(e.Changes.Deleted) != 0 {
				t.Fatalf("run_changes = %+v", e.Changes)
			}
		case audit.KindProposal:
			if joined(e.Argv) != "echo,hello" || e.Reason != "greet" {
				t.Fatalf("proposal = %+v", e)
			}
		}
	}
}

func TestApprovedByPersonRunsExactlyWhatWasShown(t *testing.T) {
	b := bridgetest.Start(t, bridgetest.Options{Steps: []approvertest.Step{approvertest.Approve}})
	c := b.Session(t, "")
	ctx := ctxT(t)
	sub := filepath.Join(b.Project, "sub")
	os.Mkdir(sub, 0o755)
	timeout := int64(5000)
	res, err := c.Propose(ctx, wire.ProposeParams{Argv: []string{"cat"}, Cwd: "sub", Stdin: "from stdin", TimeoutMS: &timeout, Reason: "check"})
	if err != nil || res.State != wire.StatePending {
		t.Fatalf("propose = %+v, %v; want pending", res, err)
	}
	w, out, err := c.WaitDone(ctx, res.RunID)
	if err != nil || w.State != "exited" || string(out) != "from stdin" {
		t.Fatalf("wait = %+v %q %v", w, out, err)
	}
	asked := b.Approver.Asked()
	if len(asked) != 1 {
		t.Fatalf("asked %d times", len(asked))
	}
	req := asked[0]
	if req.ID != res.RunID || joined(req.Command.Argv) != "cat" || req.Command.Dir != sub || string(req.Command.Stdin) != "from stdin" ||
		req.Command.Timeout != 5*time.Second || req.Reason != "check" || req.PeerPID != os.Getpid() || req.ThroughAgentShell {
		t.Fatalf("request = %+v", req)
	}
	if d := time.Until(req.Expires); d <= 0 || d > b.Settings().ApprovalExpiry {
		t.Fatalf("expires in %v", d)
	}
	run, ok := b.Executor.Get(res.RunID)
	if !ok {
		t.Fatalf("no run %s", res.RunID)
	}
	if cmd := run.Command(); cmd.Dir != sub || cmd.StdinSHA256 != req.Command.StdinSHA256 || cmd.Timeout != 5*time.Second || joined(cmd.Argv) != "cat" {
		t.Fatalf("ran %+v, not what was shown", cmd)
	}
	awaitAudit(t, b, res.RunID, "proposal,decision/approved,run_start,run_end/exited,run_changes")
}

func TestApproverCannotAlterWhatRuns(t *testing.T) {
	b := bridgetest.Start(t, bridgetest.Options{NoApprover: true})
	b.Broker.SetApprover(mutatingApprover{})
	c := b.Session(t, "")
	ctx := ctxT(t)
	res, err := c.Propose(ctx, wire.ProposeParams{Argv: []string{"echo", "shown"}})
	if err != nil {
		t.Fatal(err)
	}
	_, out, err := c.WaitDone(ctx, res.RunID)
	if err != nil || string(out) != "shown\n" {
		t.Fatalf("ran %q, %v; want what was shown", out, err)
	}
}

// mutatingApprover scribbles over the request it is shown, then approves.
type mutatingApprover struct{}

func (mutatingApprover) Ask(ctx context.Context, req *agentbridge.ApprovalRequest) (agentbridge.Answer, error) {
	req.Command.Argv[1] = "altered"
	req.Command.Argv = append(req.Command.Argv, "more")
	return agentbridge.Answer{Approved: true, By: "test"}, nil
}

func TestDeniedMessageReachesAgent(t *testing.T) {
	b := bridgetest.Start(t, bridgetest.Options{Steps: []approvertest.Step{approvertest.Deny("use make test instead")}})
	c := b.Session(t, "")
	ctx := ctxT(t)
	res, err := c.Propose(ctx, wire.ProposeParams{Argv: []string{"rm", "-rf", "build"}})
	if err != nil || res.State != wire.StatePending {
		t.Fatalf("propose = %+v, %v", res, err)
	}
	_, err = c.Wait(ctx, wire.WaitParams{RunID: res.RunID})
	if code := refusalCode(t, err); code != wire.RefuseDenied || !strings.Contains(err.Error(), "use make test instead") {
		t.Fatalf("wait error = %v", err)
	}
	// Asked again, the answer is the same; nothing ran.
	if _, err2 := c.Wait(ctx, wire.WaitParams{RunID: res.RunID}); err2 == nil || err2.Error() != err.Error() {
		t.Fatalf("second wait = %v", err2)
	}
	if _, ok := b.Executor.Get(res.RunID); ok {
		t.Fatalf("a denied command ran")
	}
	list, _ := c.List(ctx)
	if len(list.Runs) != 1 || list.Runs[0].State != wire.StateDenied {
		t.Fatalf("list = %+v", list)
	}
	var decision audit.Entry
	for _, e := range b.AuditEntries(t) {
		if e.RunID == res.RunID && e.Kind == audit.KindDecision {
			decision = e
		}
	}
	if decision.Decision != audit.DecisionDenied || decision.By != "script" || decision.Message != "use make test instead" {
		t.Fatalf("decision = %+v", decision)
	}
}

func TestPendingProposalExpires(t *testing.T) {
	b := bridgetest.Start(t, bridgetest.Options{Steps: []approvertest.Step{approvertest.Hold},
		Settings: func(s *prefs.Settings) { s.ApprovalExpiry = 300 * time.Millisecond }})
	c := b.Session(t, "")
	ctx := ctxT(t)
	res, err := c.Propose(ctx, wire.ProposeParams{Argv: []string{"true"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Wait(ctx, wire.WaitParams{RunID: res.RunID})
	if code := refusalCode(t, err); code != wire.RefuseExpired {
		t.Fatalf("wait error = %v, want expired", err)
	}
	out, ok := b.Approver.NextOutcome(eventually)
	if !ok || !errors.Is(out.Err, context.DeadlineExceeded) {
		t.Fatalf("approver saw %+v, want DeadlineExceeded", out)
	}
	awaitAudit(t, b, res.RunID, "proposal,decision/expired")
}

func TestWithdrawnWhilePending(t *testing.T) {
	b := bridgetest.Start(t, bridgetest.Options{Steps: []approvertest.Step{approvertest.Hold, approvertest.Hold}})
	c := b.Session(t, "")
	ctx := ctxT(t)
	res, err := c.Propose(ctx, wire.ProposeParams{Argv: []string{"true"}})
	if err != nil {
		t.Fatal(err)
	}
	if b.Approver.NextRequest(eventually) == nil {
		t.Fatal("approver never asked")
	}
	cr, err := c.Cancel(ctx, res.RunID)
	if err != nil || cr.State != wire.StateWithdrawn {
		t.Fatalf("cancel = %+v, %v", cr, err)
	}
	if out, ok := b.Approver.NextOutcome(eventually); !ok || !errors.Is(out.Err, context.Canceled) {
		t.Fatalf("approver saw %+v, want Canceled", out)
	}
	if _, err := c.Wait(ctx, wire.WaitParams{RunID: res.RunID}); refusalCode(t, err) != wire.RefuseWithdrawn {
		t.Fatalf("wait = %v", err)
	}
	if len(b.Broker.Pending()) != 0 {
		t.Fatalf("still pending: %+v", b.Broker.Pending())
	}

	// A dropped connection withdraws its pending proposals.
	c2 := b.Session(t, "")
	res2, err := c2.Propose(ctx, wire.ProposeParams{Argv: []string{"true"}})
	if err != nil {
		t.Fatal(err)
	}
	b.Approver.NextRequest(eventually)
	c2.Close()
	if out, ok := b.Approver.NextOutcome(eventually); !ok || !errors.Is(out.Err, context.Canceled) || out.Request.ID != res2.RunID {
		t.Fatalf("after disconnect approver saw %+v", out)
	}
	awaitAudit(t, b, res2.RunID, "proposal,decision/withdrawn")
}

func TestCancelledWhileRunning(t *testing.T) {
	b := bridgetest.Start(t, bridgetest.Options{})
	b.Allow(t, "sleep")
	c := b.Session(t, "")
	ctx := ctxT(t)
	res, err := c.Propose(ctx, wire.ProposeParams{Argv: []string{"sleep", "60"}})
	if err != nil || res.State != "running" {
		t.Fatalf("propose = %+v, %v", res, err)
	}
	cr, err := c.Cancel(ctx, res.RunID)
	if err != nil || cr.State != "cancelled" {
		t.Fatalf("cancel = %+v, %v", cr, err)
	}
	w, err := c.Wait(ctx, wire.WaitParams{RunID: res.RunID})
	if err != nil || w.State != "cancelled" {
		t.Fatalf("wait = %+v, %v", w, err)
	}
	awaitAudit(t, b, res.RunID, "proposal,decision/allowed_by_rule,run_start,run_end/cancelled,run_changes")
}

func TestOtherSessionGetsNotFound(t *testing.T) {
	b := bridgetest.Start(t, bridgetest.Options{})
	b.Allow(t, "sleep")
	owner := b.Session(t, "")
	other := b.Session(t, "")
	ctx := ctxT(t)
	res, err := owner.Propose(ctx, wire.ProposeParams{Argv: []string{"sleep", "30"}})
	if err != nil {
		t.Fatal(err)
	}
	const unknown = "20260101T000000.000000-000000000000"
	zero := int64(0)
	calls := map[string]func(id string) error{
		"wait": func(id string) error {
			_, err := other.Wait(ctx, wire.WaitParams{RunID: id, WaitMS: &zero})
			return err
		},
		"output": func(id string) error {
			_, err := other.Output(ctx, wire.OutputParams{RunID: id, Stream: "stdout"})
			return err
		},
		"cancel": func(id string) error { _, err := other.Cancel(ctx, id); return err },
	}
	for name, call := range calls {
		errTheirs, errUnknown := call(res.RunID), call(unknown)
		if refusalCode(t, errTheirs) != wire.RefuseNotFound || refusalCode(t, errUnknown) != wire.RefuseNotFound {
			t.Fatalf("%s: %v / %v, want not_found", name, errTheirs, errUnknown)
		}
		if strings.ReplaceAll(errTheirs.Error(), res.RunID, "ID") != strings.ReplaceAll(errUnknown.Error(), unknown, "ID") {
			t.Fatalf("%s: the answers differ, revealing existence: %q vs %q", name, errTheirs, errUnknown)
		}
	}
	if l, _ := other.List(ctx); len(l.Runs) != 0 {
		t.Fatalf("other session lists %+v", l.Runs)
	}
	w, err := owner.Wait(ctx, wire.WaitParams{RunID: res.RunID, WaitMS: &zero})
	if err != nil || w.State != "running" {
		t.Fatalf("the owner's run was touched: %+v %v", w, err)
	}
	owner.Cancel(ctx, res.RunID)
}

func TestProposeBeforeHello(t *testing.T) {
	b := bridgetest.Start(t, bridgetest.Options{})
	c := b.Dial(t)
	ctx := ctxT(t)
	_, err := c.Propose(ctx, wire.ProposeParams{Argv: []string{"true"}})
	if refusalCode(t, err) != wire.RefuseHelloRequired {
		t.Fatalf("propose before hello: %v", err)
	}
	if _, err := c.List(ctx); refusalCode(t, err) != wire.RefuseHelloRequired {
		t.Fatalf("list before hello: %v", err)
	}
	if _, err := c.Hello(ctx, wire.HelloParams{ProjectRoot: "relative/path"}); refusalCode(t, err) != wire.RefuseProjectInvalid {
		t.Fatalf("relative project root: %v", err)
	}
	if _, err := c.Hello(ctx, wire.HelloParams{ProjectRoot: b.Project, Provider: "../evil"}); refusalCode(t, err) != wire.RefuseProviderInvalid {
		t.Fatalf("bad provider: %v", err)
	}
	if _, err := c.Hello(ctx, wire.HelloParams{ProjectRoot: filepath.Join(b.Project, "missing")}); refusalCode(t, err) != wire.RefuseProjectInvalid {
		t.Fatalf("missing project root: %v", err)
	}
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink(b.Project, link)
	h, err := c.Hello(ctx, wire.HelloParams{ProjectRoot: link})
	if err != nil || h.ProjectRoot != b.Project || h.Session == "" {
		t.Fatalf("hello via symlink = %+v, %v", h, err)
	}
	if _, err := c.Hello(ctx, wire.HelloParams{ProjectRoot: b.Project}); refusalCode(t, err) != wire.RefuseHelloRepeated {
		t.Fatalf("second hello: %v", err)
	}
}

func TestMalformedAndOversizedFrames(t *testing.T) {
	b := bridgetest.Start(t, bridgetest.Options{})
	c := dialRaw(t, b)
	c.send(`{"jsonrpc":"2.0","id":1,"method":`)
	if r := c.recv(); r.Error == nil || r.Error.Code != wire.CodeParseError || string(r.ID) != "null" {
		t.Fatalf("parse error response = %+v", r)
	}
	c.send(`{"jsonrpc":"1.0","id":2,"method":"hello"}`)
	if r := c.recv(); r.Error == nil || r.Error.Code != wire.CodeInvalidRequest || string(r.ID) != "2" {
		t.Fatalf("invalid request response = %+v", r)
	}
	c.send(`{"jsonrpc":"2.0","id":3,"method":"hello","params":{"project_root":7}}`)
	if r := c.recv(); r.Error == nil || r.Error.Code != wire.CodeInvalidParams {
		t.Fatalf("invalid params response = %+v", r)
	}
	c.send(`{"jsonrpc":"2.0","id":4,"method":"hello","params":{"project_root":"/","bogus":1}}`)
	if r := c.recv(); r.Error == nil || r.Error.Code != wire.CodeInvalidParams || !strings.Contains(r.Error.Message, "bogus") {
		t.Fatalf("unknown field response = %+v", r)
	}
	c.send("\xff\xfe")
	if r := c.recv(); r.Error == nil || r.Error.Code != wire.CodeParseError {
		t.Fatalf("invalid UTF-8 response = %+v", r)
	}
	// The connection survived all of that.
	c.hello(b)

	big := dialRaw(t, b)
	big.send(`{"jsonrpc":"2.0","id":1,"method":"hello","params":{"client":"` + strings.Repeat("x", wire.MaxFrame) + `"}}`)
	r := big.recv()
	if r.Error == nil || r.Error.Code != wire.CodeInvalidRequest || r.Error.Data == nil || r.Error.Data.Code != wire.RefuseFrameTooLarge {
		t.Fatalf("oversized frame response = %+v", r)
	}
	big.expectClosed()
	// The bridge still serves others.
	dialRaw(t, b).hello(b)
}

func TestUnknownMethod(t *testing.T) {
	b := bridgetest.Start(t, bridgetest.Options{})
	c := dialRaw(t, b)
	c.send(`{"jsonrpc":"2.0","id":"u","method":"exec.run","params":{}}`)
	if r := c.recv(); r.Error == nil || r.Error.Code != wire.CodeMethodNotFound || string(r.ID) != `"u"` {
		t.Fatalf("unknown method response = %+v", r)
	}
	// A notification gets no answer, even for an unknown method: the next
	// response is the hello's.
	c.send(`{"jsonrpc":"2.0","method":"nope"}`)
	c.hello(b)
}

func TestValidationRefusedBeforeAnyoneIsAsked(t *testing.T) {
	b := bridgetest.Start(t, bridgetest.Options{Steps: []approvertest.Step{approvertest.Approve}})
	outside := t.TempDir()
	os.Symlink(outside, filepath.Join(b.Project, "escape"))
	c := b.Session(t, "")
	ctx := ctxT(t)
	zero, big := int64(0), int64(600001)
	tests := []struct {
		name string
		p    wire.ProposeParams
		code string
	}{
		{"redirection", wire.ProposeParams{Argv: []string{"ls", ">", "out.txt"}}, "redirection_token"},
		{"fd redirection", wire.ProposeParams{Argv: []string{"ls", "2>&1"}}, "redirection_token"},
		{"empty argv", wire.ProposeParams{Argv: nil}, "empty_argv"},
		{"nul byte", wire.ProposeParams{Argv: []string{"echo", "a\x00b"}}, "nul_byte"},
		{"cwd outside", wire.ProposeParams{Argv: []string{"ls"}, Cwd: "../.."}, "cwd_outside_project"},
		{"symlink escape", wire.ProposeParams{Argv: []string{"ls"}, Cwd: "escape"}, "cwd_outside_project"},
		{"timeout zero", wire.ProposeParams{Argv: []string{"ls"}, TimeoutMS: &zero}, "timeout_out_of_range"},
		{"timeout too big", wire.ProposeParams{Argv: []string{"ls"}, TimeoutMS: &big}, "timeout_out_of_range"},
		{"not found", wire.ProposeParams{Argv: []string{"no-such-program-agentgate"}}, "executable_not_found"},
		{"bad base64", wire.ProposeParams{Argv: []string{"cat"}, Stdin: "!!", StdinEncoding: "base64"}, "bad_encoding"},
	}
	for _, tc := range tests {
		_, err := c.Propose(ctx, tc.p)
		if code := refusalCode(t, err); code != tc.code {
			t.Errorf("%s: code %q (%v), want %q", tc.name, code, err, tc.code)
		}
	}
	if n := len(b.Approver.Asked()); n != 0 {
		t.Fatalf("a person was asked %d times about invalid proposals", n)
	}
	refusals := 0
	for _, e := range b.AuditEntries(t) {
		if e.Kind == audit.KindRefusal {
			refusals++
		}
	}
	if refusals != len(tests) {
		t.Fatalf("%d refusals audited, want %d", refusals, len(tests))
	}
}

func TestNoApproverRefuses(t *testing.T) {
	b := bridgetest.Start(t, bridgetest.Options{NoApprover: true})
	c := b.Session(t, "")
	_, err := c.Propose(ctxT(t), wire.ProposeParams{Argv: []string{"true"}})
	if refusalCode(t, err) != wire.RefuseNoApprover {
		t.Fatalf("err = %v, want no_approver", err)
	}
	hookRes, err := c.HookAsk(ctxT(t), wire.HookAskParams{CommandLine: "ls | wc -l"})
	if refusalCode(t, err) != wire.RefuseNoApprover {
		t.Fatalf("hook.ask = %+v, %v; want no_approver", hookRes, err)
	}
}

func TestApproverFailureRefuses(t *testing.T) {
	b := bridgetest.Start(t, bridgetest.Options{Steps: []approvertest.Step{{Err: errors.New("display gone")}}})
	c := b.Session(t, "")
	ctx := ctxT(t)
	res, err := c.Propose(ctx, wire.ProposeParams{Argv: []string{"true"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Wait(ctx, wire.WaitParams{RunID: res.RunID}); refusalCode(t, err) != wire.RefuseNoApprover {
		t.Fatalf("wait = %v, want no_approver", err)
	}
}

func TestTooManyPending(t *testing.T) {
	b := bridgetest.Start(t, bridgetest.Options{Steps: []approvertest.Step{approvertest.Hold, approvertest.Hold},
		Settings: func(s *prefs.Settings) { s.MaxPendingPerSession = 2 }})
	c := b.Session(t, "")
	ctx := ctxT(t)
	for range 2 {
		if _, err := c.Propose(ctx, wire.ProposeParams{Argv: []string{"true"}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Propose(ctx, wire.ProposeParams{Argv: []string{"true"}}); refusalCode(t, err) != wire.RefuseTooManyPending {
		t.Fatalf("third = %v, want too_many_pending", err)
	}
	// Another session has its own allowance.
	if _, err := b.Session(t, "").Propose(ctx, wire.ProposeParams{Argv: []string{"true"}}); err != nil {
		t.Fatalf("other session: %v", err)
	}
}

func TestQueuedBeyondConcurrentCeiling(t *testing.T) {
	b := bridgetest.Start(t, bridgetest.Options{Settings: func(s *prefs.Settings) { s.MaxConcurrentRuns = 1 }})
	b.Allow(t, "sleep")
	b.Allow(t, "echo")
	c := b.Session(t, "")
	ctx := ctxT(t)
	first, err := c.Propose(ctx, wire.ProposeParams{Argv: []string{"sleep", "60"}})
	if err != nil || first.State != "running" {
		t.Fatalf("first = %+v, %v", first, err)
	}
	second, err := c.Propose(ctx, wire.ProposeParams{Argv: []string{"echo", "second"}})
	if err != nil || second.State != wire.StateQueued {
		t.Fatalf("second = %+v, %v; want queued", second, err)
	}
	third, err := c.Propose(ctx, wire.ProposeParams{Argv: []string{"echo", "third"}})
	if err != nil || third.State != wire.StateQueued {
		t.Fatalf("third = %+v, %v; want queued", third, err)
	}
	zero := int64(0)
	if w, err := c.Wait(ctx, wire.WaitParams{RunID: second.RunID, WaitMS: &zero}); err != nil || w.State != wire.StateQueued {
		t.Fatalf("wait on queued = %+v, %v", w, err)
	}
	if cr, err := c.Cancel(ctx, third.RunID); err != nil || cr.State != "cancelled" {
		t.Fatalf("cancel queued = %+v, %v", cr, err)
	}
	c.Cancel(ctx, first.RunID)
	w, out, err := c.WaitDone(ctx, second.RunID)
	if err != nil || w.State != "exited" || string(out) != "second\n" {
		t.Fatalf("second = %+v %q %v", w, out, err)
	}
	if _, ok := b.Executor.Get(third.RunID); ok {
		t.Fatalf("the cancelled queued run started")
	}
	if w, err := c.Wait(ctx, wire.WaitParams{RunID: third.RunID, WaitMS: &zero}); err != nil || w.State != "cancelled" {
		t.Fatalf("third after cancel = %+v, %v", w, err)
	}
}

func TestHookAsk(t *testing.T) {
	b := bridgetest.Start(t, bridgetest.Options{Steps: []approvertest.Step{{Approve: true, Message: "ok once"}, approvertest.Deny("not in prod")}})
	c := b.Session(t, "claude")
	ctx := ctxT(t)
	res, err := c.HookAsk(ctx, wire.HookAskParams{CommandLine: "ls | wc -l", Cwd: b.Project, AgentTool: "Bash", Reason: "count"})
	if err != nil || res.Decision != "allow" || res.Message != "ok once" {
		t.Fatalf("hook allow = %+v, %v", res, err)
	}
	res, err = c.HookAsk(ctx, wire.HookAskParams{CommandLine: "kubectl delete ns prod"})
	if err != nil || res.Decision != "deny" || res.Message != "not in prod" {
		t.Fatalf("hook deny = %+v, %v", res, err)
	}
	req := b.Approver.Asked()[0]
	if !req.ThroughAgentShell || req.CommandLine != "ls | wc -l" || req.AgentTool != "Bash" || req.Provider != "claude" || len(req.Command.Argv) != 0 {
		t.Fatalf("request = %+v", req)
	}
	if l, _ := c.List(ctx); len(l.Runs) != 0 {
		t.Fatalf("hook questions listed as runs: %+v", l.Runs)
	}
	if len(b.Executor.Runs()) != 0 {
		t.Fatalf("a hook question ran something")
	}
}

func TestPersonControls(t *testing.T) {
	b := bridgetest.Start(t, bridgetest.Options{Steps: []approvertest.Step{approvertest.Hold, approvertest.Hold, approvertest.Hold}})
	b.Allow(t, "sleep")
	changes, stop := b.Broker.Subscribe()
	defer stop()
	c := b.Session(t, "")
	ctx := ctxT(t)
	p1, _ := c.Propose(ctx, wire.ProposeParams{Argv: []string{"true"}})
	p2, _ := c.Propose(ctx, wire.ProposeParams{Argv: []string{"false"}})
	select {
	case <-changes:
	case <-time.After(eventually):
		t.Fatal("no change notification")
	}
	pending := b.Broker.Pending()
	if len(pending) != 2 || pending[0].ID != p1.RunID || pending[1].ID != p2.RunID {
		t.Fatalf("pending = %+v", pending)
	}
	// The person cancels one pending proposal from the UI.
	if err := b.Broker.CancelRun(p1.RunID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Wait(ctx, wire.WaitParams{RunID: p1.RunID}); refusalCode(t, err) != wire.RefuseDenied {
		t.Fatalf("cancelled pending = %v", err)
	}
	running, err := c.Propose(ctx, wire.ProposeParams{Argv: []string{"sleep", "60"}})
	if err != nil {
		t.Fatal(err)
	}
	b.Broker.StopEverything()
	if _, err := c.Wait(ctx, wire.WaitParams{RunID: p2.RunID}); refusalCode(t, err) != wire.RefuseStopped {
		t.Fatalf("pending after stop = %v", err)
	}
	w, err := c.Wait(ctx, wire.WaitParams{RunID: running.RunID})
	if err != nil || w.State != "cancelled" {
		t.Fatalf("running after stop = %+v, %v", w, err)
	}
	if len(b.Broker.Pending()) != 0 {
		t.Fatalf("pending after stop: %d", len(b.Broker.Pending()))
	}
	if err := b.Broker.CancelRun("no-such-run"); err == nil {
		t.Fatalf("cancel of an unknown run succeeded")
	}
}

func TestOutputStreamsAndCursors(t *testing.T) {
	b := bridgetest.Start(t, bridgetest.Options{})
	b.Allow(t, "sh")
	c := b.Session(t, "")
	ctx := ctxT(t)
	res, err := c.Propose(ctx, wire.ProposeParams{Argv: []string{"sh", "-c", `printf 'caf\303\251 \377 end'; printf 'oops' >&2`}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.WaitDone(ctx, res.RunID); err != nil {
		t.Fatal(err)
	}
	out, err := c.Output(ctx, wire.OutputParams{RunID: res.RunID, Stream: "stdout", MaxBytes: 16, Cursor: 0})
	if err != nil || out.Data != "café \\xff end" || !out.EOF || out.Cursor != 11 {
		t.Fatalf("stdout text = %+v, %v", out, err)
	}
	raw, err := c.Output(ctx, wire.OutputParams{RunID: res.RunID, Stream: "stdout", Encoding: "base64", Cursor: 7})
	if err != nil || raw.Data != "IGVuZA==" || raw.Encoding != "base64" || raw.Cursor != 11 {
		t.Fatalf("stdout base64 from 7 = %+v, %v", raw, err)
	}
	se, err := c.Output(ctx, wire.OutputParams{RunID: res.RunID, Stream: "stderr"})
	if err != nil || se.Data != "oops" || !se.EOF {
		t.Fatalf("stderr = %+v, %v", se, err)
	}
	if _, err := c.Output(ctx, wire.OutputParams{RunID: res.RunID, Stream: "stdin"}); refusalCode(t, err) != "jsonrpc_-32602" {
		t.Fatalf("bad stream = %v", err)
	}
}

func TestSessionForgetsOldestFinishedRuns(t *testing.T) {
	b := bridgetest.Start(t, bridgetest.Options{MaxFinishedPerSession: 3})
	b.Allow(t, "echo")
	c := b.Session(t, "")
	ctx := ctxT(t)
	var ids []string
	for i := range 5 {
		res, err := c.Propose(ctx, wire.ProposeParams{Argv: []string{"echo", string(rune('a' + i))}})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.WaitDone(ctx, res.RunID); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.RunID)
	}
	l, err := c.List(ctx)
	if err != nil || len(l.Runs) != 3 || l.Runs[0].RunID != ids[2] || l.Runs[2].RunID != ids[4] {
		t.Fatalf("list = %+v, %v; want the newest 3", l.Runs, err)
	}
	zero := int64(0)
	if _, err := c.Wait(ctx, wire.WaitParams{RunID: ids[0], WaitMS: &zero}); refusalCode(t, err) != wire.RefuseNotFound {
		t.Fatalf("wait on a forgotten run = %v", err)
	}
	if _, ok := b.Executor.Get(ids[0]); ok {
		t.Fatalf("the executor still holds a forgotten run")
	}
}

// TestProposeWithWait checks exec.propose with wait_ms: an allowed command
// comes back finished with its output in one call; a denied one comes back
// as the denial (nothing ran); a bad encoding is refused before anything is
// proposed.
func TestProposeWithWait(t *testing.T) {
	b := bridgetest.Start(t, bridgetest.Options{Steps: []approvertest.Step{approvertest.Deny("not now")}})
	b.Allow(t, "echo")
	c := b.Session(t, "")
	ctx := ctxT(t)
	wait := int64(eventually.Milliseconds())
	res, err := c.Propose(ctx, wire.ProposeParams{Argv: []string{"echo", "hi"}, WaitMS: &wait})
	if err != nil || res.Wait == nil {
		t.Fatalf("propose = %+v, %v", res, err)
	}
	if res.State != "running" || res.Wait.State != "exited" || res.Wait.ExitCode == nil || *res.Wait.ExitCode != 0 ||
		res.Wait.Stdout.Data != "hi\n" || !res.Wait.Stdout.EOF {
		t.Fatalf("propose with wait_ms = %+v, wait %+v", res, *res.Wait)
	}

	_, err = c.Propose(ctx, wire.ProposeParams{Argv: []string{"rm", "-rf", "build"}, WaitMS: &wait})
	if code := refusalCode(t, err); code != wire.RefuseDenied || !strings.Contains(err.Error(), "not now") {
		t.Fatalf("denied propose with wait_ms: %v", err)
	}

	before, _ := c.List(ctx)
	_, err = c.Propose(ctx, wire.ProposeParams{Argv: []string{"echo", "x"}, WaitMS: &wait, Encoding: "utf-16"})
	if code := refusalCode(t, err); code != wire.RefuseBadEncoding {
		t.Fatalf("bad encoding: %v", err)
	}
	after, _ := c.List(ctx)
	if len(after.Runs) != len(before.Runs) {
		t.Fatalf("a proposal with a bad encoding was taken: %d runs before, %d after", len(before.Runs), len(after.Runs))
	}
}

// TestChangesFollowTheExit: exec.wait answers with the exit as soon as it
// is known, the change summary pending or not; a later exec.wait carries
// the summary, which names a file the run created under a gitignored
// node_modules/.
func TestChangesFollowTheExit(t *testing.T) {
	b := bridgetest.Start(t, bridgetest.Options{})
	b.Allow(t, "sh")
	if err := os.WriteFile(filepath.Join(b.Project, ".gitignore"), []byte("node_modules/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := b.Session(t, "")
	ctx := ctxT(t)
	res, err := c.Propose(ctx, wire.ProposeParams{Argv: []string{"sh", "-c", "mkdir -p node_modules/pkg && echo x > node_modules/pkg/new.js"}})
	if err != nil {
		t.Fatalf("propose: %v", err)
	}
	w, _, err := c.WaitDone(ctx, res.RunID)
	if err != nil || w.State != "exited" {
		t.Fatalf("wait = %+v, %v", w, err)
	}
	if w.Changes == nil && !w.ChangesPending {
		t.Fatalf("an ended run's result has neither changes nor changes_pending: %+v", w)
	}
	deadline := time.Now().Add(eventually)
	for w.ChangesPending {
		if time.Now().After(deadline) {
			t.Fatal("the change summary never came")
		}
		zero := int64(0)
		if w, err = c.Wait(ctx, wire.WaitParams{RunID: res.RunID, WaitMS: &zero}); err != nil {
			t.Fatalf("wait: %v", err)
		}
	}
	got, _ := json.Marshal(w.Changes)
	var changes struct {
		Created []string `json:"created"`
	}
	json.Unmarshal(got, &changes)
	if strings.Join(changes.Created, ",") != "node_modules/,node_modules/pkg/,node_modules/pkg/new.js" {
		t.Fatalf("changes = %s", got)
	}
}
