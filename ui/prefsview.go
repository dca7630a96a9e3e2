package ui

import (
	"image/color"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

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
	root                    fyne.CanvasObject
}

// newPrefsView builds the Allowed commands view for scopes.
func newPrefsView(m *model.AllowedModel, scopes []model.ScopeRef, openURL func(*url.URL) error, autostart model.Autostart) *prefsView {
	v := &prefsView{model: m, scopes: scopes, selectedRule: -1, openURL: openURL, autostart: autostart}
	v.scopeList = widget.NewList(func() int { return len(v.scopes) },
		func() fyne.CanvasObject {
			l := widget.NewLabel("")
			l.Truncation = fyne.TextTruncateEllipsis
			return l
		},
		func(i widget.ListItemID, o fyne.CanvasObject) { o.(*widget.Label).SetText(v.scopes[i].Label()) })
	v.scopeList.OnSelected = func(i widget.ListItemID) { v.current = i; v.selectedRule = -1; v.reload() }

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
			return l
		},
		func(i widget.ListItemID, o fyne.CanvasObject) {
			if i < len(v.view.Rules) {
				o.(*widget.Label).SetText(v.view.Rules[i].Text)
			}
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
	right := container.NewBorder(head, container.NewVBox(container.NewHBox(v.remove), addBox), nil, nil, v.rules)
	split := container.NewHSplit(v.scopeList, right)
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

// reload re-reads the scope shown.
func (v *prefsView) reload() {
	view, err := v.model.View(v.scope())
	v.view = view
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
	setOptional(v.status, "Added "+prefs.FormatList(r.Tokens)+" at line "+strconv.Itoa(r.Line)+".")
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
	setOptional(v.status, "Removed "+prefs.FormatList(r.Tokens)+".")
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
