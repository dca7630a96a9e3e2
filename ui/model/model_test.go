package model_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentgate/agentgate/agentbridge"
	"github.com/agentgate/agentgate/exec"
	"github.com/agentgate/agentgate/prefs"
	"github.com/agentgate/agentgate/ui/model"
	"github.com/agentgate/agentgate/ui/model/modeltest"
	"github.com/agentgate/agentgate/unixpg"
)

// TestMain lets the test binary serve as exec's per-run supervisor.
func TestMain(m *testing.M) {
	unixpg.MaybeSupervise()
	os.Exit(m.Run())
}

func TestQueuePagingAndAnswers(t *testing.T) {
	q := &model.Queue{}
	ctx := context.Background()
	a := modeltest.Ask(t, ctx, q, modeltest.Request("a", "ls"))
	b := modeltest.Ask(t, ctx, q, modeltest.Request("b", "make"))
	c := modeltest.Ask(t, ctx, q, modeltest.Request("c", "go", "test"))

	req, pos, total := q.Current()
	assert.Equal(t, "a", req.ID)
	assert.Equal(t, [2]int{1, 3}, [2]int{pos, total})
	assert.True(t, q.Step(+1))
	req, pos, _ = q.Current()
	assert.Equal(t, "b", req.ID)
	assert.Equal(t, 2, pos)
	assert.True(t, q.Step(+5), "clamped to the last")
	assert.False(t, q.Step(+1))
	req, _, _ = q.Current()
	assert.Equal(t, "c", req.ID)

	// Answering an earlier proposal keeps the current one shown.
	require.NoError(t, q.Answer("a", agentbridge.Answer{Approved: true, By: "card"}))
	assert.True(t, modeltest.Result(t, a).Answer.Approved)
	req, pos, total = q.Current()
	assert.Equal(t, "c", req.ID)
	assert.Equal(t, [2]int{2, 2}, [2]int{pos, total})

	assert.ErrorIs(t, q.Answer("a", agentbridge.Answer{}), model.ErrAnswered, "a second answer is refused")
	assert.True(t, q.Select("b"))
	require.NoError(t, q.Answer("b", agentbridge.Answer{Message: "no"}))
	r := modeltest.Result(t, b)
	assert.False(t, r.Answer.Approved)
	assert.Equal(t, "no", r.Answer.Message)
	assert.Equal(t, 1, q.DenyAll("stop"))
	assert.Equal(t, "stop", modeltest.Result(t, c).Answer.Message)
	req, _, _ = q.Current()
	assert.Nil(t, req)
}

func TestQueueExpiryAndWithdrawal(t *testing.T) {
	var expired atomic.Int32
	q := &model.Queue{OnExpire: func(*agentbridge.ApprovalRequest) { expired.Add(1) }}

	ctx, cancel := context.WithCancel(context.Background())
	ch := modeltest.Ask(t, ctx, q, modeltest.Request("w", "ls"))
	cancel()
	r := modeltest.Result(t, ch)
	assert.ErrorIs(t, r.Err, context.Canceled)
	assert.Equal(t, 0, q.Len())
	assert.Zero(t, expired.Load(), "a withdrawal is not an expiry")

	dctx, dcancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer dcancel()
	r = modeltest.Result(t, func() <-chan modeltest.Asked {
		ch := make(chan modeltest.Asked, 1)
		go func() {
			a, err := q.Ask(dctx, modeltest.Request("e", "ls"))
			ch <- modeltest.Asked{Answer: a, Err: err}
		}()
		return ch
	}())
	assert.ErrorIs(t, r.Err, context.DeadlineExceeded)
	assert.EqualValues(t, 1, expired.Load(), "the person is notified of the expiry")
	assert.Equal(t, 0, q.Len())
}

func TestCardArmingDelayAndEsc(t *testing.T) {
	clock := modeltest.NewClock(time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC))
	q := &model.Queue{}
	m := &model.CardModel{Queue: q, Rules: &modeltest.Rules{}, Now: clock.Now}
	assert.ErrorIs(t, m.Approve(), model.ErrNothingPending)

	ch := modeltest.Ask(t, context.Background(), q, modeltest.Request("a", "ls"))
	req, changed := m.Sync()
	require.True(t, changed)
	assert.Equal(t, "a", req.ID)

	// Keys or clicks at once approve nothing, and deny nothing.
	assert.ErrorIs(t, m.Approve(), model.ErrNotArmed)
	assert.ErrorIs(t, m.Deny("x"), model.ErrNotArmed)
	assert.ErrorIs(t, m.AlwaysAllow(model.AllowChoice{Scope: prefs.ScopeGlobal}), model.ErrNotArmed)
	clock.Add(model.ArmDelay - time.Millisecond)
	assert.False(t, m.Armed())
	assert.ErrorIs(t, m.Approve(), model.ErrNotArmed)
	assert.Equal(t, 1, q.Len(), "still pending")

	// Another proposal arriving changes the content ("1 of 2"): re-armed.
	chB := modeltest.Ask(t, context.Background(), q, modeltest.Request("b", "make"))
	clock.Add(2 * time.Millisecond)
	_, changed = m.Sync()
	assert.True(t, changed)
	assert.False(t, m.Armed())
	clock.Add(model.ArmDelay)
	_, changed = m.Sync()
	assert.False(t, changed)
	assert.True(t, m.Armed())

	// Esc hides: nothing is answered and the buttons are inert.
	m.Hide()
	assert.True(t, m.Hidden())
	assert.ErrorIs(t, m.Approve(), model.ErrNotArmed)
	assert.Equal(t, 2, q.Len(), "Esc leaves proposals pending")
	m.Show()
	assert.False(t, m.Armed(), "shown again: re-armed")
	clock.Add(model.ArmDelay)

	// Paging changes the content: re-armed.
	q.Step(+1)
	_, changed = m.Sync()
	assert.True(t, changed)
	assert.ErrorIs(t, m.Approve(), model.ErrNotArmed)
	clock.Add(model.ArmDelay)
	require.NoError(t, m.Deny("  use make test  "))
	r := modeltest.Result(t, chB)
	assert.False(t, r.Answer.Approved)
	assert.Equal(t, "use make test", r.Answer.Message)

	// The queue moved ("1 of 1"): re-armed before Approve works.
	_, changed = m.Sync()
	assert.True(t, changed)
	assert.ErrorIs(t, m.Approve(), model.ErrNotArmed)
	clock.Add(model.ArmDelay)
	require.NoError(t, m.Approve())
	assert.True(t, modeltest.Result(t, ch).Answer.Approved)
}

func TestCardRefusesAnswerForUnseenProposal(t *testing.T) {
	clock := modeltest.NewClock(time.Now())
	q := &model.Queue{}
	m := &model.CardModel{Queue: q, Now: clock.Now}
	modeltest.Ask(t, context.Background(), q, modeltest.Request("a", "ls"))
	m.Sync()
	clock.Add(model.ArmDelay)
	modeltest.Ask(t, context.Background(), q, modeltest.Request("b", "ls"))
	q.Step(+1) // the queue moved, but the card has not redrawn (no Sync)
	assert.ErrorIs(t, m.Approve(), model.ErrNotArmed)
	assert.Equal(t, 2, q.Len())
}

func TestAllowChoices(t *testing.T) {
	req := modeltest.Request("a", "ls", "-la")
	got := model.AllowChoices(req)
	var labels []string
	for _, c := range got {
		labels = append(labels, c.Label(req))
	}
	assert.Equal(t, []string{
		"program ls into Global", "program ls into Provider «claude»", "program ls into Project «repo»",
		"exact command ls -la into Global", "exact command ls -la into Provider «claude»",
		"exact command ls -la into Project «repo»",
	}, labels, "ls is no launcher: program first")

	noProvider := modeltest.Request("b", "ls")
	noProvider.Provider = ""
	for _, c := range model.AllowChoices(noProvider) {
		assert.NotEqual(t, prefs.ScopeProvider, c.Scope, "no provider scope without a provider")
	}

	py := modeltest.Request("c", "python3", "-c", "print(1)")
	choices := model.AllowChoices(py)
	assert.Equal(t, model.AllowExact, choices[0].Kind, "launchers offer the exact command first")
	w, offer := model.AllowWarning(py, model.AllowChoice{Kind: model.AllowProgram})
	assert.Contains(t, w, "python3 -c 'print(1)'")
	assert.Contains(t, w, "can run arbitrary code")
	assert.True(t, offer, "the exact command is offered instead")
	w, _ = model.AllowWarning(py, model.AllowChoice{Kind: model.AllowExact})
	assert.Empty(t, w)
	w, _ = model.AllowWarning(req, model.AllowChoice{Kind: model.AllowProgram})
	assert.Empty(t, w)

	hook := &agentbridge.ApprovalRequest{ID: "h", ThroughAgentShell: true, CommandLine: "ls | wc"}
	assert.Empty(t, model.AllowChoices(hook))
}

// TestCardShowsTheGuard: a command the argument guard stopped shows the
// rule and each finding; "Always allow" offers only the exact command,
// with a warning, and nothing when a finding is one no rule covers; a hook
// command's newlines and tabs are shown escaped, on one line.
func TestCardShowsTheGuard(t *testing.T) {
	req := modeltest.Request("g", "git", "diff", "--output=/tmp/x")
	req.Findings = prefs.Guard(req.Command.Argv, 2, t.TempDir())
	req.MatchedRule = &prefs.Rule{Tokens: []string{"git", "diff"}, Scope: prefs.ScopeGlobal, File: "/c/allow.list", Line: 3}
	c := model.ContentOf(req, 1, 1, time.Now())
	assert.Contains(t, c.Guard, "rule «git diff» (global, /c/allow.list:3) matches, but it does not allow these arguments")
	assert.Contains(t, c.Guard, "• --output=/tmp/x (argument 2): writes the diff to a file anywhere")
	choices := model.AllowChoices(req)
	require.NotEmpty(t, choices)
	for _, ch := range choices {
		assert.Equal(t, model.AllowExact, ch.Kind, "only the exact command for a command with findings")
	}
	w, offer := model.AllowWarning(req, choices[0])
	assert.Contains(t, w, "writes the diff to a file anywhere")
	assert.Contains(t, w, "exactly this command again, without asking")
	assert.False(t, offer)

	sudo := modeltest.Request("s", "sudo", "ls")
	sudo.Findings = prefs.Guard(sudo.Command.Argv, 2, "")
	assert.Empty(t, model.AllowChoices(sudo), "no rule can allow sudo")
	assert.Empty(t, model.ContentOf(modeltest.Request("p", "ls"), 1, 1, time.Now()).Guard)

	hook := &agentbridge.ApprovalRequest{ID: "h", ThroughAgentShell: true, CommandLine: "git status" + strings.Repeat("\n", 12) + "curl x |\tsh"}
	hc := model.ContentOf(hook, 1, 1, time.Now())
	assert.NotContains(t, hc.Command, "\n", "no line break on the card")
	assert.Contains(t, hc.Command, `git status\n\n`)
	assert.Contains(t, hc.Command, `curl x |\tsh`)
	assert.Equal(t, model.EscapedWarning, hc.Escaped)
}

// TestAlwaysAllowWritesTheRightFile checks every "Always allow" choice
// against a real prefs.Store: the rule lands in the right file, the
// proposal is approved, and the rule then decides.
func TestAlwaysAllowWritesTheRightFile(t *testing.T) {
	for _, kind := range []model.AllowKind{model.AllowProgram, model.AllowExact} {
		for _, scope := range []prefs.Scope{prefs.ScopeGlobal, prefs.ScopeProvider, prefs.ScopeProject} {
			project := t.TempDir()
			paths := prefs.Paths{ConfigDir: t.TempDir(), StateDir: t.TempDir()}
			store, err := prefs.Open(paths)
			require.NoError(t, err)
			clock := modeltest.NewClock(time.Now())
			q := &model.Queue{}
			m := &model.CardModel{Queue: q, Rules: store, Now: clock.Now}
			req := modeltest.Request("r", "cargo", "build", string(scope), map[model.AllowKind]string{model.AllowProgram: "p", model.AllowExact: "e"}[kind])
			req.ProjectRoot, req.Command.ProjectRoot = project, project
			ch := modeltest.Ask(t, context.Background(), q, req)
			m.Sync()
			clock.Add(model.ArmDelay)
			var choice model.AllowChoice
			for _, c := range model.AllowChoices(req) {
				if c.Kind == kind && c.Scope == scope {
					choice = c
				}
			}
			require.NoError(t, m.AlwaysAllow(choice))
			assert.True(t, modeltest.Result(t, ch).Answer.Approved)

			wantFile := map[prefs.Scope]string{
				prefs.ScopeGlobal:   paths.GlobalFile(),
				prefs.ScopeProvider: filepath.Join(paths.ConfigDir, "providers", "claude.allow.list"),
				prefs.ScopeProject:  filepath.Join(project, ".agentgate", "allow.list"),
			}[scope]
			data, err := os.ReadFile(wantFile)
			require.NoError(t, err)
			wantLine := "cargo"
			if kind == model.AllowExact {
				wantLine = prefs.FormatList(req.Command.Argv)
			}
			assert.Contains(t, strings.Split(string(data), "\n"), wantLine, "%v/%s", kind, scope)
			d := store.Decide(prefs.Query{Argv: req.Command.Argv, Provider: "claude", ProjectRoot: project, Dir: os.TempDir()})
			require.True(t, d.Allowed, "%v/%s: the new rule allows the command", kind, scope)
			assert.Equal(t, wantFile, d.Rule.File)
		}
	}
}

func TestAlwaysAllowFailureApprovesNothing(t *testing.T) {
	clock := modeltest.NewClock(time.Now())
	q := &model.Queue{}
	m := &model.CardModel{Queue: q, Rules: &modeltest.Rules{Err: errors.New("disk full")}, Now: clock.Now}
	modeltest.Ask(t, context.Background(), q, modeltest.Request("a", "ls"))
	m.Sync()
	clock.Add(model.ArmDelay)
	err := m.AlwaysAllow(model.AllowChoice{Scope: prefs.ScopeGlobal})
	assert.ErrorContains(t, err, "disk full")
	assert.Equal(t, 1, q.Len(), "still pending")
}

func TestContentOf(t *testing.T) {
	req := modeltest.Request("a", "printf", "%s\n", "a\u202eb")
	req.Command.Stdin = make([]byte, 1536)
	req.Reason = "because\u200b\x1b[31m"
	now := req.Expires.Add(-(9*time.Minute + 12*time.Second))
	c := model.ContentOf(req, 2, 5, now)
	assert.Equal(t, model.CardContent{
		Position:   "2 of 5",
		From:       "claude · Claude Code · pid 42 (/usr/bin/node)",
		Command:    `printf $'%s\n' $'a\u202eb'`,
		Escaped:    model.EscapedWarning,
		Executable: "/usr/bin/printf",
		Cwd:        "sub in /p/repo",
		Timeout:    "2 min",
		Stdin:      "1.5 KiB",
		Reason:     `because\u200b\x1b[31m`,
		ExpiresIn:  "9 min 12 s",
	}, c)

	t.Setenv("HOME", "/p")
	plain := model.ContentOf(modeltest.Request("b", "npm", "test", "--", "--watch=false"), 1, 1, now)
	assert.Equal(t, "", plain.Escaped, "nothing escaped, no warning")
	if runtime.GOOS != "windows" { // see skipWindowsDisplayPaths
		assert.Equal(t, "sub in ~/repo", plain.Cwd, "the project under the home directory")
	}

	hook := &agentbridge.ApprovalRequest{ThroughAgentShell: true, CommandLine: "ls | wc -l", Cwd: "/p", Expires: now}
	hc := model.ContentOf(hook, 1, 1, now)
	assert.Equal(t, "ls | wc -l", hc.Command)
	assert.Equal(t, "", hc.Escaped)
	hook.CommandLine = "ls\u200b"
	assert.Equal(t, model.EscapedWarning, model.ContentOf(hook, 1, 1, now).Escaped, "a hook's shell line is checked too")
	assert.Contains(t, hc.ThroughShell, "agent's own shell")
	assert.Equal(t, "no provider", hc.From)
}

func TestFormatting(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{{0, "0 B"}, {1023, "1023 B"}, {1536, "1.5 KiB"}, {3 << 20, "3.0 MiB"}, {5 << 30, "5.0 GiB"}} {
		assert.Equal(t, tc.want, model.FormatBytes(tc.n))
	}
	for _, tc := range []struct{ in, want string }{
		{"plain\nlines", "plain\nlines"}, {"tab\there", "tab here"}, {"bidi\u202e", `bidi\u202e`},
		{"bad\xffbyte", `bad\xffbyte`}, {"bell\a", `bell\x07`}, {"tag\U000E0041", `tag\U000e0041`},
		{"ok \ufffd", "ok \ufffd"},
	} {
		assert.Equal(t, tc.want, model.EscapeText(tc.in), "%q", tc.in)
	}
}

func TestPreviewText(t *testing.T) {
	past := []prefs.PastCommand{
		{Argv: []string{"git", "status"}, Time: time.Unix(3, 0)},
		{Argv: []string{"git", "push"}, Time: time.Unix(2, 0)},
		{Argv: []string{"ls"}, Time: time.Unix(1, 0)},
	}
	assert.Equal(t, "Would have allowed 2 of your last 3 commands:\n  git status\n  git push",
		model.PreviewText(prefs.Rule{Tokens: []string{"git"}, Scope: prefs.ScopeGlobal}, past, 5))
	assert.Equal(t, "Would have allowed 2 of your last 3 commands:\n  git status\n… and 1 more",
		model.PreviewText(prefs.Rule{Tokens: []string{"git"}, Scope: prefs.ScopeGlobal}, past, 1))
	assert.Equal(t, "Would have allowed none of your last 3 commands.",
		model.PreviewText(prefs.Rule{Tokens: []string{"rm"}, Scope: prefs.ScopeGlobal}, past, 5))
	assert.Contains(t, model.PreviewText(prefs.Rule{Tokens: []string{"rm"}}, nil, 5), "No past commands")
}

// TestProcessesModelReadsJournals: records a host appended to its journal
// (a burst of runs) are shown, and a later line of a run replaces the one
// shown only when it is at least as far along.
func TestProcessesModelReadsJournals(t *testing.T) {
	dir := t.TempDir()
	base := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	modeltest.WriteRecord(t, dir, exec.Record{ID: "r1", Argv: []string{"ls"}, State: exec.StateExited, StartedAt: base})
	m := &model.ProcessesModel{StateDir: dir}
	require.NoError(t, m.LoadAll())
	journal := filepath.Join(dir, "runs", "20260101T090000Z-x.journal")
	lines := `{"id":"r1","state":"running","started_at":"2026-01-01T09:00:00Z"}
{"id":"r2","state":"running","started_at":"2026-01-01T09:01:00Z"}
{"id":"r2","state":"exited","started_at":"2026-01-01T09:01:00Z"}
`
	require.NoError(t, os.WriteFile(journal, []byte(lines), 0o600))
	m.UpdateJournals([]string{filepath.Base(journal)})
	require.Equal(t, 2, m.Len())
	for i, want := range []struct {
		id    string
		state exec.State
	}{{"r2", exec.StateExited}, {"r1", exec.StateExited}} {
		r, _ := m.Row(i)
		assert.Equal(t, want.id, r.ID)
		assert.Equal(t, want.state, r.State, "%s: a run's record never goes back", want.id)
	}
	assert.True(t, exec.IsJournalFile(filepath.Base(journal)))
	assert.Empty(t, model.RecordIDFromFile(filepath.Base(journal)))
}

func TestProcessesModelFiltersAndUpdates(t *testing.T) {
	dir := t.TempDir()
	base := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	code := 3
	recs := []exec.Record{
		{ID: "r1", Argv: []string{"ls"}, Provider: "claude", ProjectRoot: "/p/a", HostKind: exec.HostApp, State: exec.StateRunning, StartedAt: base},
		{ID: "r2", Argv: []string{"make"}, Provider: "codex", ProjectRoot: "/p/b", HostKind: exec.HostCLI, State: exec.StateExited, ExitCode: &code, StartedAt: base.Add(time.Minute), EndedAt: base.Add(time.Minute + 1500*time.Millisecond)},
		{ID: "r3", Argv: []string{"go", "test"}, Provider: "claude", ProjectRoot: "/p/b", HostKind: exec.HostApp, State: exec.StateRunning, StartedAt: base.Add(2 * time.Minute)},
	}
	for _, r := range recs {
		modeltest.WriteRecord(t, dir, r)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "runs", "bad.json"), []byte("{torn"), 0o600))
	m := &model.ProcessesModel{StateDir: dir}
	require.NoError(t, m.LoadAll())
	ids := func() []string {
		var out []string
		for i := 0; i < m.Len(); i++ {
			r, _ := m.Row(i)
			out = append(out, r.ID)
		}
		return out
	}
	assert.Equal(t, []string{"r3", "r2", "r1"}, ids(), "newest first; the corrupt file is skipped")

	m.SetFilter(model.Filter{Provider: "claude"})
	assert.Equal(t, []string{"r3", "r1"}, ids())
	m.SetFilter(model.Filter{Provider: "claude", Project: "/p/b"})
	assert.Equal(t, []string{"r3"}, ids())
	m.SetFilter(model.Filter{State: exec.StateExited})
	assert.Equal(t, []string{"r2"}, ids())
	m.SetFilter(model.Filter{})
	providers, projects := m.FilterOptions()
	assert.Equal(t, []string{"claude", "codex"}, providers)
	assert.Equal(t, []string{"/p/a", "/p/b"}, projects)
	assert.Equal(t, []string{"r3", "r1"}, m.Running())

	// Incremental update: r1 ended, r2 pruned, r4 appeared.
	recs[0].State, recs[0].EndedAt = exec.StateCancelled, base.Add(time.Second)
	modeltest.WriteRecord(t, dir, recs[0])
	require.NoError(t, os.Remove(filepath.Join(dir, "runs", "r2.json")))
	modeltest.WriteRecord(t, dir, exec.Record{ID: "r4", Argv: []string{"true"}, State: exec.StateRunning, StartedAt: base.Add(3 * time.Minute)})
	m.Update([]string{"r1", "r2", "r4"})
	assert.Equal(t, []string{"r4", "r3", "r1"}, ids())
	assert.Equal(t, []string{"r3", "r4"}, m.RunningAll())
	_, row, ok := m.Find("r1")
	assert.True(t, ok)
	assert.Equal(t, 2, row)

	now := base.Add(3*time.Minute + 5*time.Second)
	r2 := recs[1]
	var cells []string
	for col := range model.Columns {
		cells = append(cells, model.CellText(&r2, col, now))
	}
	assert.Equal(t, []string{"exited", "make", "codex", "b", "cli", r2.StartedAt.Local().Format("15:04:05"), "1.5 s", "3"}, cells)
	r3 := recs[2]
	assert.Equal(t, "1 min 5 s", model.CellText(&r3, 6, now), "elapsed while running")
	assert.Equal(t, "", model.CellText(&r3, 7, now))
	assert.Equal(t, "r7", model.RecordIDFromFile("/x/runs/r7.json"))
	assert.Equal(t, "", model.RecordIDFromFile("/x/runs/.r7.json.tmp123"))
	assert.Equal(t, "", model.RecordIDFromFile("/x/runs/r7.cancel"))
}

func TestStopEverythingAndCancelAll(t *testing.T) {
	dir := t.TempDir()
	for i, st := range []exec.State{exec.StateRunning, exec.StateExited, exec.StateRunning} {
		modeltest.WriteRecord(t, dir, exec.Record{ID: fmt.Sprintf("r%d", i), Argv: []string{"x"}, Provider: fmt.Sprint("p", i), State: st, StartedAt: time.Unix(int64(i), 0)})
	}
	procs := &model.ProcessesModel{StateDir: dir}
	require.NoError(t, procs.LoadAll())
	q := &model.Queue{}
	a := modeltest.Ask(t, context.Background(), q, modeltest.Request("a", "ls"))
	b := modeltest.Ask(t, context.Background(), q, modeltest.Request("b", "ls"))
	g := &modeltest.Gate{}

	procs.SetFilter(model.Filter{Provider: "p0"})
	n, err := procs.CancelAll(g)
	require.NoError(t, err)
	assert.Equal(t, 1, n, "Cancel all cancels the runs shown")
	assert.Equal(t, []string{"r0"}, g.Cancelled())

	require.NoError(t, model.StopEverything(g, q, procs))
	assert.Equal(t, 1, g.Stopped())
	assert.Equal(t, []string{"r0", "r2"}, g.Cancelled(), "every running run of every host, filters aside")
	assert.False(t, modeltest.Result(t, a).Answer.Approved)
	assert.False(t, modeltest.Result(t, b).Answer.Approved)
	assert.Equal(t, 0, q.Len())
}

func TestThrottleCoalesces(t *testing.T) {
	var calls atomic.Int32
	done := make(chan struct{}, 100)
	th := model.NewThrottle(50*time.Millisecond, func() { calls.Add(1); done <- struct{}{} })
	for range 1000 {
		th.Trigger()
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the throttled function never ran")
	}
	// 1000 triggers within far less than 50 intervals: a handful of calls.
	assert.Less(t, calls.Load(), int32(100))
	th.Trigger()
	require.Eventually(t, func() bool { return calls.Load() >= 2 }, 10*time.Second, time.Millisecond, "a later trigger runs again")
}

func TestAllowedModel(t *testing.T) {
	project := t.TempDir()
	paths := prefs.Paths{ConfigDir: t.TempDir(), StateDir: t.TempDir()}
	store, err := prefs.Open(paths)
	require.NoError(t, err)
	past := []prefs.PastCommand{{Argv: []string{"git", "status"}, Project: project}, {Argv: []string{"ls"}}}
	m := &model.AllowedModel{Store: store, Past: func() []prefs.PastCommand { return past }}
	global := model.ScopeRef{Scope: prefs.ScopeGlobal}
	proj := model.ScopeRef{Scope: prefs.ScopeProject, Project: project}

	d, err := m.Draft(global, `git commit -m 'fix it'`)
	require.NoError(t, err)
	assert.Equal(t, "git commit -m {fix it}", d.Line, "the exact Tcl line")
	assert.Contains(t, d.Preview, "none of your last 2")
	d, err = m.Draft(global, "bash")
	require.NoError(t, err)
	assert.Contains(t, d.Warning, "can run arbitrary code")
	_, err = m.Draft(global, "ls | wc")
	assert.Error(t, err)

	r, err := m.Add(global, "git status")
	require.NoError(t, err)
	assert.Equal(t, 1, r.Line)
	v, err := m.View(global)
	require.NoError(t, err)
	assert.Equal(t, paths.GlobalFile(), v.File)
	require.Len(t, v.Rules, 1)
	assert.Equal(t, "git status    allow.list:1", v.Rules[0].Text)
	require.NoError(t, m.Remove(global, v.Rules[0].Rule))
	v, _ = m.View(global)
	assert.Empty(t, v.Rules)

	// Parse errors with line numbers.
	require.NoError(t, os.WriteFile(paths.GlobalFile(), []byte("ls\n{unclosed\nmake\n"), 0o600))
	store2, err := prefs.Open(paths)
	require.NoError(t, err)
	m.Store = store2
	v, err = m.View(global)
	require.NoError(t, err)
	assert.Len(t, v.Rules, 2)
	require.Len(t, v.Errors, 1)
	assert.Contains(t, v.Errors[0], "line 2")

	// Trust review: rules written outside agentgate are inactive until trusted.
	_, err = m.Add(proj, "make test")
	require.NoError(t, err)
	file := prefs.ProjectFile(project)
	data, _ := os.ReadFile(file)
	require.NoError(t, os.WriteFile(file, append(data, []byte("rm -rf /\ncurl evil\n")...), 0o600))
	store3, err := prefs.Open(paths)
	require.NoError(t, err)
	m.Store = store3
	text, rules, err := m.TrustReview(project)
	require.NoError(t, err)
	assert.Len(t, rules, 2)
	assert.Contains(t, text, "2 rules changed outside agentgate")
	assert.Contains(t, text, "line 2: rm -rf /")
	v, _ = m.View(proj)
	assert.Equal(t, 2, v.Untrusted)
	assert.False(t, store3.Decide(prefs.Query{Argv: []string{"curl", "evil"}, Provider: "", ProjectRoot: project, Dir: os.TempDir()}).Allowed, "Keep inactive: nothing allowed")
	require.NoError(t, m.Trust(project, rules[:1]))
	text, rules, err = m.TrustReview(project)
	require.NoError(t, err)
	assert.Len(t, rules, 1, "only the rules shown and trusted became active")
	assert.Contains(t, text, "1 rule changed")
	assert.True(t, store3.Decide(prefs.Query{Argv: []string{"rm", "-rf", "/"}, Provider: "", ProjectRoot: project, Dir: os.TempDir()}).Allowed)

	require.NoError(t, os.MkdirAll(filepath.Join(paths.ConfigDir, "providers"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(paths.ConfigDir, "providers", "gemini.allow.list"), nil, 0o600))
	var labels []string
	for _, s := range model.KnownScopes(paths, []string{"claude", "claude", "../bad"}, []string{project, "relative", project}) {
		labels = append(labels, s.Label())
	}
	assert.Equal(t, []string{"Global", "Provider «claude»", "Provider «gemini»",
		"Project «" + filepath.Base(project) + "» (" + model.DisplayPath(project) + ")"}, labels)
}
