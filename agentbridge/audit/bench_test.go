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
