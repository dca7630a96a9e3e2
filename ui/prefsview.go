package ui

import (
	"fmt"
	"image/color"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/agentgate/agentgate/exec/display"
	"github.com/agentgate/agentgate/prefs"
	"github.com/agentgate/agentgate/ui/model"
)

// prefsView is Preferences ▸ Agent ▸ Allowed commands…. Every method runs
// on the Fyne thread.
type prefsView struct {
	// model reads and edits the lists.
	model *model.AllowedModel
	// scopes are the lists offered, Global first.
	scopes []model.ScopeRef
	// current is the index of the scope shown.
	current int
	// view is the current scope's content.
	view model.View
	// ruleStats are the figures of view's rules (nil until computed, off
	// the Fyne thread); statsGen numbers the computations so a late one
	// for another view is dropped.
	ruleStats []model.RuleStatLine
	statsGen  int
	// grantLines are the temporary grants shown; selectedGrant is the index
	// of the selected one (-1 none).
	grantLines    []model.GrantLine
	selectedGrant int
	// ticker refreshes the grants' time left while the window is open.
	ticker *time.Ticker
	// stopTicker ends the ticker's goroutine.
	stopTicker chan struct{}
	// selectedRule is the index of the selected rule (-1 none).
	selectedRule int
	// shownUntrusted are the rules the trust review showed.
	shownUntrusted []prefs.Rule
	// openURL opens a file in the system's editor (nil: not possible).
	openURL func(*url.URL) error
	// autostart switches "Start at login".
	autostart model.Autostart

	// The widgets.
	scopeList *widget.List
	// scopeTitle names the scope shown and says whom its rules apply to.
	scopeTitle *widget.Label
	// file is the scope's file, relative to home and truncated to fit.
	file *widget.Label
	// copyPath copies the file's full path to the clipboard.
	copyPath                *widget.Button
	trustTitle              *widget.Label
	rules                   *widget.List
	errors                  *widget.Label
	trustBox                *fyne.Container
	trustText               *widget.Label
	input                   *widget.Entry
	draftLine, draftPreview *widget.Label
	draftWarning, status    *widget.Label
	add, remove, open       *widget.Button
	startAtLogin            *widget.Check
	// rulesPage is a scope's page; grantsPage the Temporary grants page.
	rulesPage, grantsPage fyne.CanvasObject
	// grants lists the grants in force.
	grants *widget.List
	// grantsStatus reports what Revoke did.
	grantsStatus           *widget.Label
	revokeGrant, revokeAll *widget.Button
	root                   fyne.CanvasObject
}

// grantsEntry is the scope list's last entry, the Temporary grants page.
const grantsEntry = "Temporary grants"

// grantsRefresh is how often the Temporary grants page updates the time
// each grant has left.
const grantsRefresh = 5 * time.Second

// newPrefsView builds the Allowed commands view for scopes.
func newPrefsView(m *model.AllowedModel, scopes []model.ScopeRef, openURL func(*url.URL) error, autostart model.Autostart) *prefsView {
	v := &prefsView{model: m, scopes: scopes, selectedRule: -1, selectedGrant: -1, openURL: openURL, autostart: autostart}
	v.scopeList = widget.NewList(func() int {
		if m.Grants != nil {
			return len(v.scopes) + 1
		}
		return len(v.scopes)
	},
		func() fyne.CanvasObject {
			l := widget.NewLabel("")
			l.Truncation = fyne.TextTruncateEllipsis
			return l
		},
		func(i widget.ListItemID, o fyne.CanvasObject) {
			if i < len(v.scopes) {
				o.(*widget.Label).SetText(v.scopes[i].Label())
			} else {
				o.(*widget.Label).SetText(grantsEntry)
			}
		})
	v.scopeList.OnSelected = func(i widget.ListItemID) {
		if i >= len(v.scopes) {
			v.showGrants()
			return
		}
		v.current = i
		v.selectedRule = -1
		v.rulesPage.Show()
		v.grantsPage.Hide()
		v.reload()
	}

	v.scopeTitle = widget.NewLabel("")
	v.scopeTitle.Wrapping = fyne.TextWrapWord
	v.file = widget.NewLabel("")
	v.file.Truncation = fyne.TextTruncateEllipsis
	v.file.TextStyle.Monospace = true
	v.copyPath = widget.NewButtonWithIcon("", theme.ContentCopyIcon(), v.onCopyPath)
	v.rules = widget.NewList(func() int { return len(v.view.Rules) },
		func() fyne.CanvasObject {
			l := widget.NewLabel("")
			l.TextStyle.Monospace = true
			l.Truncation = fyne.TextTruncateEllipsis
			return container.New(tightRows{}, l, detailLabel())
		},
		func(i widget.ListItemID, o fyne.CanvasObject) {
			if i >= len(v.view.Rules) {
				return
			}
			row := o.(*fyne.Container).Objects
			row[0].(*widget.Label).SetText(v.view.Rules[i].Text)
			st := row[1].(*widget.Label)
			st.Importance = widget.MediumImportance
			text := ""
			if i < len(v.ruleStats) {
				text = v.ruleStats[i].Summary
				if m := v.ruleStats[i].Marks; m != "" {
					text += "  —  " + m
					st.Importance = widget.WarningImportance
				}
			}
			st.SetText(text)
		})
	v.rules.OnSelected = func(i widget.ListItemID) { v.selectedRule = i; v.remove.Enable() }
	v.errors = widget.NewLabel("")
	v.errors.Wrapping = fyne.TextWrapBreak
	v.errors.Importance = widget.DangerImportance
	v.trustTitle = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	v.trustTitle.Wrapping = fyne.TextWrapWord
	v.trustText = widget.NewLabel("")
	v.trustText.Wrapping = fyne.TextWrapWord
	trustBg := canvas.NewRectangle(withAlpha(theme.Color(theme.ColorNameWarning), 0x38))
	trustBg.StrokeColor = theme.Color(theme.ColorNameWarning)
	trustBg.StrokeWidth = 1
	trustBg.CornerRadius = theme.Size(theme.SizeNameInputRadius)
	v.trustBox = container.NewStack(trustBg, container.NewPadded(container.NewVBox(
		container.NewBorder(nil, nil, widget.NewIcon(theme.WarningIcon()), nil, v.trustTitle),
		v.trustText,
		container.NewHBox(
			widget.NewButtonWithIcon("Trust these rules", theme.ConfirmIcon(), v.onTrust),
			widget.NewButton("Keep inactive", func() { v.trustBox.Hide() })))))
	v.trustBox.Hide()

	v.input = widget.NewEntry()
	v.input.SetPlaceHolder("Type a command as shell words, e.g. git status")
	v.input.OnChanged = func(string) { v.updateDraft() }
	v.draftLine = widget.NewLabel("")
	v.draftLine.TextStyle.Monospace = true
	v.draftLine.Wrapping = fyne.TextWrapBreak
	v.draftPreview = widget.NewLabel("")
	v.draftPreview.Wrapping = fyne.TextWrapWord
	v.draftLine.Hide()
	v.draftPreview.Hide()
	v.draftWarning = widget.NewLabel("")
	v.draftWarning.Wrapping = fyne.TextWrapBreak
	v.draftWarning.Importance = widget.WarningImportance
	v.status = widget.NewLabel("")
	v.status.Wrapping = fyne.TextWrapWord
	v.status.Hide()
	v.add = widget.NewButtonWithIcon("Add rule", theme.ContentAddIcon(), v.onAdd)
	v.remove = widget.NewButtonWithIcon("Remove selected", theme.DeleteIcon(), v.onRemove)
	v.open = widget.NewButtonWithIcon("Open in editor", theme.DocumentIcon(), v.onOpen)
	v.startAtLogin = widget.NewCheck("Start at login", v.onStartAtLogin)
	if !autostart.Supported() {
		v.startAtLogin.Hide()
	} else if on, err := autostart.Enabled(); err == nil {
		v.startAtLogin.Checked = on
	}

	head := container.NewVBox(
		v.scopeTitle,
		container.NewBorder(nil, nil, nil, container.NewHBox(v.copyPath, v.open), v.file),
		v.trustBox, v.errors,
	)
	addBox := container.NewVBox(
		widget.NewLabelWithStyle("Add a rule (a command allowed with any further arguments)", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		container.NewBorder(nil, nil, nil, v.add, v.input),
		v.draftLine, v.draftWarning, v.draftPreview, v.status,
	)
	v.rulesPage = container.NewBorder(head, container.NewVBox(container.NewHBox(v.remove), addBox), nil, nil, v.rules)
	v.grantsPage = v.buildGrantsPage()
	v.grantsPage.Hide()
	split := container.NewHSplit(v.scopeList, container.NewStack(v.rulesPage, v.grantsPage))
	split.SetOffset(0.31)
	heading := widget.NewLabelWithStyle("Agent ▸ Allowed commands", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	heading.SizeName = theme.SizeNameSubHeadingText
	v.root = container.NewBorder(container.NewVBox(heading, widget.NewSeparator()), v.startAtLogin, nil, nil, split)
	v.scopeList.Select(0)
	v.reload()
	return v
}

// scope returns the scope shown.
func (v *prefsView) scope() model.ScopeRef { return v.scopes[v.current] }

// inBackground starts work that must stay off the window's thread. The
// package's tests make it a call in place: Fyne's test driver runs fyne.Do
// at once on the goroutine that calls it, so a real goroutine there would
// touch widgets while the test does (Fyne's renderer cache is not safe for
// that and fails the run with "concurrent map writes").
var inBackground = func(work func()) { go work() }

// reload re-reads the scope shown, and computes its rules' figures in the
// background.
func (v *prefsView) reload() {
	view, err := v.model.View(v.scope())
	v.view = view
	v.ruleStats = nil
	v.statsGen++
	gen := v.statsGen
	inBackground(func() {
		stats, err := v.model.RuleStats(view)
		if err != nil {
			fmt.Fprintln(os.Stderr, "agentgate:", err)
		}
		fyne.Do(func() {
			if gen == v.statsGen {
				v.ruleStats = stats
				v.rules.Refresh()
			}
		})
	})
	v.scopeTitle.SetText(v.scope().Name() + ": " + v.scope().AppliesTo())
	v.file.SetText(model.DisplayPath(view.File))
	msgs := view.Errors
	if err != nil {
		msgs = append([]string{err.Error()}, msgs...)
	}
	setOptional(v.errors, strings.Join(msgs, "\n"))
	v.rules.UnselectAll()
	v.selectedRule = -1
	v.remove.Disable()
	v.rules.Refresh()
	v.trustBox.Hide()
	if s := v.scope(); s.Scope == prefs.ScopeProject {
		text, rules, err := v.model.TrustReview(s.Project)
		if err == nil && len(rules) > 0 {
			title, body, _ := strings.Cut(text, "\n")
			v.trustTitle.SetText(title)
			v.trustText.SetText(body)
			v.shownUntrusted = rules
			v.trustBox.Show()
		}
	}
	v.updateDraft()
}

// updateDraft shows the Tcl line and preview for the typed command.
func (v *prefsView) updateDraft() {
	if strings.TrimSpace(v.input.Text) == "" {
		setOptional(v.draftLine, "")
		setOptional(v.draftWarning, "")
		setOptional(v.draftPreview, "")
		v.add.Disable()
		return
	}
	d, err := v.model.Draft(v.scope(), v.input.Text)
	if err != nil {
		setOptional(v.draftLine, err.Error())
		setOptional(v.draftWarning, "")
		setOptional(v.draftPreview, "")
		v.add.Disable()
		return
	}
	setOptional(v.draftLine, "Will write this line to "+filepath.Base(v.view.File)+":  "+d.Line)
	setOptional(v.draftWarning, d.Warning)
	setOptional(v.draftPreview, d.Preview)
	v.add.Enable()
}

// onAdd writes the typed rule.
func (v *prefsView) onAdd() {
	r, err := v.model.Add(v.scope(), v.input.Text)
	if err != nil {
		setOptional(v.status, "Not added: "+err.Error())
		return
	}
	v.input.SetText("")
	v.reload()
	setOptional(v.status, "Added "+display.Text(prefs.FormatList(r.Tokens))+" at line "+strconv.Itoa(r.Line)+".")
}

// onRemove removes the selected rule.
func (v *prefsView) onRemove() {
	if v.selectedRule < 0 || v.selectedRule >= len(v.view.Rules) {
		return
	}
	r := v.view.Rules[v.selectedRule].Rule
	if err := v.model.Remove(v.scope(), r); err != nil {
		setOptional(v.status, "Not removed: "+err.Error())
		return
	}
	v.reload()
	setOptional(v.status, "Removed "+display.Text(prefs.FormatList(r.Tokens))+".")
}

// onOpen opens the scope's file in the system editor, creating an empty
// file first so there is something to open.
func (v *prefsView) onOpen() {
	if v.openURL == nil || v.view.File == "" {
		return
	}
	if _, err := os.Stat(v.view.File); os.IsNotExist(err) {
		if err := os.MkdirAll(filepath.Dir(v.view.File), 0o700); err == nil {
			_ = prefs.WriteFileAtomic(v.view.File, nil, 0o600)
		}
	}
	u := &url.URL{Scheme: "file", Path: filepath.ToSlash(v.view.File)}
	if err := v.openURL(u); err != nil {
		setOptional(v.status, "Could not open the editor: "+err.Error()+". The file is "+v.view.File)
	}
}

// onCopyPath copies the scope file's full path (the label may shorten it)
// to the clipboard.
func (v *prefsView) onCopyPath() {
	if v.view.File == "" || fyne.CurrentApp() == nil {
		return
	}
	fyne.CurrentApp().Clipboard().SetContent(v.view.File)
	setOptional(v.status, "Copied "+v.view.File+" to the clipboard.")
}

// withAlpha returns c with its alpha set to a (0–255), for tinted
// backgrounds that keep the text above them readable in both themes.
func withAlpha(c color.Color, a uint8) color.Color {
	r, g, b, _ := c.RGBA()
	return color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: a}
}

// onTrust confirms the rules the review showed.
func (v *prefsView) onTrust() {
	if err := v.model.Trust(v.scope().Project, v.shownUntrusted); err != nil {
		setOptional(v.status, "Not trusted: "+err.Error())
		return
	}
	v.reload()
	setOptional(v.status, "Trusted. Rules changed again since the review stay inactive.")
}

// onStartAtLogin installs or removes the autostart entry.
func (v *prefsView) onStartAtLogin(on bool) {
	if err := v.autostart.Set(on); err != nil {
		setOptional(v.status, err.Error())
		v.startAtLogin.Checked = !on
		v.startAtLogin.Refresh()
	}
}

// detailLabel is the second line of a list row: smaller, italic, cut
// with an ellipsis when too long.
func detailLabel() *widget.Label {
	l := widget.NewLabel("")
	l.TextStyle.Italic = true
	l.SizeName = theme.SizeNameCaptionText
	l.Truncation = fyne.TextTruncateEllipsis
	return l
}

// tightRows stacks its objects top to bottom with no space between them
// (a rule and its figures read as one row).
type tightRows struct{}

// MinSize is the widest object's width and the sum of the heights.
func (tightRows) MinSize(objects []fyne.CanvasObject) fyne.Size {
	var size fyne.Size
	for _, o := range objects {
		m := o.MinSize()
		size.Width = max(size.Width, m.Width)
		size.Height += m.Height - theme.Padding()
	}
	return size.AddWidthHeight(0, theme.Padding())
}

// Layout places the objects one under another, each as wide as the row,
// overlapping their labels' padding.
func (tightRows) Layout(objects []fyne.CanvasObject, size fyne.Size) {
	y := float32(0)
	for _, o := range objects {
		h := o.MinSize().Height
		o.Move(fyne.NewPos(0, y))
		o.Resize(fyne.NewSize(size.Width, h))
		y += h - theme.Padding()
	}
}

// buildGrantsPage builds the Temporary grants page: the grants in force
// with what each allows and its time left, Revoke and Revoke all.
func (v *prefsView) buildGrantsPage() fyne.CanvasObject {
	title := widget.NewLabelWithStyle("Temporary grants", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	about := widget.NewLabel("Commands allowed for a while, from the approval card or `agentgate run`'s prompt: no rule is " +
		"written, and each ends by itself. Every host honours them (the app, agentgate run, agentgate mcp and the hooks); " +
		"revoking ends one at once for all of them.")
	about.Wrapping = fyne.TextWrapWord
	v.grants = widget.NewList(func() int { return len(v.grantLines) },
		func() fyne.CanvasObject {
			l := widget.NewLabel("")
			l.TextStyle.Monospace = true
			l.Truncation = fyne.TextTruncateEllipsis
			return container.New(tightRows{}, l, detailLabel())
		},
		func(i widget.ListItemID, o fyne.CanvasObject) {
			if i < len(v.grantLines) {
				row := o.(*fyne.Container).Objects
				row[0].(*widget.Label).SetText(v.grantLines[i].Allows)
				row[1].(*widget.Label).SetText(v.grantLines[i].Detail)
			}
		})
	v.grants.OnSelected = func(i widget.ListItemID) { v.selectedGrant = i; v.revokeGrant.Enable() }
	v.revokeGrant = widget.NewButtonWithIcon("Revoke selected", theme.CancelIcon(), v.onRevokeGrant)
	v.revokeGrant.Disable()
	v.revokeAll = widget.NewButtonWithIcon("Revoke all", theme.DeleteIcon(), v.onRevokeAll)
	v.grantsStatus = widget.NewLabel("")
	v.grantsStatus.Wrapping = fyne.TextWrapWord
	v.grantsStatus.Hide()
	return container.NewBorder(container.NewVBox(title, about), container.NewVBox(container.NewHBox(v.revokeGrant, v.revokeAll), v.grantsStatus),
		nil, nil, v.grants)
}

// showGrants shows the Temporary grants page and keeps its times current
// while the window is open.
func (v *prefsView) showGrants() {
	v.rulesPage.Hide()
	v.grantsPage.Show()
	v.refreshGrants()
	if v.ticker == nil {
		v.ticker, v.stopTicker = time.NewTicker(grantsRefresh), make(chan struct{})
		go func(tick <-chan time.Time, stop <-chan struct{}) {
			for {
				select {
				case <-tick:
					fyne.Do(func() {
						if v.grantsPage.Visible() {
							v.refreshGrants()
						}
					})
				case <-stop:
					return
				}
			}
		}(v.ticker.C, v.stopTicker)
	}
}

// refreshGrants re-reads the grants in force.
func (v *prefsView) refreshGrants() {
	selected := ""
	if v.selectedGrant >= 0 && v.selectedGrant < len(v.grantLines) {
		selected = v.grantLines[v.selectedGrant].Grant.ID
	}
	lines, err := v.model.GrantLines(time.Now())
	v.grantLines = lines
	v.selectedGrant = -1
	v.grants.UnselectAll()
	for i, l := range lines {
		if l.Grant.ID == selected {
			v.selectedGrant = i
			v.grants.Select(i)
		}
	}
	if v.selectedGrant < 0 {
		v.revokeGrant.Disable()
	}
	if len(lines) == 0 {
		v.revokeAll.Disable()
	} else {
		v.revokeAll.Enable()
	}
	v.grants.Refresh()
	switch {
	case err != nil:
		setOptional(v.grantsStatus, err.Error())
	case len(lines) == 0:
		setOptional(v.grantsStatus, noGrants)
	case v.grantsStatus.Text == noGrants:
		setOptional(v.grantsStatus, "")
	}
}

// noGrants is the Temporary grants page's text when there are none.
const noGrants = "No temporary grants are in force."

// onRevokeGrant ends the selected grant.
func (v *prefsView) onRevokeGrant() {
	if v.selectedGrant < 0 || v.selectedGrant >= len(v.grantLines) {
		return
	}
	g := v.grantLines[v.selectedGrant].Grant
	v.selectedGrant = -1
	if err := v.model.Revoke(g.ID); err != nil {
		setOptional(v.grantsStatus, "Not revoked: "+err.Error())
		return
	}
	v.refreshGrants()
	setOptional(v.grantsStatus, "Revoked "+g.AllowsText()+". Agents are asked again from now on.")
}

// onRevokeAll ends every grant.
func (v *prefsView) onRevokeAll() {
	n, err := v.model.RevokeAll()
	if err != nil {
		setOptional(v.grantsStatus, "Not revoked: "+err.Error())
		return
	}
	v.refreshGrants()
	setOptional(v.grantsStatus, fmt.Sprintf("Revoked every temporary grant (%d).", n))
}

// close stops the view's background work (the grants' ticker); the
// window calls it when it closes.
func (v *prefsView) close() {
	if v.ticker != nil {
		v.ticker.Stop()
		close(v.stopTicker)
		v.ticker = nil
	}
}
