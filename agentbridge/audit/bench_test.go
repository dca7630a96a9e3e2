package audit

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkAppend measures one audit entry (one write + fsync) next to a
// bare write+fsync of the same bytes: the baseline the log cannot beat.
func BenchmarkAppend(b *testing.B) {
	dir := b.TempDir()
	l, err := Open(Path(dir), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	e := Entry{Kind: KindRunEnd, RunID: "20261130T101500.000000-a1b2c3d4e5f6", Argv: []string{"go", "test", "./..."}, Session: "s-0123456789abcdef"}
	line, _ := Marshal(e)
	f, err := os.OpenFile(filepath.Join(dir, "raw"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	const baselineN = 50
	start := time.Now()
	for range baselineN {
		f.Write(line)
		f.Sync()
	}
	raw := float64(time.Since(start).Nanoseconds()) / baselineN
	b.ResetTimer()
	for b.Loop() {
		if err := l.Append(e); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(raw/1000, "raw-fsync-µs/op")
}

// hookPair is what the hook appends for a command allowed by a rule: its
// proposal and the decision.
func hookPair() (proposal, decision Entry) {
	proposal = Entry{Kind: KindProposal, Host: "hook", Provider: "claude-code", Client: "agentgate hook claude-code",
		Argv: []string{"git", "status"}, CommandLine: "git status", ThroughAgentShell: true,
		Cwd: "/home/ada/src/app", ProjectRoot: "/home/ada/src/app", Reason: "Show working tree status"}
	decision = proposal
	decision.Kind, decision.Decision = KindDecision, DecisionRule
	decision.Rule = &Rule{Text: "git status", Scope: "global", File: "/home/ada/.config/agentgate/allow.list", Line: 2}
	return proposal, decision
}

// BenchmarkAppendPair measures the hook's proposal+decision pair in one
// Append (one write, one fsync) next to the same pair as two Appends.
func BenchmarkAppendPair(b *testing.B) {
	l, err := Open(Path(b.TempDir()), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	proposal, decision := hookPair()
	const baselineN = 50
	start := time.Now()
	for range baselineN {
		if err := l.Append(proposal); err != nil {
			b.Fatal(err)
		}
		if err := l.Append(decision); err != nil {
			b.Fatal(err)
		}
	}
	separate := float64(time.Since(start).Nanoseconds()) / baselineN
	b.ResetTimer()
	start = time.Now()
	for b.Loop() {
		if err := l.Append(proposal, decision); err != nil {
			b.Fatal(err)
		}
	}
	together := float64(time.Since(start).Nanoseconds()) / float64(b.N)
	b.ReportMetric(separate/1000, "two-appends-µs/op")
	b.ReportMetric(together/separate, "ratio-to-two-appends")
}

// BenchmarkMarshal measures Marshal on the hook's decision entry next to
// the former encoding (encoding/json plus the invisible-character pass).
func BenchmarkMarshal(b *testing.B) {
	_, decision := hookPair()
	decision.Time = time.Date(2026, 11, 30, 10, 15, 0, 123456789, time.UTC)
	const baselineN = 2000
	start := time.Now()
	for range baselineN {
		if _, err := oracleMarshal(decision); err != nil {
			b.Fatal(err)
		}
	}
	former := float64(time.Since(start).Nanoseconds()) / baselineN
	b.ReportAllocs()
	b.ResetTimer()
	start = time.Now()
	for b.Loop() {
		if _, err := Marshal(decision); err != nil {
			b.Fatal(err)
		}
	}
	now := float64(time.Since(start).Nanoseconds()) / float64(b.N)
	b.ReportMetric(former, "json-marshal-ns/op")
	b.ReportMetric(now/former, "ratio-to-json-marshal")
}
