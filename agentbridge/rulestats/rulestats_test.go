package rulestats

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/agentbridge/audit"
	"github.com/agentgate/agentgate/prefs"
)

// world is a person's configuration, audit log and counter on a fake clock.
type world struct {
	paths   prefs.Paths
	log     *audit.Log
	store   *prefs.Store
	counter *Counter
	now     time.Time
}

func newWorld(t testing.TB, rules string, opts audit.Options) *world {
	t.Helper()
	dir := t.TempDir()
	w := &world{paths: prefs.Paths{ConfigDir: filepath.Join(dir, "config"), StateDir: filepath.Join(dir, "state")},
		now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	if err := os.MkdirAll(w.paths.ConfigDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(w.paths.GlobalFile(), []byte(rules), 0o600); err != nil {
		t.Fatal(err)
	}
	var err error
	if w.store, err = prefs.Open(w.paths); err != nil {
		t.Fatal(err)
	}
	if w.log, err = audit.Open(audit.Path(w.paths.StateDir), opts); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.log.Close() })
	w.counter = New(w.paths.StateDir, audit.Path(w.paths.StateDir))
	w.counter.Now = func() time.Time { return w.now }
	return w
}

// allow audits argv as allowed by the global rule at line, at time at,
// between a proposal and a run's end, as the broker writes them.
func (w *world) allow(t testing.TB, at time.Time, line int, argv ...string) {
	t.Helper()
	rules, _, _ := w.store.Rules(prefs.ScopeGlobal, "", "")
	r := rules[line-1]
	id := fmt.Sprint(at.UnixNano())
	err := w.log.Append(
		audit.Entry{Time: at, Kind: audit.KindProposal, RunID: id, Argv: argv},
		audit.Entry{Time: at, Kind: audit.KindDecision, RunID: id, Decision: audit.DecisionRule, Argv: argv,
			Rule: &audit.Rule{Text: prefs.FormatList(r.Tokens), Scope: "global", File: r.File, Line: r.Line}},
		audit.Entry{Time: at, Kind: audit.KindRunEnd, RunID: id, State: "exited"},
	)
	if err != nil {
		t.Fatal(err)
	}
	// As a long-lived host does after a rotation: older files compressed,
	// the disk cap enforced.
	if err := w.log.Housekeep(); err != nil {
		t.Fatal(err)
	}
}

// stats returns the figures of the global rules.
func (w *world) stats(t testing.TB) []Stat {
	t.Helper()
	rules, _, err := w.store.Rules(prefs.ScopeGlobal, "", "")
	if err != nil {
		t.Fatal(err)
	}
	st, err := w.counter.Stats(w.store.CoveringRule, rules)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestCountsAndLastUse(t *testing.T) {
	w := newWorld(t, "git status\nls\nmake test\n", audit.Options{})
	t0 := w.now.Add(-time.Hour)
	w.allow(t, t0, 1, "git", "status")
	w.allow(t, t0.Add(time.Minute), 1, "git", "status", "-s")
	w.allow(t, t0.Add(2*time.Minute), 2, "ls", "-l")
	st := w.stats(t)
	if st[0].Use.Count != 2 || !st[0].Use.Last.Equal(t0.Add(time.Minute)) || st[0].Use.LastCommand != "git status -s" {
		t.Fatalf("git status: %+v", st[0].Use)
	}
	if st[1].Use.Count != 1 || st[1].Use.LastCommand != "ls -l" || st[2].Use.Count != 0 {
		t.Fatalf("ls, make test: %+v %+v", st[1].Use, st[2].Use)
	}
	if got := st[2].Summary(); got != "never used" {
		t.Errorf("summary %q", got)
	}
	if got := st[0].Summary(); !strings.HasPrefix(got, "2 uses, last ") || !strings.HasSuffix(got, " git status -s") {
		t.Errorf("summary %q", got)
	}
	// Incremental: the next update adds only what was appended since.
	w.allow(t, t0.Add(3*time.Minute), 1, "git", "status")
	st = w.stats(t)
	if st[0].Use.Count != 3 || st[0].Use.LastCommand != "git status" || st[1].Use.Count != 1 {
		t.Fatalf("after one more use: %+v %+v", st[0].Use, st[1].Use)
	}
	// A fresh counter (another process) reads the same cache.
	again := New(w.paths.StateDir, audit.Path(w.paths.StateDir))
	rules, _, _ := w.store.Rules(prefs.ScopeGlobal, "", "")
	st2, err := again.Stats(nil, rules)
	if err != nil || st2[0].Use.Count != 3 {
		t.Fatalf("another counter: %+v %v", st2[0].Use, err)
	}
	// A damaged cache is counted again from the log, not trusted.
	if err := os.WriteFile(filepath.Join(w.paths.StateDir, FileName), []byte("{garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if st = w.stats(t); st[0].Use.Count != 3 || st[1].Use.Count != 1 {
		t.Fatalf("after a damaged cache: %+v %+v", st[0].Use, st[1].Use)
	}
}

func TestUnusedAndRedundantMarks(t *testing.T) {
	w := newWorld(t, "git\ngit status\nls\nmake test\n", audit.Options{})
	w.allow(t, w.now.Add(-40*24*time.Hour), 1, "git", "log")
	w.allow(t, w.now.Add(-24*time.Hour), 3, "ls")
	st := w.stats(t)
	if !st[0].Unused || st[2].Unused {
		t.Errorf("git last used 40 days ago unused=%v, ls used yesterday unused=%v", st[0].Unused, st[2].Unused)
	}
	if st[3].Unused {
		t.Error("a rule first seen today is marked unused")
	}
	if st[1].CoveredBy == nil || prefs.FormatList(st[1].CoveredBy.Tokens) != "git" || !strings.Contains(st[1].Marks(), "redundant: covered by «git» (allow.list:1)") {
		t.Errorf("git status under git: covered by %+v, marks %q", st[1].CoveredBy, st[1].Marks())
	}
	if st[0].CoveredBy != nil || st[2].CoveredBy != nil {
		t.Error("a rule covered by nothing is marked redundant")
	}
	w.now = w.now.Add(UnusedAfter)
	st = w.stats(t)
	if !st[3].Unused || !st[2].Unused || st[3].Marks() != "unused for 30 days" {
		t.Errorf("30 days on: make test unused=%v (%q), ls unused=%v", st[3].Unused, st[3].Marks(), st[2].Unused)
	}
}

func TestCountsSurviveRotation(t *testing.T) {
	w := newWorld(t, "true\n", audit.Options{MaxBytes: 2000, MaxTotal: 5000})
	at := w.now.Add(-time.Hour)
	total := 0
	for round := range 6 {
		for range 5 {
			at = at.Add(time.Second)
			w.allow(t, at, 1, "true")
			total++
		}
		if st := w.stats(t); st[0].Use.Count != total {
			t.Fatalf("round %d: count %d, want %d", round, st[0].Use.Count, total)
		}
	}
	files, _ := audit.Files(audit.Path(w.paths.StateDir))
	retained := 0
	for e, err := range audit.Entries(audit.Path(w.paths.StateDir), audit.OldestFirst) {
		if err == nil && e.Decision == audit.DecisionRule {
			retained++
		}
	}
	if retained >= total {
		t.Fatalf("the log kept every entry (%d files): the test did not rotate any away", len(files))
	}
	// Losing the position (its file dropped under the disk cap between two updates):
	// the retained log is read again, and only what came after the last
	// counted decision is added — nothing counted twice, and what was
	// counted before stays (what rotated away unread is lost).
	counted := at
	for range 60 {
		at = at.Add(time.Second)
		w.allow(t, at, 1, "true")
	}
	for e, err := range audit.Entries(audit.Path(w.paths.StateDir), audit.OldestFirst) {
		if err == nil && e.Decision == audit.DecisionRule && e.Time.After(counted) {
			total++
		}
	}
	if st := w.stats(t); st[0].Use.Count != total || !st[0].Use.Last.Equal(at) {
		t.Fatalf("after the position was lost: count %d last %v, want %d, %v", st[0].Use.Count, st[0].Use.Last, total, at)
	}
}
