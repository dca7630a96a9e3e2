package model

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentgate/agentgate/exec"
	"github.com/agentgate/agentgate/exec/display"
)

// Gate is what the Processes window and "Stop everything" need from the
// broker; *agentbridge.Broker implements it.
type Gate interface {
	// CancelRun is the person's cancel of any proposal or run, of any host.
	CancelRun(id string) error
	// StopEverything denies every pending proposal and cancels every run.
	StopEverything()
}

// Filter narrows the Processes table; an empty field matches everything.
type Filter struct {
	// State keeps runs in this state ("running", "exited", …).
	State exec.State
	// Provider keeps runs proposed by this provider.
	Provider string
	// Project keeps runs in this project root.
	Project string
}

// matches reports whether rec passes f.
func (f Filter) matches(rec *exec.Record) bool {
	return (f.State == "" || rec.State == f.State) &&
		(f.Provider == "" || rec.Provider == f.Provider) &&
		(f.Project == "" || rec.ProjectRoot == f.Project)
}

// Columns of the Processes table, in order.
var Columns = []string{"State", "Command", "Provider", "Project", "Host", "Started", "Time", "Exit"}

// ProcessesModel holds the run records of every host (read from the runs
// directory) and the filtered, newest-first view the table shows. Safe for
// concurrent use.
type ProcessesModel struct {
	// StateDir is the executor's state directory (records in StateDir/runs).
	StateDir string

	// mu guards the fields below.
	mu sync.Mutex
	// all holds every record by id.
	all map[string]*exec.Record
	// view is the filtered records, newest start first (ties: id descending).
	view []*exec.Record
	// filter is the current filter.
	filter Filter
	// alerted holds the runs whose protected-file changes were announced
	// (ProtectedAlerts); those found by LoadAll count as announced.
	alerted map[string]bool
}

// runsDir is the directory holding the run records.
func (m *ProcessesModel) runsDir() string { return filepath.Join(m.StateDir, "runs") }

// LoadAll reads every record afresh (exec.ListRecords: unreadable files are
// skipped) and rebuilds the view.
func (m *ProcessesModel) LoadAll() error {
	// Without their output (RunDetails reads it again): 10,000 runs may
	// carry up to 8 KiB each.
	recs, err := exec.ListRecordsWithoutOutput(m.StateDir)
	all := make(map[string]*exec.Record, len(recs))
	for i := range recs {
		all[recs[i].ID] = &recs[i]
	}
	m.mu.Lock()
	m.all = all
	m.alerted = make(map[string]bool)
	for id, rec := range all {
		if len(rec.ProtectedChanged) > 0 {
			m.alerted[id] = true
		}
	}
	m.rebuildLocked()
	m.mu.Unlock()
	return err
}

// ProtectedAlerts returns, once each, the runs read since LoadAll whose
// record reports changes to the files that steer agents and tools
// (exec.Record.ProtectedChanged), for a notification.
func (m *ProcessesModel) ProtectedAlerts() []exec.Record {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.alerted == nil {
		m.alerted = make(map[string]bool)
	}
	var out []exec.Record
	for id, rec := range m.all {
		if len(rec.ProtectedChanged) > 0 && !m.alerted[id] {
			m.alerted[id] = true
			out = append(out, *rec)
		}
	}
	return out
}

// ProtectedAlertText is the notification for a run that changed protected
// files: what changed, and the command, escaped.
func ProtectedAlertText(rec *exec.Record) string {
	return EscapeText(strings.Join(rec.ProtectedChanged, ", ")) + " — during " + display.Command(rec.Argv)
}

// Update re-reads the records of ids (a record file that is gone removes
// the run; one that does not parse — being replaced — keeps the old one)
// and rebuilds the view.
func (m *ProcessesModel) Update(ids []string) {
	read := make(map[string]*exec.Record, len(ids))
	gone := make(map[string]bool)
	for _, id := range ids {
		rec, err := exec.ReadRecord(m.StateDir, id)
		if errors.Is(err, os.ErrNotExist) {
			gone[id] = true
			continue
		}
		if err != nil || rec.ID != id {
			continue
		}
		rec = rec.WithoutInlineOutput()
		read[id] = &rec
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.all == nil {
		m.all = make(map[string]*exec.Record)
	}
	for id := range gone {
		delete(m.all, id)
	}
	for id, rec := range read {
		m.all[id] = rec
	}
	m.rebuildLocked()
}

// UpdateJournals re-reads the run record journals named (files of the runs
// directory, exec.IsJournalFile) and takes every record in them that is at
// least as far along as the one shown (exec.NewerRecord); a journal that is
// gone changes nothing (its records were written as files first).
func (m *ProcessesModel) UpdateJournals(names []string) {
	var read []exec.Record
	for _, name := range names {
		recs, _ := exec.ReadJournalWithoutOutput(m.StateDir, name)
		read = append(read, recs...)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.all == nil {
		m.all = make(map[string]*exec.Record)
	}
	for i := range read {
		if old, ok := m.all[read[i].ID]; !ok || exec.NewerRecord(*old, read[i]) {
			m.all[read[i].ID] = &read[i]
		}
	}
	m.rebuildLocked()
}

// RecordIDFromFile returns the run id a file name in the runs directory
// belongs to when it is a record ("<id>.json"), else "".
func RecordIDFromFile(name string) string {
	name = filepath.Base(name)
	if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") {
		return ""
	}
	return strings.TrimSuffix(name, ".json")
}

// SetFilter changes the filter and rebuilds the view.
func (m *ProcessesModel) SetFilter(f Filter) {
	m.mu.Lock()
	m.filter = f
	m.rebuildLocked()
	m.mu.Unlock()
}

// rebuildLocked recomputes view from all and filter.
func (m *ProcessesModel) rebuildLocked() {
	m.view = m.view[:0]
	for _, rec := range m.all {
		if m.filter.matches(rec) {
			m.view = append(m.view, rec)
		}
	}
	slices.SortFunc(m.view, func(a, b *exec.Record) int {
		if c := b.StartedAt.Compare(a.StartedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
}

// Len returns the number of rows the view holds.
func (m *ProcessesModel) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.view)
}

// Row returns row i of the view (newest first); false when out of range.
func (m *ProcessesModel) Row(i int) (exec.Record, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if i < 0 || i >= len(m.view) {
		return exec.Record{}, false
	}
	return *m.view[i], true
}

// Find returns the record with id and its row in the view (-1 when
// filtered out); false when no such record is known.
func (m *ProcessesModel) Find(id string) (exec.Record, int, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	rec, ok := m.all[id]
	if !ok {
		return exec.Record{}, -1, false
	}
	return *rec, slices.Index(m.view, rec), true
}

// Running returns the ids of the running runs in the view.
func (m *ProcessesModel) Running() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var ids []string
	for _, rec := range m.view {
		if rec.State == exec.StateRunning {
			ids = append(ids, rec.ID)
		}
	}
	return ids
}

// RunningAll returns the ids of every running run, shown or filtered out.
func (m *ProcessesModel) RunningAll() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var ids []string
	for id, rec := range m.all {
		if rec.State == exec.StateRunning {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// StopEverything is the person's "Stop everything" after its confirmation:
// the broker denies its pending proposals and cancels its runs, the queue
// denies anything still waiting on the card, and every run of another host
// still recorded as running is asked to cancel. It returns the errors of
// those cancel requests, joined.
func StopEverything(gate Gate, queue *Queue, procs *ProcessesModel) error {
	gate.StopEverything()
	queue.DenyAll("stopped by the person (Stop everything)")
	var errs []error
	for _, id := range procs.RunningAll() {
		if err := gate.CancelRun(id); err != nil {
			errs = append(errs, fmt.Errorf("run %s: %w", id, err))
		}
	}
	return errors.Join(errs...)
}

// FilterOptions returns the providers and projects of every record (not
// only the shown ones), sorted, for the filter menus.
func (m *ProcessesModel) FilterOptions() (providers, projects []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	seenProv, seenProj := map[string]bool{}, map[string]bool{}
	for _, rec := range m.all {
		if rec.Provider != "" && !seenProv[rec.Provider] {
			seenProv[rec.Provider] = true
			providers = append(providers, rec.Provider)
		}
		if rec.ProjectRoot != "" && !seenProj[rec.ProjectRoot] {
			seenProj[rec.ProjectRoot] = true
			projects = append(projects, rec.ProjectRoot)
		}
	}
	slices.Sort(providers)
	slices.Sort(projects)
	return providers, projects
}

// CancelAll asks gate to cancel every running run in the view and returns
// how many it asked about, with the errors joined.
func (m *ProcessesModel) CancelAll(gate Gate) (int, error) {
	ids := m.Running()
	var errs []error
	for _, id := range ids {
		if err := gate.CancelRun(id); err != nil {
			errs = append(errs, fmt.Errorf("run %s: %w", id, err))
		}
	}
	return len(ids), errors.Join(errs...)
}

// CellText returns the text of column col (an index into Columns) for rec
// at now: the state, the display form of the command, provider, project
// (its base name), host kind ("app", "cli": the pid is in RunSummary), start time, elapsed (running) or
// duration, and exit code (or signal).
func CellText(rec *exec.Record, col int, now time.Time) string {
	switch Columns[col] {
	case "State":
		return strings.ReplaceAll(string(rec.State), "_", " ")
	case "Command":
		return display.Command(rec.Argv)
	case "Provider":
		return rec.Provider
	case "Project":
		if rec.ProjectRoot == "" {
			return ""
		}
		return filepath.Base(rec.ProjectRoot)
	case "Host":
		return string(rec.HostKind)
	case "Started":
		if rec.StartedAt.IsZero() {
			return ""
		}
		t := rec.StartedAt.Local()
		if y, mo, d := now.Local().Date(); t.Year() == y && t.Month() == mo && t.Day() == d {
			return t.Format("15:04:05")
		}
		return t.Format("Jan 2 15:04")
	case "Time":
		switch {
		case rec.StartedAt.IsZero():
			return ""
		case rec.State == exec.StateRunning:
			return display.Duration(now.Sub(rec.StartedAt))
		case !rec.EndedAt.IsZero():
			d := rec.EndedAt.Sub(rec.StartedAt)
			switch {
			case d < time.Second:
				return fmt.Sprintf("%d ms", d.Milliseconds())
			case d < 10*time.Second:
				return fmt.Sprintf("%.1f s", d.Seconds())
			}
			return display.Duration(d)
		}
		return ""
	case "Exit":
		switch {
		case rec.ExitCode != nil:
			return fmt.Sprint(*rec.ExitCode)
		case rec.Signal != "":
			return rec.Signal
		}
	}
	return ""
}

// RunSummary is the line under the selected run's command: its state
// (with the exit code or signal), how long it ran or has been running, the
// host kind and pid that runs it, the provider, and the working directory
// relative to home (see HomeRelative); empty parts are left out.
// "exited 1 · 2.4 s · app, pid 4242 · claude-code · in ~/src/webshop".
func RunSummary(rec *exec.Record, now time.Time) string {
	state := CellText(rec, 0, now)
	if exit := CellText(rec, len(Columns)-1, now); exit != "" {
		state += " " + exit
	}
	if rec.State == exec.StateCancelled && rec.CancelledBy != "" {
		state += " (" + EscapeText(rec.CancelledBy) + ")"
	}
	parts := []string{state}
	if d := CellText(rec, 6, now); d != "" {
		parts = append(parts, d)
	}
	host := string(rec.HostKind)
	if rec.HostPID > 0 {
		host += fmt.Sprintf(", pid %d", rec.HostPID)
	}
	if host != "" {
		parts = append(parts, host)
	}
	if rec.Provider != "" {
		parts = append(parts, EscapeText(rec.Provider))
	}
	if rec.Dir != "" {
		parts = append(parts, "in "+DisplayPath(rec.Dir))
	}
	if c := rec.Confinement; c != nil {
		parts = append(parts, EscapeText(c.Summary()))
	}
	return strings.Join(parts, " · ")
}

// LiveReader reads the retained output of a run this process hosts; the
// app passes one backed by its exec.Executor. ok is false for runs of other
// hosts, which are read from their record's spill files.
type LiveReader func(id string, s exec.Stream, cursor int64, max int) (c exec.Chunk, ok bool, err error)

// TailBytes is how much of each stream the Processes window shows.
const TailBytes = 64 << 10

// RunDetails returns the text shown for the selected run: its stdout tail,
// stderr tail and change summary, each with a note when the start was cut.
func RunDetails(rec *exec.Record, live LiveReader) (stdout, stderr, changes string) {
	read := func(s exec.Stream, total int64) string {
		from := max(total-TailBytes, 0)
		var c exec.Chunk
		var err error
		ok := false
		if live != nil {
			c, ok, err = live(rec.ID, s, from, TailBytes)
		}
		if !ok {
			c, err = exec.ReadRecorded(*rec, s, from, TailBytes)
		}
		if err != nil {
			return "(the output could not be read: " + err.Error() + ")"
		}
		text := EscapeText(string(c.Data))
		if from > 0 || c.Dropped {
			text = fmt.Sprintf("… (earlier output not shown; %s in total)\n", FormatBytes(total)) + text
		}
		if text == "" {
			return "(none)"
		}
		return text
	}
	stdout = read(exec.Stdout, rec.StdoutBytes)
	stderr = read(exec.Stderr, rec.StderrBytes)
	return stdout, stderr, ChangesText(rec)
}

// ChangesText renders a run's change summary for a person, after a loud
// warning when files that steer agents and tools changed during the run
// (exec.Record.ProtectedChanged).
func ChangesText(rec *exec.Record) string {
	if len(rec.ProtectedChanged) == 0 {
		return changesText(rec)
	}
	var b strings.Builder
	b.WriteString("⚠ Files that steer agents and tools changed during this run (look at them before the next agent session):\n")
	for _, p := range rec.ProtectedChanged {
		b.WriteString("  " + EscapeText(p) + "\n")
	}
	return b.String() + "\n" + changesText(rec)
}

// changesText renders a run's change summary.
func changesText(rec *exec.Record) string {
	ch := rec.Changes
	switch {
	case rec.State == exec.StateRunning:
		return "(reported when the run ends)"
	case rec.ChangesPending:
		return "(being summarised…)"
	case ch == nil:
		return "(none recorded)"
	}
	var b strings.Builder
	list := func(label string, paths []string) {
		if len(paths) == 0 {
			return
		}
		fmt.Fprintf(&b, "%s (%d):\n", label, len(paths))
		for _, p := range paths {
			b.WriteString("  " + display.Word(p) + "\n")
		}
	}
	list("Created", ch.Created)
	list("Modified", ch.Modified)
	list("Deleted", ch.Deleted)
	if b.Len() == 0 {
		b.WriteString("No files changed.\n")
	}
	if ch.Incomplete {
		fmt.Fprintf(&b, "Incomplete: %s\n", ch.Reason)
	}
	if c := ch.Cover; c != nil {
		fmt.Fprintf(&b, "(by %s, over %d entries)", ch.Method, c.Entries)
		for _, skipped := range c.Skipped {
			b.WriteString("\nNot looked at: " + display.Word(skipped))
		}
		return b.String()
	}
	fmt.Fprintf(&b, "(by %s)", ch.Method)
	return b.String()
}

// Throttle runs fn at most once per Interval however often Trigger is
// called: the first Trigger after a quiet period runs fn at once (on a new
// goroutine), later ones within Interval are coalesced into one call at the
// end of the interval. It keeps the Processes window responsive when
// thousands of records change.
type Throttle struct {
	// Interval is the minimum time between calls of fn.
	Interval time.Duration
	// fn is called for a batch of triggers.
	fn func()

	// mu guards last and scheduled.
	mu sync.Mutex
	// last is when fn was last started.
	last time.Time
	// scheduled is true while a call is pending.
	scheduled bool
	// calling serialises calls of fn, so a slow call never overlaps the next.
	calling sync.Mutex
}

// NewThrottle returns a Throttle calling fn at most once per interval.
func NewThrottle(interval time.Duration, fn func()) *Throttle {
	return &Throttle{Interval: interval, fn: fn}
}

// Trigger asks for a call of fn.
func (t *Throttle) Trigger() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.scheduled {
		return
	}
	t.scheduled = true
	wait := max(t.Interval-time.Since(t.last), 0)
	time.AfterFunc(wait, func() {
		t.mu.Lock()
		t.scheduled = false
		t.last = time.Now()
		t.mu.Unlock()
		t.calling.Lock()
		defer t.calling.Unlock()
		t.fn()
	})
}
