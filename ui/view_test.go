package ui

import (
	"context"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentgate/agentgate/agentbridge"
	"github.com/agentgate/agentgate/exec"
	"github.com/agentgate/agentgate/exec/runinfo"
	"github.com/agentgate/agentgate/prefs"
	"github.com/agentgate/agentgate/ui/model"
	"github.com/agentgate/agentgate/ui/model/modeltest"
)

// newTestCard returns a card window on the test driver with a fake clock.
func newTestCard(t *testing.T, rules model.RuleAdder) (*cardWindow, *modeltest.Clock, *model.Queue) {
	t.Helper()
	a := test.NewTempApp(t)
	clock := modeltest.NewClock(time.Date(2026, 1, 1, 10, 0, 48, 0, time.UTC))
	q := &model.Queue{}
	m := &model.CardModel{Queue: q, Rules: rules, Now: clock.Now}
	v := newCardView(m, func() []prefs.PastCommand {
		return []prefs.PastCommand{{Argv: []string{"ls", "-la"}}, {Argv: []string{"go", "vet"}}, {Argv: []string{"ls"}}}
	})
	cw := newCardWindow(a, v, nil)
	t.Cleanup(v.stopArmTimer)
	return cw, clock, q
}

// arm advances the clock past the arming delay and lets the view enable
// its buttons, as its timer does.
func arm(cw *cardWindow, clock *modeltest.Clock) {
	clock.Add(model.ArmDelay)
	cw.view.setArmed(cw.view.model.Armed())
}

func TestCardViewInertThenDeny(t *testing.T) {
	cw, clock, q := newTestCard(t, &modeltest.Rules{})
	ch := modeltest.Ask(t, context.Background(), q, modeltest.Request("a", "go", "test", "./..."))
	cw.refresh()
	require.True(t, cw.visible)
	v := cw.view
	assert.Equal(t, "go test ./...", v.command.Text)
	assert.Equal(t, "1 of 1", v.position.Text)

	// Everything pressed at once does nothing.
	test.Tap(v.approve)
	test.Tap(v.deny)
	test.Tap(v.allow)
	for range 6 {
		cw.win.Canvas().FocusNext()
		if f := cw.win.Canvas().Focused(); f != nil {
			f.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
			f.TypedKey(&fyne.KeyEvent{Name: fyne.KeySpace})
		}
	}
	assert.Equal(t, 1, q.Len(), "nothing answered while inert")
	assert.False(t, v.allowPanel.Visible())

	arm(cw, clock)
	test.Type(v.message, "use make test")
	test.Tap(v.deny)
	r := modeltest.Result(t, ch)
	assert.False(t, r.Answer.Approved)
	assert.Equal(t, "use make test", r.Answer.Message)
	cw.refresh()
	assert.False(t, cw.visible, "the card hides when nothing waits")
}

func TestCardViewApproveIsNeverFocused(t *testing.T) {
	cw, clock, q := newTestCard(t, &modeltest.Rules{})
	ch := modeltest.Ask(t, context.Background(), q, modeltest.Request("a", "ls"))
	cw.refresh()
	arm(cw, clock)
	_, focusable := any(cw.view.approve).(fyne.Focusable)
	assert.False(t, focusable, "the Approve button cannot take focus")
	assert.Nil(t, cw.win.Canvas().Focused(), "nothing is focused when the card appears")
	for range 20 {
		cw.win.Canvas().FocusNext()
		assert.NotEqual(t, fyne.CanvasObject(cw.view.approve), cw.win.Canvas().Focused())
	}
	test.Tap(cw.view.approve)
	assert.True(t, modeltest.Result(t, ch).Answer.Approved)
}

func TestCardViewEscHidesAndKeepsPending(t *testing.T) {
	cw, clock, q := newTestCard(t, &modeltest.Rules{})
	modeltest.Ask(t, context.Background(), q, modeltest.Request("a", "ls"))
	cw.refresh()
	arm(cw, clock)
	cw.win.Canvas().OnTypedKey()(&fyne.KeyEvent{Name: fyne.KeyEscape})
	assert.False(t, cw.visible)
	assert.True(t, cw.view.model.Hidden())
	assert.Equal(t, 1, q.Len(), "Esc neither approves nor denies")
	test.Tap(cw.view.approve)
	assert.Equal(t, 1, q.Len())

	// A second proposal does not force the hidden card back; the person
	// brings it back, re-armed.
	modeltest.Ask(t, context.Background(), q, modeltest.Request("b", "ls"))
	cw.refresh()
	assert.False(t, cw.visible)
	cw.showAgain()
	assert.True(t, cw.visible)
	assert.Equal(t, "1 of 2", cw.view.position.Text)
	assert.False(t, cw.view.model.Armed())
}

func TestCardViewAlwaysAllowPanel(t *testing.T) {
	rules := &modeltest.Rules{}
	cw, clock, q := newTestCard(t, rules)
	ch := modeltest.Ask(t, context.Background(), q, modeltest.Request("a", "ls", "-la"))
	cw.refresh()
	arm(cw, clock)
	v := cw.view
	test.Tap(v.allow)
	require.True(t, v.allowPanel.Visible())
	assert.False(t, v.model.Armed(), "opening the panel changes the card: re-armed")
	test.Tap(v.confirm)
	assert.Equal(t, 1, q.Len())
	arm(cw, clock)

	assert.Equal(t, []string{"Program: ls (any arguments)", "Exact command: ls -la"}, v.what.Options)
	assert.Equal(t, []string{"Global", "Provider «claude»", "Project «repo»"}, v.where.Options)
	assert.Contains(t, v.preview.Text, "Would have allowed 2 of your last 3 commands")
	assert.False(t, v.warning.Visible())
	v.where.SetSelected("Provider «claude»")
	test.Tap(v.confirm)
	assert.True(t, modeltest.Result(t, ch).Answer.Approved)
	require.Len(t, rules.Added(), 1)
	assert.Equal(t, prefs.Rule{Tokens: []string{"ls"}, Scope: prefs.ScopeProvider, Provider: "claude"}, rules.Added()[0])
}

func TestCardViewLauncherWarning(t *testing.T) {
	rules := &modeltest.Rules{}
	cw, clock, q := newTestCard(t, rules)
	modeltest.Ask(t, context.Background(), q, modeltest.Request("a", "bash", "-c", "rm -rf build"))
	cw.refresh()
	arm(cw, clock)
	v := cw.view
	test.Tap(v.allow)
	arm(cw, clock)
	assert.Equal(t, "Exact command: bash -c 'rm -rf build'", v.what.Selected, "launchers default to the exact command")
	assert.False(t, v.warning.Visible())
	v.what.SetSelected("Program: bash (any arguments)")
	assert.True(t, v.warning.Visible())
	assert.Contains(t, v.warning.Text, "can run arbitrary code")
	assert.Contains(t, v.warning.Text, "instead: bash -c 'rm -rf build'")
	test.Tap(v.useExact)
	assert.Equal(t, "Exact command: bash -c 'rm -rf build'", v.what.Selected)
	test.Tap(v.confirm)
	require.Len(t, rules.Added(), 1)
	assert.Equal(t, []string{"bash", "-c", "rm -rf build"}, rules.Added()[0].Tokens)
}

func TestCardMarkup(t *testing.T) {
	cw, _, q := newTestCard(t, &modeltest.Rules{})
	req := modeltest.Request("a", "printf", "%s", "safe\u202eexe.sh")
	req.Expires = time.Date(2026, 1, 1, 10, 10, 0, 0, time.UTC)
	req.Confinement = runinfo.Confinement{Writes: []string{"project", "temp", "cache"}, Network: "any"}
	modeltest.Ask(t, context.Background(), q, req)
	modeltest.Ask(t, context.Background(), q, modeltest.Request("b", "ls"))
	cw.refresh()
	// Lay the card out afresh, as the real driver does when rows appear.
	cw.win.Resize(CardSize.AddWidthHeight(0, 1))
	cw.win.Resize(CardSize)
	test.AssertRendersToMarkup(t, "../../testdata/ui/card.xml", cw.win.Canvas())
}

func TestProcessesViewFiltersAndCancel(t *testing.T) {
	test.NewTempApp(t)
	dir := t.TempDir()
	for i, st := range []exec.State{exec.StateRunning, exec.StateExited} {
		modeltest.WriteRecord(t, dir, exec.Record{ID: []string{"r0", "r1"}[i], Argv: []string{"sleep", "9"}, Provider: []string{"claude", "codex"}[i],
			ProjectRoot: "/p/a", State: st, StartedAt: time.Unix(int64(i), 0), HostKind: exec.HostCLI})
	}
	m := &model.ProcessesModel{StateDir: dir}
	require.NoError(t, m.LoadAll())
	g := &modeltest.Gate{}
	v := newProcessesView(m, g, nil, func() {})
	w := test.NewTempWindow(t, v.root)
	w.Resize(fyne.NewSize(960, 600))
	v.refresh()
	assert.Equal(t, "2 runs", v.count.Text)
	v.providerSel.SetSelected("claude")
	assert.Equal(t, 1, m.Len())
	assert.Equal(t, "1 run", v.count.Text)
	v.table.Select(widgetCell(0, 1))
	assert.Equal(t, "r0", v.selected)
	assert.Contains(t, v.changes.Text, "reported when the run ends")
	test.Tap(v.cancel)
	assert.Equal(t, []string{"r0"}, g.Cancelled())
	v.providerSel.SetSelected(allChoice)
	test.Tap(v.cancelAll)
	assert.Equal(t, []string{"r0"}, g.Cancelled(), "Cancel all: the running runs shown")
}

// widgetCell returns the table cell id of row and col.
func widgetCell(row, col int) widget.TableCellID { return widget.TableCellID{Row: row, Col: col} }

func TestCardCommandBoxFitsContent(t *testing.T) {
	cw, _, q := newTestCard(t, &modeltest.Rules{})
	modeltest.Ask(t, context.Background(), q, modeltest.Request("short", "npm", "test"))
	cw.refresh()
	cw.win.Resize(CardSize)
	box := cw.view.command
	short := box.Size().Height
	assert.Less(t, short, float32(CommandMaxHeight), "a short command leaves no gap")
	assert.False(t, cw.view.commandHint.Visible())
	assert.False(t, cw.view.escapedRow.Visible())

	require.NoError(t, q.Answer("short", agentbridge.Answer{}))
	modeltest.Ask(t, context.Background(), q, modeltest.Request("long", longCurl...))
	cw.refresh()
	cw.win.Resize(CardSize)
	cw.win.Canvas().Refresh(cw.view.root)
	var scroll fyne.CanvasObject
	for _, o := range test.LaidOutObjects(cw.view.root) {
		if c, ok := o.(*fyne.Container); ok && len(c.Objects) == 1 {
			if _, isFit := c.Layout.(*fitScrollLayout); isFit {
				scroll = c
			}
		}
	}
	require.NotNil(t, scroll)
	assert.LessOrEqual(t, scroll.Size().Height, float32(CommandMaxHeight), "a long command scrolls inside the box")
	assert.Greater(t, cw.view.command.MinSize().Height, float32(CommandMaxHeight))
	assert.True(t, cw.view.commandHint.Visible(), "the card says the command scrolls")
}

// TestCardViewGuard: a command the argument guard stopped shows what it
// found, and "Always allow" offers only the exact command, with a warning
// and no switch to offer.
func TestCardViewGuard(t *testing.T) {
	rules := &modeltest.Rules{}
	cw, clock, q := newTestCard(t, rules)
	req := modeltest.Request("g", "sort", "-o", "/tmp/x", "f")
	req.Findings = prefs.Guard(req.Command.Argv, 1, t.TempDir())
	req.MatchedRule = &prefs.Rule{Tokens: []string{"sort"}, Scope: prefs.ScopeGlobal, File: "/c/allow.list", Line: 1}
	modeltest.Ask(t, context.Background(), q, req)
	cw.refresh()
	arm(cw, clock)
	v := cw.view
	assert.True(t, v.guard.Visible())
	assert.Contains(t, v.guard.Text, "-o /tmp/x (argument 1): writes the sorted output to a file anywhere")
	test.Tap(v.allow)
	arm(cw, clock)
	assert.Equal(t, []string{"Exact command: sort -o /tmp/x f"}, v.what.Options)
	assert.True(t, v.warning.Visible())
	assert.Contains(t, v.warning.Text, "exactly this command again")
	assert.False(t, v.useExact.Visible())
}

// TestCardViewApproveWithoutWriteConfinementOnce: the card shows the run's
// confinement and earlier changes to protected files; the tick to lift write confinement is inert until the card
// arms, approves only the run shown, and is cleared for the next card; a
// run whose writes are not confined anyway is not offered it.
func TestCardViewApproveWithoutWriteConfinementOnce(t *testing.T) {
	cw, clock, q := newTestCard(t, &modeltest.Rules{})
	confined := runinfo.Confinement{Writes: []string{"project", "temp", "cache"}, Network: "any"}
	a, b := modeltest.Request("a", "make"), modeltest.Request("b", "make", "install")
	a.Confinement, b.Confinement = confined, confined
	a.ProtectedChanged = []string{"npm test (run r0): changed .git/config"}
	c := modeltest.Request("c", "ls")
	c.Confinement = runinfo.Confinement{Unconfined: "Landlock is not available on this kernel", Network: "any"}
	chA := modeltest.Ask(t, context.Background(), q, a)
	chB := modeltest.Ask(t, context.Background(), q, b)
	modeltest.Ask(t, context.Background(), q, c)
	cw.refresh()
	v := cw.view
	assert.Equal(t, "writes: project, temp, cache", v.confinement.Text)
	assert.True(t, v.protected.Visible(), "earlier protected changes are shown")
	assert.Contains(t, v.protected.Text, "npm test (run r0): changed .git/config")
	require.True(t, v.unconfinedOnce.Visible())
	test.Tap(v.unconfinedOnce)
	assert.False(t, v.unconfinedOnce.Checked, "inert before the card arms")

	arm(cw, clock)
	test.Tap(v.unconfinedOnce)
	require.True(t, v.unconfinedOnce.Checked)
	test.Tap(v.approve)
	ansA := modeltest.Result(t, chA).Answer
	assert.True(t, ansA.Approved && ansA.WithoutWriteConfinement, "%+v", ansA)

	cw.refresh()
	arm(cw, clock)
	assert.False(t, v.unconfinedOnce.Checked, "the next card starts confined")
	assert.False(t, v.protected.Visible())
	test.Tap(v.approve)
	ansB := modeltest.Result(t, chB).Answer
	assert.True(t, ansB.Approved && !ansB.WithoutWriteConfinement, "%+v", ansB)

	cw.refresh()
	assert.Equal(t, "writes: not confined (Landlock is not available on this kernel)", v.confinement.Text)
	assert.False(t, v.unconfinedOnce.Visible(), "nothing to lift")
}
