package ui

import (
	"fmt"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/agentgate/agentgate/exec"
	"github.com/agentgate/agentgate/ui/model"
)

// allChoice is the filter menus' "no filter" entry.
const allChoice = "All"

// columnWidths are the Processes table's column widths, in Columns order.
var columnWidths = []float32{100, 300, 110, 110, 60, 80, 80, 80}

// processesView is the Processes window's content. Every method runs on the
// Fyne thread.
type processesView struct {
	// model holds the records.
	model *model.ProcessesModel
	// gate cancels runs.
	gate model.Gate
	// live reads this app's own runs' output.
	live model.LiveReader
	// now is the clock for elapsed times.
	now func() time.Time
	// selected is the id of the selected run ("" none).
	selected string
	// lastDetails is the selected record as last shown, to skip re-reading.
	lastDetails exec.Record

	// table is the virtualised run table.
	table *widget.Table
	// stateSel, providerSel and projectSel are the filters.
	stateSel, providerSel, projectSel *widget.Select
	// count says how many runs are shown.
	count *widget.Label
	// pending is the banner shown while proposals wait.
	pending *fyne.Container
	// pendingText says how many wait.
	pendingText *widget.Label
	// detailTitle, detailFacts, stdout, stderr and changes show the selected
	// run: its command, RunSummary, output tails and change summary.
	detailTitle, detailFacts, stdout, stderr, changes *widget.Label
	// cancel cancels the selected run; cancelAll every running shown run.
	cancel, cancelAll *widget.Button
	// status shows the result of the last action.
	status *widget.Label
	// root is the whole window content.
	root fyne.CanvasObject
}

// newProcessesView builds the window content; showCard brings the hidden
// approval card back.
func newProcessesView(m *model.ProcessesModel, gate model.Gate, live model.LiveReader, showCard func()) *processesView {
	v := &processesView{model: m, gate: gate, live: live, now: time.Now}
	v.table = widget.NewTableWithHeaders(
		func() (int, int) { return m.Len(), len(model.Columns) },
		func() fyne.CanvasObject {
			l := widget.NewLabel("")
			l.Truncation = fyne.TextTruncateEllipsis
			return l
		},
		func(id widget.TableCellID, o fyne.CanvasObject) {
			rec, ok := m.Row(id.Row)
			text := ""
			if ok {
				text = model.CellText(&rec, id.Col, v.now())
			}
			o.(*widget.Label).SetText(text)
		},
	)
	v.table.ShowHeaderColumn = false
	v.table.CreateHeader = func() fyne.CanvasObject {
		return widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	}
	v.table.UpdateHeader = func(id widget.TableCellID, o fyne.CanvasObject) {
		if id.Col >= 0 && id.Col < len(model.Columns) {
			o.(*widget.Label).SetText(model.Columns[id.Col])
		}
	}
	for i, w := range columnWidths {
		v.table.SetColumnWidth(i, w)
	}
	v.table.OnSelected = func(id widget.TableCellID) {
		if rec, ok := m.Row(id.Row); ok {
			v.selected = rec.ID
			v.lastDetails = exec.Record{}
			v.showDetails()
		}
	}

	states := []string{allChoice}
	for _, s := range []exec.State{exec.StateRunning, exec.StateExited, exec.StateTimedOut, exec.StateCancelled, exec.StateFailedToStart, exec.StateLost} {
		states = append(states, string(s))
	}
	v.stateSel = widget.NewSelect(states, func(string) { v.applyFilter() })
	v.stateSel.Selected = allChoice
	v.providerSel = widget.NewSelect([]string{allChoice}, func(string) { v.applyFilter() })
	v.providerSel.Selected = allChoice
	v.projectSel = widget.NewSelect([]string{allChoice}, func(string) { v.applyFilter() })
	v.projectSel.Selected = allChoice
	v.count = widget.NewLabel("")

	v.pendingText = widget.NewLabel("")
	v.pending = container.NewHBox(widget.NewIcon(theme.WarningIcon()), v.pendingText,
		widget.NewButton("Show", showCard))
	v.pending.Hide()

	mono := func() *widget.Label {
		l := widget.NewLabel("")
		l.TextStyle.Monospace = true
		l.Wrapping = fyne.TextWrapBreak
		return l
	}
	v.detailTitle = widget.NewLabelWithStyle("Select a run to see its output.", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	v.detailTitle.Wrapping = fyne.TextWrapBreak
	v.detailFacts = widget.NewLabel("")
	v.detailFacts.Wrapping = fyne.TextWrapWord
	v.detailFacts.Hide()
	v.stdout, v.stderr, v.changes = mono(), mono(), mono()
	v.cancel = widget.NewButtonWithIcon("Cancel", theme.MediaStopIcon(), v.onCancel)
	v.cancel.Disable()
	v.cancelAll = widget.NewButton("Cancel all", v.onCancelAll)
	v.status = widget.NewLabel("")
	v.status.Wrapping = fyne.TextWrapWord
	v.status.Hide()

	filters := container.NewHBox(widget.NewLabel("State"), v.stateSel, widget.NewLabel("Provider"), v.providerSel,
		widget.NewLabel("Project"), v.projectSel, v.count)
	tabs := container.NewAppTabs(
		container.NewTabItem("Output", container.NewVScroll(v.stdout)),
		container.NewTabItem("Errors", container.NewVScroll(v.stderr)),
		container.NewTabItem("Changes", container.NewVScroll(v.changes)),
	)
	details := container.NewBorder(container.NewVBox(
		container.NewBorder(nil, nil, nil, container.NewHBox(v.cancel, v.cancelAll), v.detailTitle), v.detailFacts),
		v.status, nil, nil, tabs)
	split := container.NewVSplit(v.table, details)
	split.SetOffset(0.45)
	v.root = container.NewBorder(container.NewVBox(v.pending, filters), nil, nil, nil, split)
	v.refreshFilters()
	return v
}

// applyFilter sets the model's filter from the menus.
func (v *processesView) applyFilter() {
	f := model.Filter{}
	if v.stateSel != nil && v.stateSel.Selected != allChoice {
		f.State = exec.State(v.stateSel.Selected)
	}
	if v.providerSel != nil && v.providerSel.Selected != allChoice {
		f.Provider = v.providerSel.Selected
	}
	if v.projectSel != nil && v.projectSel.Selected != allChoice {
		f.Project = v.projectSel.Selected
	}
	v.model.SetFilter(f)
	v.refresh()
}

// refreshFilters updates the provider and project menus from the records.
func (v *processesView) refreshFilters() {
	providers, projects := v.model.FilterOptions()
	v.providerSel.Options = append([]string{allChoice}, providers...)
	v.projectSel.Options = append([]string{allChoice}, projects...)
}

// refresh redraws the table and the selected run after the model changed.
func (v *processesView) refresh() {
	if v.projectSel == nil {
		return
	}
	v.refreshFilters()
	n := v.model.Len()
	if n == 1 {
		v.count.SetText("1 run")
	} else {
		v.count.SetText(fmt.Sprintf("%d runs", n))
	}
	v.cancelAll.Disable()
	if len(v.model.Running()) > 0 {
		v.cancelAll.Enable()
	}
	v.table.Refresh()
	v.showDetails()
}

// setPending shows or hides the "N proposals wait" banner.
func (v *processesView) setPending(n int) {
	switch n {
	case 0:
		v.pending.Hide()
		return
	case 1:
		v.pendingText.SetText("1 proposal waits for your answer.")
	default:
		v.pendingText.SetText(fmt.Sprintf("%d proposals wait for your answer.", n))
	}
	v.pending.Show()
}

// showDetails shows the selected run's output and changes.
func (v *processesView) showDetails() {
	if v.selected == "" {
		return
	}
	rec, _, ok := v.model.Find(v.selected)
	if !ok {
		v.detailTitle.SetText("The selected run's record is gone (pruned).")
		v.cancel.Disable()
		return
	}
	if rec.State.Final() && v.lastDetails.ID == rec.ID && v.lastDetails.State == rec.State {
		return
	}
	v.lastDetails = rec
	v.detailTitle.SetText(model.CellText(&rec, 1, v.now()))
	setOptional(v.detailFacts, model.RunSummary(&rec, v.now()))
	out, errs, changes := model.RunDetails(&rec, v.live)
	if rec.Error != "" {
		errs = rec.Error + "\n" + errs
	}
	v.stdout.SetText(out)
	v.stderr.SetText(errs)
	v.changes.SetText(changes)
	if rec.State == exec.StateRunning {
		v.cancel.Enable()
	} else {
		v.cancel.Disable()
	}
}

// onCancel cancels the selected run.
func (v *processesView) onCancel() {
	if v.selected == "" {
		return
	}
	if err := v.gate.CancelRun(v.selected); err != nil {
		setOptional(v.status, "Could not cancel: "+err.Error())
		return
	}
	setOptional(v.status, "Cancel requested; the run ends within its grace period.")
}

// onCancelAll cancels every running run shown.
func (v *processesView) onCancelAll() {
	n, err := v.model.CancelAll(v.gate)
	if err != nil {
		setOptional(v.status, fmt.Sprintf("Asked %d runs to cancel; some failed: %v", n, err))
		return
	}
	setOptional(v.status, fmt.Sprintf("Asked %d runs to cancel.", n))
}
