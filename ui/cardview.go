package ui

import (
	"encoding/json"
	"errors"
	"os"
	"slices"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/agentgate/agentgate/agentbridge"
	"github.com/agentgate/agentgate/exec/display"
	"github.com/agentgate/agentgate/prefs"
	"github.com/agentgate/agentgate/ui/model"
)

// CardSize is the approval card window's size.
var CardSize = fyne.NewSize(560, 610)

// cardView is the approval card's widgets, bound to a CardModel. Every
// method runs on the Fyne thread.
type cardView struct {
	// model decides what the buttons do.
	model *model.CardModel
	// past returns recent commands for the rule preview (nil: none).
	past func() []prefs.PastCommand
	// now is the clock for the countdown.
	now func() time.Time
	// onHide is called when the person hides the card (Esc, window close).
	onHide func()

	// req is the proposal shown; nil when none.
	req *agentbridge.ApprovalRequest
	// choices are the "Always allow" choices for req.
	choices []model.AllowChoice
	// kinds are the kinds of choice, in the order of the what radio's
	// options.
	kinds []model.AllowKind
	// armTimer re-checks the arming delay.
	armTimer *time.Timer

	// The widgets, top to bottom.
	title, position             *widget.Label
	prev, next                  *widget.Button
	from, command, shellWarning *widget.Label
	// guard says what the argument guard found (hidden when nothing).
	guard *widget.Label
	// commandHint says when the command box must be scrolled.
	commandHint *widget.Label
	// escaped warns that the command holds characters shown escaped.
	escaped *widget.Label
	// escapedRow is the escaped warning with its icon (hidden when none).
	escapedRow                              *fyne.Container
	executable, cwd, timeout, stdin, expiry *widget.Label
	// protected warns that earlier runs in the project changed files that
	// steer agents and tools (hidden when none did).
	protected *widget.Label
	// confinement says what the run may write (and its network).
	confinement *widget.Label
	// unconfinedOnce approves this one run without write confinement when
	// ticked (shown only when the run's writes would be confined).
	unconfinedOnce *widget.Check
	reason         *widget.Label
	reasonBox      *fyne.Container
	message        *widget.Entry
	status         *widget.Label
	deny, allow    *widget.Button
	approve        *approveButton
	// The "Always allow ▾" panel, hidden until the person opens it: what
	// (program or exact command), how long (always: a rule; or a
	// temporary grant), and where (the rule's list).
	allowPanel        *fyne.Container
	what, how, where  *widget.RadioGroup
	preview, warning  *widget.Label
	useExact, confirm *widget.Button
	// bodyScroll scrolls everything between the header and the buttons.
	bodyScroll *container.Scroll
	// header, body and footer are the card's three parts, measured to fit
	// the window's height to the content (fitHeight).
	header, body, footer fyne.CanvasObject
	// resize asks the window for a size (nil: no window).
	resize func(fyne.Size)
	// root is the whole card.
	root fyne.CanvasObject
}

// CommandMaxHeight is the tallest the card's command box grows (about
// seven lines); a longer command scrolls inside it, and the card says so.
const CommandMaxHeight = 160

// CardSizeWithPanel is the card's size while the "Always allow" panel is
// open: taller, so the command stays in view above the panel.
var CardSizeWithPanel = fyne.NewSize(560, 800)

// newCardView builds the card's widgets.
func newCardView(m *model.CardModel, past func() []prefs.PastCommand) *cardView {
	v := &cardView{model: m, past: past, now: time.Now}
	if m.Now != nil {
		v.now = m.Now
	}
	v.title = widget.NewLabelWithStyle("An agent asks to run a command", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	v.position = widget.NewLabel("")
	v.prev = widget.NewButtonWithIcon("", theme.NavigateBackIcon(), func() { m.Queue.Step(-1) })
	v.next = widget.NewButtonWithIcon("", theme.NavigateNextIcon(), func() { m.Queue.Step(+1) })
	v.from = proseLabel("")
	v.command = wrapLabel("")
	v.command.TextStyle = fyne.TextStyle{Monospace: true}
	v.shellWarning = proseLabel("")
	v.shellWarning.Importance = widget.WarningImportance
	v.guard = proseLabel("")
	v.guard.Importance = widget.WarningImportance
	v.protected = proseLabel("")
	v.protected.Importance = widget.WarningImportance
	v.executable, v.cwd = wrapLabel(""), wrapLabel("")
	v.executable.TextStyle.Monospace, v.cwd.TextStyle.Monospace = true, true
	v.timeout, v.stdin, v.expiry = widget.NewLabel(""), widget.NewLabel(""), widget.NewLabel("")
	v.confinement = wrapLabel("")
	v.unconfinedOnce = widget.NewCheck("Approve this run without write confinement (it may write anywhere you can)", nil)
	v.reason = proseLabel("")
	v.reason.TextStyle.Italic = true
	v.message = widget.NewEntry()
	v.message.SetPlaceHolder("Message to the agent (optional, sent with Deny)")
	v.status = proseLabel("")
	v.status.Importance = widget.DangerImportance
	v.deny = widget.NewButtonWithIcon("Deny", theme.CancelIcon(), v.onDeny)
	v.allow = widget.NewButton("Always allow ▾", v.toggleAllowPanel)
	v.approve = newApproveButton("Approve", v.onApprove)

	v.what = widget.NewRadioGroup(nil, func(string) { v.updatePreview() })
	v.how = widget.NewRadioGroup(nil, func(string) { v.updatePreview() })
	v.how.Horizontal = true
	v.where = widget.NewRadioGroup(nil, func(string) { v.updatePreview() })
	v.preview = proseLabel("")
	v.warning = proseLabel("")
	v.warning.Importance = widget.WarningImportance
	v.useExact = widget.NewButton("Allow the exact command instead", func() {
		if len(v.what.Options) > 0 {
			v.what.SetSelected(v.what.Options[v.exactIndex()])
		}
	})
	v.confirm = widget.NewButtonWithIcon("Save rule and approve", theme.ConfirmIcon(), v.onAlwaysAllow)
	v.allowPanel = container.NewVBox(
		widget.NewSeparator(),
		widget.NewLabelWithStyle("Allow without asking", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		v.how, container.NewHBox(v.what, v.where), v.warning, v.useExact, v.preview, v.confirm,
	)
	v.allowPanel.Hide()

	v.commandHint = widget.NewLabelWithStyle("The command is longer than the box: scroll it to read all of it.", fyne.TextAlignLeading, fyne.TextStyle{Italic: true})
	v.commandHint.Importance = widget.WarningImportance
	v.commandHint.Hide()
	commandBox := newFitScroll(v.command, CommandMaxHeight, func(over bool) {
		if over {
			v.commandHint.Show()
		} else {
			v.commandHint.Hide()
		}
	})
	v.escaped = proseLabel("")
	v.escaped.Importance = widget.WarningImportance
	v.escaped.TextStyle.Bold = true
	v.escapedRow = container.NewBorder(nil, nil, widget.NewIcon(theme.WarningIcon()), nil, v.escaped)
	v.escapedRow.Hide()
	v.reasonBox = container.NewVBox(widget.NewLabelWithStyle("The agent says (its words, not verified):", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), v.reason)
	facts := container.New(layout.NewFormLayout(),
		fieldLabel("From"), v.from,
		fieldLabel("Program"), v.executable,
		fieldLabel("Directory"), v.cwd,
		fieldLabel("Timeout"), v.timeout,
		fieldLabel("Confined"), v.confinement,
		fieldLabel("Input"), v.stdin,
		fieldLabel("Expires in"), v.expiry,
	)
	body := container.NewVBox(
		widget.NewLabelWithStyle("Command", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		commandBox, v.commandHint, v.escapedRow, v.shellWarning, v.guard, v.protected, facts, v.reasonBox, v.unconfinedOnce, v.allowPanel,
	)
	header := container.NewBorder(nil, nil, nil, container.NewHBox(v.position, v.prev, v.next), v.title)
	buttons := container.NewGridWithColumns(3, v.deny, v.allow, v.approve)
	footer := container.NewVBox(v.status, v.message, buttons)
	v.bodyScroll = container.NewVScroll(body)
	v.header, v.body, v.footer = header, body, footer
	v.root = container.NewBorder(header, footer, nil, nil, v.bodyScroll)
	v.setArmed(false)
	return v
}

// wrapLabel returns a label that wraps at word boundaries (and inside
// words too long for a line), so nothing is cut off.
func wrapLabel(text string) *widget.Label {
	l := widget.NewLabel(text)
	l.Wrapping = fyne.TextWrapBreak
	return l
}

// proseLabel returns a label for sentences: it wraps between words (and
// breaks only a word too long for a line).
func proseLabel(text string) *widget.Label {
	l := widget.NewLabel(text)
	l.Wrapping = fyne.TextWrapWord
	return l
}

// fieldLabel returns the bold name of a card field.
func fieldLabel(text string) *widget.Label {
	return widget.NewLabelWithStyle(text, fyne.TextAlignTrailing, fyne.TextStyle{Bold: true})
}

// refresh shows the queue's current proposal. It returns false when
// nothing is pending (the window should hide).
func (v *cardView) refresh() bool {
	req, changed := v.model.Sync()
	if req == nil {
		v.req = nil
		v.stopArmTimer()
		return false
	}
	if !changed {
		return true
	}
	v.req = req
	_, pos, total := v.model.Queue.Current()
	c := model.ContentOf(req, pos, total, v.now())
	v.position.SetText(c.Position)
	if total > 1 {
		v.prev.Show()
		v.next.Show()
	} else {
		v.prev.Hide()
		v.next.Hide()
	}
	v.from.SetText(c.From)
	v.command.SetText(c.Command)
	v.escaped.SetText(c.Escaped)
	if c.Escaped == "" {
		v.escapedRow.Hide()
	} else {
		v.escapedRow.Show()
	}
	setOptional(v.shellWarning, c.ThroughShell)
	setOptional(v.guard, c.Guard)
	setOptional(v.protected, c.Protected)
	v.executable.SetText(c.Executable)
	v.cwd.SetText(c.Cwd)
	v.timeout.SetText(c.Timeout)
	v.confinement.SetText(c.Confinement)
	v.unconfinedOnce.SetChecked(false)
	if model.OffersUnconfinedOnce(req) {
		v.unconfinedOnce.Show()
	} else {
		v.unconfinedOnce.Hide()
	}
	v.stdin.SetText(c.Stdin)
	v.expiry.SetText(c.ExpiresIn)
	v.reason.SetText(c.Reason)
	if c.Reason == "" {
		v.reasonBox.Hide()
	} else {
		v.reasonBox.Show()
	}
	v.message.SetText("")
	v.status.SetText("")
	v.status.Hide()
	v.choices = model.AllowChoices(req)
	v.closeAllowPanel()
	v.fitHeight()
	v.bodyScroll.ScrollToTop()
	v.fillAllowPanel()
	v.setArmed(false)
	v.scheduleArm()
	return true
}

// fitHeight sizes the window to the card's content (no empty band above
// the buttons for a short command), between CardMinHeight and
// CardSize.Height; beyond that the body scrolls.
func (v *cardView) fitHeight() {
	if v.resize == nil {
		return
	}
	pad := theme.Padding()
	v.resize(fyne.NewSize(CardSize.Width, CardHeight(v.header.MinSize().Height, v.body.MinSize().Height, v.footer.MinSize().Height, pad)))
}

// CardMinHeight is the shortest the card gets.
const CardMinHeight = 360

// CardHeight is the window height that shows a card's header, body and
// footer (their minimum heights) with the border layout's padding between
// and around them, clamped to [CardMinHeight, CardSize.Height].
func CardHeight(header, body, footer, pad float32) float32 {
	h := header + body + footer + 4*pad
	return min(max(h, CardMinHeight), CardSize.Height)
}

// tick updates the countdown.
func (v *cardView) tick() {
	if v.req != nil {
		v.expiry.SetText(display.Duration(v.req.Expires.Sub(v.now())))
	}
}

// setOptional shows l with text, or hides it when text is empty.
func setOptional(l *widget.Label, text string) {
	l.SetText(text)
	if text == "" {
		l.Hide()
	} else {
		l.Show()
	}
}

// setArmed enables or disables every answering button.
func (v *cardView) setArmed(armed bool) {
	for _, w := range []fyne.Disableable{v.deny, v.allow, v.approve, v.confirm, v.useExact, v.unconfinedOnce} {
		if armed {
			w.Enable()
		} else {
			w.Disable()
		}
	}
	if armed && len(v.choices) == 0 {
		v.allow.Disable()
	}
}

// afterFunc starts the card's arm timer: time.AfterFunc. The package's
// tests make it a timer that calls nothing — they arm the card themselves
// (arm, in view_test.go) — because under Fyne's test driver the timer's
// fyne.Do would run at once on the timer's goroutine, beside the test (see
// inBackground).
var afterFunc = time.AfterFunc

// scheduleArm enables the buttons once the model says the card is armed.
func (v *cardView) scheduleArm() {
	v.stopArmTimer()
	wait := v.model.ArmsIn()
	v.armTimer = afterFunc(wait+20*time.Millisecond, func() {
		fyne.Do(func() {
			if v.req == nil {
				return
			}
			if !v.model.Armed() {
				if !v.model.Hidden() {
					v.scheduleArm()
				}
				return
			}
			v.setArmed(true)
			v.writeLayout()
		})
	})
}

// stopArmTimer cancels a pending arm check.
func (v *cardView) stopArmTimer() {
	if v.armTimer != nil {
		v.armTimer.Stop()
		v.armTimer = nil
	}
}

// rearm makes the buttons inert again after the card's content changed in
// place (the "Always allow" panel opened).
func (v *cardView) rearm() {
	v.model.Rearm()
	v.setArmed(false)
	v.scheduleArm()
}

// alwaysOption is the "how long" choice that writes a rule.
const alwaysOption = "Always"

// fillAllowPanel sets the radio options for the current proposal.
func (v *cardView) fillAllowPanel() {
	if len(v.choices) == 0 {
		v.what.Options, v.how.Options, v.where.Options = nil, nil, nil
		return
	}
	v.how.Options = []string{alwaysOption}
	for _, l := range v.model.GrantLengths() {
		v.how.Options = append(v.how.Options, lengthOption(l))
	}
	v.how.Selected = alwaysOption
	v.how.Refresh()
	req := v.req
	first := v.choices[0]
	labels := map[model.AllowKind]string{
		model.AllowProgram: "Program: " + display.Word(req.Command.Argv[0]) + " (any arguments)",
		model.AllowExact:   "Exact command: " + model.Ellipsize(display.Command(req.Command.Argv), allowOptionMaxRunes),
	}
	// The kinds in the model's order: program and exact, exact first for a
	// launcher, exact alone for a command the argument guard stopped.
	v.kinds, v.what.Options = nil, nil
	for _, c := range v.choices {
		if !slices.Contains(v.kinds, c.Kind) {
			v.kinds = append(v.kinds, c.Kind)
			v.what.Options = append(v.what.Options, labels[c.Kind])
		}
	}
	v.where.Options = nil
	for _, c := range v.choices {
		if c.Kind == first.Kind {
			v.where.Options = append(v.where.Options, c.ScopeLabel())
		}
	}
	v.what.Selected = v.what.Options[0]
	v.where.Selected = v.where.Options[0]
	v.what.Refresh()
	v.where.Refresh()
	v.updatePreview()
}

// lengthOption names a grant length among the "how long" choices, which
// sit side by side and must fit the card's width: "15 minutes", "Until
// quit" (the preview below says it whole).
func lengthOption(l model.GrantLength) string {
	if l.UntilQuit {
		return "Until quit"
	}
	return l.Label
}

// selectedLength returns the grant length the "how long" choice selects;
// ok is false for Always (a rule).
func (v *cardView) selectedLength() (model.GrantLength, bool) {
	for _, l := range v.model.GrantLengths() {
		if v.how.Selected == lengthOption(l) {
			return l, true
		}
	}
	return model.GrantLength{}, false
}

// exactIndex is the index of the exact-command option in v.what.
func (v *cardView) exactIndex() int {
	return max(slices.Index(v.kinds, model.AllowExact), 0)
}

// selectedChoice returns the choice the radios select.
func (v *cardView) selectedChoice() (model.AllowChoice, bool) {
	i := slices.Index(v.what.Options, v.what.Selected)
	if i < 0 || i >= len(v.kinds) {
		return model.AllowChoice{}, false
	}
	kind := v.kinds[i]
	for _, c := range v.choices {
		if c.Kind == kind && c.ScopeLabel() == v.where.Selected {
			return c, true
		}
	}
	return model.AllowChoice{}, false
}

// updatePreview shows the rule preview and the launcher warning for the
// selected choice, or what the selected temporary grant allows.
func (v *cardView) updatePreview() {
	if length, grant := v.selectedLength(); grant && v.req != nil {
		c, _ := v.selectedChoice()
		v.where.Hide()
		v.preview.SetText("Allows " + model.GrantText(v.req, c.Kind, length) +
			". No rule is written: the grant ends by itself (see Preferences ▸ Temporary grants to end it sooner).")
		w := model.GrantWarning(v.req, c.Kind)
		setOptional(v.warning, w)
		if w == "" {
			v.useExact.Hide()
		} else {
			v.useExact.Show()
		}
		text := "Allow for " + length.Label + " and approve"
		if length.UntilQuit {
			text = "Allow until agentgate quits and approve"
		}
		v.confirm.SetText(text)
		if v.allowPanel.Visible() {
			v.bodyScroll.ScrollToBottom()
			v.writeLayout()
		}
		return
	}
	v.where.Show()
	c, ok := v.selectedChoice()
	if !ok || v.req == nil {
		v.preview.SetText("")
		setOptional(v.warning, "")
		v.useExact.Hide()
		v.confirm.SetText("Save rule and approve")
		return
	}
	var past []prefs.PastCommand
	if v.past != nil {
		past = v.past()
	}
	v.preview.SetText("Rule " + c.RuleLine(v.req) + " in " + c.ScopeLabel() + ". " + model.PreviewText(c.Rule(v.req), past, 3))
	w, offerExact := model.AllowWarning(v.req, c)
	setOptional(v.warning, w)
	if offerExact {
		v.useExact.Show()
	} else {
		v.useExact.Hide()
	}
	v.confirm.SetText(model.Ellipsize("Allow "+c.Label(v.req)+" and approve", confirmMaxRunes))
	if v.allowPanel.Visible() {
		// The warning may have appeared: keep the confirm button in view.
		v.bodyScroll.ScrollToBottom()
		v.writeLayout()
	}
}

// allowOptionMaxRunes bounds the exact command in the "Always allow"
// choices, which cannot wrap; the rule preview below shows it whole.
const allowOptionMaxRunes = 32

// confirmMaxRunes bounds the "Allow … and approve" button's text, which
// cannot wrap either, so the card keeps its width.
const confirmMaxRunes = 52

// toggleAllowPanel opens or closes the "Always allow" panel; opening it
// changes the card, so the buttons re-arm.
func (v *cardView) toggleAllowPanel() {
	if !v.model.Armed() {
		return
	}
	if v.allowPanel.Visible() {
		v.closeAllowPanel()
		return
	}
	v.allowPanel.Show()
	v.allow.SetText("Always allow ▴")
	if v.resize != nil {
		v.resize(CardSizeWithPanel)
	}
	v.bodyScroll.ScrollToBottom()
	v.rearm()
}

// closeAllowPanel hides the "Always allow" panel and restores the size.
func (v *cardView) closeAllowPanel() {
	wasOpen := v.allowPanel.Visible()
	v.allowPanel.Hide()
	v.allow.SetText("Always allow ▾")
	if wasOpen {
		v.fitHeight()
	}
}

// onDeny denies with the typed message.
func (v *cardView) onDeny() { v.report(v.model.Deny(v.message.Text)) }

// onApprove approves, for this run without write confinement when the
// person ticked that.
func (v *cardView) onApprove() {
	if v.unconfinedOnce.Visible() && v.unconfinedOnce.Checked {
		v.report(v.model.ApproveWithoutWriteConfinement())
		return
	}
	v.report(v.model.Approve())
}

// onAlwaysAllow saves the selected rule, or gives the selected temporary
// grant, and approves.
func (v *cardView) onAlwaysAllow() {
	c, ok := v.selectedChoice()
	if !ok {
		v.report(errors.New("choose what to allow and where"))
		return
	}
	if length, grant := v.selectedLength(); grant {
		v.report(v.model.AllowFor(c.Kind, length))
		return
	}
	v.report(v.model.AlwaysAllow(c))
}

// report shows an action's error on the card (inert clicks are silent).
func (v *cardView) report(err error) {
	if err == nil || errors.Is(err, model.ErrNotArmed) {
		return
	}
	setOptional(v.status, err.Error())
}

// writeLayout writes the window coordinates of the card's controls to the
// file named by $AGENTGATE_UI_LAYOUT_FILE, when set: the end-to-end test
// reads it to click with xdotool (coordinates are the centre of each
// control in window pixels).
func (v *cardView) writeLayout() {
	path := os.Getenv("AGENTGATE_UI_LAYOUT_FILE")
	if path == "" || fyne.CurrentApp() == nil || v.req == nil {
		return
	}
	c := fyne.CurrentApp().Driver().CanvasForObject(v.root)
	if c == nil {
		return
	}
	centre := func(o fyne.CanvasObject) [2]int {
		p := fyne.CurrentApp().Driver().AbsolutePositionForObject(o)
		s := o.Size()
		return [2]int{int((p.X + s.Width/2) * c.Scale()), int((p.Y + s.Height/2) * c.Scale())}
	}
	out := map[string]any{
		"id": v.req.ID, "deny": centre(v.deny), "allow": centre(v.allow), "approve": centre(v.approve),
		"message": centre(v.message), "panel_open": v.allowPanel.Visible(),
	}
	if v.allowPanel.Visible() {
		out["confirm"] = centre(v.confirm)
		if v.useExact.Visible() {
			out["use_exact"] = centre(v.useExact)
		}
		// The "Program" option of the what-to-allow radios.
		if n := len(v.what.Options); n > 0 {
			p := fyne.CurrentApp().Driver().AbsolutePositionForObject(v.what)
			// Options are stacked from the top at their minimum height; the
			// box may stretch the group below them.
			h := v.what.MinSize().Height / float32(n)
			i := float32(1 - v.exactIndex())
			out["program"] = [2]int{int((p.X + 3*theme.Padding() + 8) * c.Scale()), int((p.Y + h*i + h/2) * c.Scale())}
		}
		// The "how long" options, side by side at equal widths.
		if n := len(v.how.Options); n > 0 {
			p := fyne.CurrentApp().Driver().AbsolutePositionForObject(v.how)
			m := v.how.MinSize()
			w := m.Width / float32(n)
			var how [][2]int
			for i := range n {
				how = append(how, [2]int{int((p.X + w*float32(i) + 3*theme.Padding() + 8) * c.Scale()), int((p.Y + m.Height/2) * c.Scale())})
			}
			out["how"] = how
		}
	}
	data, _ := json.Marshal(out)
	_ = prefs.WriteFileAtomic(path, data, 0o600)
}

// cardWindow is the approval card's window.
type cardWindow struct {
	// view is the card's content.
	view *cardView
	// win is the window; created once and hidden between proposals.
	win fyne.Window
	// visible is true while the window is shown.
	visible bool
	// position places the window (nil: centred); called before Show.
	position func(w fyne.Window)
}

// newCardWindow creates the card's window (not shown).
func newCardWindow(a fyne.App, view *cardView, position func(fyne.Window)) *cardWindow {
	cw := &cardWindow{view: view, win: a.NewWindow("agentgate — approve a command?"), position: position}
	cw.win.SetContent(view.root)
	cw.win.Resize(CardSize)
	view.resize = cw.win.Resize
	cw.win.SetFixedSize(false)
	cw.win.SetCloseIntercept(cw.hide)
	cw.win.Canvas().SetOnTypedKey(func(ev *fyne.KeyEvent) {
		if ev.Name == fyne.KeyEscape {
			cw.hide()
		}
	})
	if dw, ok := cw.win.(desktop.Window); ok {
		dw.RequestAlwaysOnTop()
	}
	return cw
}

// hide is Esc: the card goes, the proposal stays pending.
func (cw *cardWindow) hide() {
	cw.view.model.Hide()
	cw.view.stopArmTimer()
	cw.win.Hide()
	cw.visible = false
	if cw.view.onHide != nil {
		cw.view.onHide()
	}
}

// refresh shows, updates or hides the window after a queue change.
func (cw *cardWindow) refresh() {
	if !cw.view.refresh() {
		if cw.visible {
			cw.win.Hide()
			cw.visible = false
		}
		return
	}
	if cw.view.model.Hidden() || cw.visible {
		return
	}
	if cw.position != nil {
		cw.position(cw.win)
	} else {
		cw.win.CenterOnScreen()
	}
	cw.win.Show()
	cw.visible = true
	cw.win.Canvas().Unfocus()
}

// showAgain brings a hidden card back (tray, Processes window).
func (cw *cardWindow) showAgain() {
	if cw.view.model.Queue.Len() == 0 {
		return
	}
	cw.view.model.Show()
	cw.view.setArmed(false)
	cw.view.scheduleArm()
	cw.refresh()
	cw.win.RequestFocus()
}
