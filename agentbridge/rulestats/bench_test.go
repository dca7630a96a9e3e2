package rulestats

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentgate/agentgate/agentbridge/audit"
	"github.com/agentgate/agentgate/prefs"
)

// benchEntries is the audit log size of the benchmarks: 100,000 entries
// (proposals, decisions by rule and run ends, a third each), about as a
// busy month of an agent writes them.
const benchEntries = 100_000

// writeBenchLog writes n entries straight to the audit log file at path
// (no fsync per entry), and returns the time of the last one.
func writeBenchLog(b *testing.B, path string, rules []prefs.Rule, start time.Time, from, n int) time.Time {
	b.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var buf []byte
	at := start
	for i := from; i < from+n; i++ {
		at = start.Add(time.Duration(i) * time.Millisecond)
		r := rules[i/3%len(rules)]
		id := fmt.Sprintf("run-%d", i/3)
		argv := append(append([]string{}, r.Tokens...), "--flag", fmt.Sprint(i))
		var e audit.Entry
		switch i % 3 {
		case 0:
			e = audit.Entry{Time: at, Kind: audit.KindProposal, RunID: id, Host: "app", Provider: "claude-code", Argv: argv, Cwd: "/home/me/src/app", ProjectRoot: "/home/me/src/app"}
		case 1:
			e = audit.Entry{Time: at, Kind: audit.KindDecision, RunID: id, Host: "app", Provider: "claude-code", Argv: argv, Executable: "/usr/bin/" + r.Tokens[0],
				Decision: audit.DecisionRule, Rule: &audit.Rule{Text: prefs.FormatList(r.Tokens), Scope: "global", File: r.File, Line: r.Line}}
		default:
			code := 0
			e = audit.Entry{Time: at, Kind: audit.KindRunEnd, RunID: id, Host: "app", State: "exited", ExitCode: &code, DurationMS: 12, StdoutBytes: 1234}
		}
		line, err := audit.Marshal(e)
		if err != nil {
			b.Fatal(err)
		}
		buf = append(buf, line...)
	}
	if _, err := f.Write(buf); err != nil {
		b.Fatal(err)
	}
	return at
}

// benchWorld is a person with 20 rules and an audit log of benchEntries.
func benchWorld(b *testing.B) (*world, []prefs.Rule, string) {
	b.Helper()
	var rules string
	for i := range 20 {
		rules += fmt.Sprintf("tool%d sub\n", i)
	}
	w := newWorld(b, rules, audit.Options{MaxBytes: 1 << 30})
	list, _, _ := w.store.Rules(prefs.ScopeGlobal, "", "")
	path := audit.Path(w.paths.StateDir)
	writeBenchLog(b, path, list, w.now.Add(-48*time.Hour), 0, benchEntries)
	return w, list, path
}

// BenchmarkStatsFirstRead100k: the figures of 20 rules from an audit log of
// 100,000 entries with no cache (the first time, or after a lost cache).
func BenchmarkStatsFirstRead100k(b *testing.B) {
	w, list, _ := benchWorld(b)
	cache := filepath.Join(w.paths.StateDir, FileName)
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		os.Remove(cache)
		b.StartTimer()
		if _, err := w.counter.Stats(w.store.CoveringRule, list); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStatsUpdate100k: the same figures once the cache holds the
// 100,000 entries and 30 new ones (10 commands) were appended since, as
// Preferences or `allow list --stats` meet them.
func BenchmarkStatsUpdate100k(b *testing.B) {
	w, list, path := benchWorld(b)
	if _, err := w.counter.Stats(w.store.CoveringRule, list); err != nil {
		b.Fatal(err)
	}
	n := benchEntries
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		writeBenchLog(b, path, list, w.now.Add(-48*time.Hour), n, 30)
		n += 30
		b.StartTimer()
		st, err := w.counter.Stats(w.store.CoveringRule, list)
		if err != nil {
			b.Fatal(err)
		}
		if st[0].Use.Count == 0 {
			b.Fatal("no figures")
		}
	}
}
