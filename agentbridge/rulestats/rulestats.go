// Package rulestats counts, for every allow-list rule, how many commands it
// allowed and the last one, from the audit log, and marks the rules worth
// a second look: unused for 30 days, and redundant (another rule covers
// them). Preferences shows the figures beside each rule, `agentgate allow
// list --stats` in a column.
//
// Counting is incremental: the figures and the audit log position they
// reach are kept in <state>/agentgate/rule-stats.json, and each update
// reads only what was appended since (audit.ReadSince), so it stays fast
// with a long log. The figures survive the rotation of old audit files
// away; when the position itself is lost (more rotations than are kept
// between two updates, or a replaced log) counting starts over from the
// retained log.
package rulestats

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gofrs/flock"

	"github.com/agentgate/agentgate/agentbridge/audit"
	"github.com/agentgate/agentgate/exec/atomicfile"
	"github.com/agentgate/agentgate/exec/display"
	"github.com/agentgate/agentgate/prefs"
)

// FileName is the cache's name inside the state directory.
const FileName = "rule-stats.json"

// fileVersion is the format version written to the cache.
const fileVersion = 1

// UnusedAfter is how long a rule may go without allowing a command before
// it is marked unused.
const UnusedAfter = 30 * 24 * time.Hour

// Key names a rule across edits of its file: the file and the rule's
// tokens as a line (FormatList); the line number is left out, since lines
// move when others are added or removed.
type Key struct {
	// File is the allow-list file.
	File string `json:"file"`
	// Text is the rule's tokens as a Tcl list.
	Text string `json:"text"`
}

// KeyOf returns r's key.
func KeyOf(r prefs.Rule) Key { return Key{File: r.File, Text: prefs.FormatList(r.Tokens)} }

// Use is what one rule did.
type Use struct {
	// Count is how many commands the rule allowed.
	Count int `json:"count"`
	// Last is when it last allowed one; zero when never.
	Last time.Time `json:"last,omitzero"`
	// LastCommand is that command in display form (display.Command; the
	// agent's shell line for a hook request without an argv).
	LastCommand string `json:"last_command,omitempty"`
}

// record is one rule's entry in the cache.
type record struct {
	Key
	Use
	// FirstSeen is when the rule was first known: its first use, or the
	// first time its figures were asked for, whichever came first.
	FirstSeen time.Time `json:"first_seen,omitzero"`
}

// cacheFile is the content of rule-stats.json.
type cacheFile struct {
	// Version is fileVersion.
	Version int `json:"version"`
	// Position is how far the audit log was read.
	Position audit.Position `json:"position"`
	// Through is the time of the latest decision counted: when the position
	// is lost, the log is read again from its start and only decisions after
	// it are counted.
	Through time.Time `json:"through,omitzero"`
	// Rules are the figures per rule.
	Rules []record `json:"rules"`
}

// Counter keeps the figures of one person's rules. Safe for concurrent use,
// and several processes may share the cache (updates are serialised by a
// lock file beside it, rule-stats.json.lock).
type Counter struct {
	// file is the cache file.
	file string
	// auditPath is the audit log read.
	auditPath string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// mu serialises updates in this process.
	mu sync.Mutex
}

// New returns the counter whose cache is in stateDir, reading the audit log
// at auditPath (audit.Path(stateDir)).
func New(stateDir, auditPath string) *Counter {
	return &Counter{file: filepath.Join(stateDir, FileName), auditPath: auditPath}
}

// now returns the counter's current time.
func (c *Counter) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// ruleMatch is in every audit line of a decision by rule, and in few others:
// only those lines are decoded.
var ruleMatch = []byte(`"` + audit.DecisionRule + `"`)

// Stat is one rule with its figures and marks.
type Stat struct {
	// Rule is the rule as its list holds it.
	Rule prefs.Rule
	// Use is what it allowed.
	Use Use
	// Unused is true when it allowed nothing in the last UnusedAfter,
	// although it has been known that long.
	Unused bool
	// CoveredBy is the rule that makes it redundant (prefs.Store.CoveringRule),
	// nil when none does.
	CoveredBy *prefs.Rule
}

// Marks returns the stat's marks for a person: "unused for 30 days",
// "redundant: covered by «git» (allow.list:3)", joined by "; "; "" for none.
func (s Stat) Marks() string {
	var marks []string
	if s.Unused {
		marks = append(marks, fmt.Sprintf("unused for %d days", int(UnusedAfter.Hours()/24)))
	}
	if c := s.CoveredBy; c != nil {
		marks = append(marks, fmt.Sprintf("redundant: covered by «%s» (%s:%d)", display.Command(c.Tokens), filepath.Base(c.File), c.Line))
	}
	return strings.Join(marks, "; ")
}

// Summary returns the figures for a person: "12 uses, last 2026-03-01 10:15
// git status -s" or "never used".
func (s Stat) Summary() string {
	switch {
	case s.Use.Count == 0:
		return "never used"
	case s.Use.Count == 1:
		return fmt.Sprintf("1 use, %s %s", s.Use.Last.Local().Format("2006-01-02 15:04"), s.Use.LastCommand)
	}
	return fmt.Sprintf("%d uses, last %s %s", s.Use.Count, s.Use.Last.Local().Format("2006-01-02 15:04"), s.Use.LastCommand)
}

// Stats reads what the audit log gained since the last update and returns
// the figures of rules, with their marks: unused (no use in UnusedAfter,
// and known that long) and redundant (covering returns the rule that
// covers it, as prefs.Store.CoveringRule does; nil looks for no
// redundancy). Rules seen for the first time are remembered from now on,
// so that a rule added today is not called unused. A failure to read the
// log or to keep the cache is an error, with the figures as far as they
// could be had.
func (c *Counter) Stats(covering func(prefs.Rule) *prefs.Rule, rules []prefs.Rule) ([]Stat, error) {
	now := c.now()
	var stats []Stat
	err := c.update(func(byKey map[Key]*record) {
		stats = make([]Stat, len(rules))
		for i, r := range rules {
			k := KeyOf(r)
			rec := byKey[k]
			if rec == nil {
				rec = &record{Key: k, FirstSeen: now}
				byKey[k] = rec
			}
			stats[i] = Stat{Rule: r, Use: rec.Use,
				Unused: now.Sub(rec.FirstSeen) >= UnusedAfter && (rec.Last.IsZero() || now.Sub(rec.Last) >= UnusedAfter)}
			if covering != nil {
				stats[i].CoveredBy = covering(r)
			}
		}
	})
	return stats, err
}

// update takes the cache's lock, reads it, adds the audit log's new
// decisions by rule, lets see look at (and add to) the records, and writes
// the cache back. A cache that cannot be read is started afresh.
func (c *Counter) update(see func(map[Key]*record)) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(c.file), 0o700); err != nil {
		return fmt.Errorf("rule statistics: %w", err)
	}
	lock := flock.New(c.file+".lock", flock.SetPermissions(0o600))
	if err := lock.Lock(); err != nil {
		return fmt.Errorf("rule statistics: locking %s: %w", c.file+".lock", err)
	}
	defer lock.Close()
	cf := c.read()
	before := cf.Position
	byKey := make(map[Key]*record, len(cf.Rules))
	for i := range cf.Rules {
		byKey[cf.Rules[i].Key] = &cf.Rules[i]
	}
	// The new decisions by rule, gathered apart. When the position was lost
	// (reset), the whole retained log was passed again, and only decisions
	// after the last one counted (cf.Through) are new.
	all, after := map[Key]*record{}, map[Key]*record{}
	through := cf.Through
	next, reset, readErr := audit.ReadSince(c.auditPath, cf.Position, ruleMatch, func(e audit.Entry) {
		if e.Kind != audit.KindDecision || e.Decision != audit.DecisionRule || e.Rule == nil {
			return
		}
		gather(all, e)
		if e.Time.After(cf.Through) {
			gather(after, e)
		}
		if e.Time.After(through) {
			through = e.Time
		}
	})
	if readErr == nil {
		gained := all
		if reset {
			gained = after
		}
		cf.Through = through
		for k, g := range gained {
			rec := byKey[k]
			if rec == nil {
				byKey[k] = g
				continue
			}
			rec.Count += g.Count
			if !g.Last.Before(rec.Last) {
				rec.Last, rec.LastCommand = g.Last, g.LastCommand
			}
			if rec.FirstSeen.IsZero() || g.FirstSeen.Before(rec.FirstSeen) {
				rec.FirstSeen = g.FirstSeen
			}
		}
		cf.Position = next
	}
	known := len(byKey)
	see(byKey)
	if readErr == nil && cf.Position == before && len(byKey) == known {
		return nil // nothing new to keep
	}
	cf.Version = fileVersion
	records := make([]record, 0, len(byKey)) // a new slice: byKey points into the old one
	for _, rec := range byKey {
		records = append(records, *rec)
	}
	cf.Rules = records
	slices.SortFunc(cf.Rules, func(a, b record) int {
		if n := strings.Compare(a.File, b.File); n != 0 {
			return n
		}
		return strings.Compare(a.Text, b.Text)
	})
	data, err := json.Marshal(cf)
	if err == nil {
		err = prefs.WriteFileAtomic(c.file, append(data, '\n'), 0o600)
	}
	if readErr != nil {
		return fmt.Errorf("rule statistics: %w", readErr)
	}
	if err != nil {
		return fmt.Errorf("rule statistics: keeping the figures in %s: %w", c.file, err)
	}
	return nil
}

// read returns the cache's content; a missing, damaged or other-version
// cache is an empty one (the figures are counted again from the log).
func (c *Counter) read() cacheFile {
	data, err := atomicfile.ReadFile(c.file)
	if err != nil {
		return cacheFile{}
	}
	var cf cacheFile
	if json.Unmarshal(data, &cf) != nil || cf.Version != fileVersion {
		return cacheFile{}
	}
	return cf
}

// gather adds the decision e to the figures in m.
func gather(m map[Key]*record, e audit.Entry) {
	k := Key{File: e.Rule.File, Text: e.Rule.Text}
	g := m[k]
	if g == nil {
		g = &record{Key: k, FirstSeen: e.Time}
		m[k] = g
	}
	g.Count++
	if !e.Time.Before(g.Last) {
		g.Last, g.LastCommand = e.Time, commandOf(e)
	}
	if e.Time.Before(g.FirstSeen) {
		g.FirstSeen = e.Time
	}
}

// commandOf is the display form of an audited command.
func commandOf(e audit.Entry) string {
	if len(e.Argv) > 0 {
		return display.Command(e.Argv)
	}
	return display.Word(e.CommandLine)
}
