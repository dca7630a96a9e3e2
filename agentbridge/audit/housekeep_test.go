package audit

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgate/agentgate/exec/runinfo"
)

func TestBound(t *testing.T) {
	small := Entry{Kind: KindProposal, Argv: []string{"git", "status"}, Reason: "why", Cwd: "/p"}
	if got := Bound(small); fmt.Sprint(got) != fmt.Sprint(small) {
		t.Fatalf("an entry within the bounds changed: %+v", got)
	}

	huge := strings.Repeat("x", 1<<20)
	argv := []string{"echo", "a", huge, "b"}
	e := Entry{Kind: KindProposal, Argv: argv, Reason: huge, CommandLine: "echo " + huge}
	b := Bound(e)
	if len(e.Argv[2]) != 1<<20 || e.Reason != huge {
		t.Fatal("Bound changed the caller's entry")
	}
	if b.ArgvSHA256 != ArgvDigest(argv) || b.ArgvBytes != int64(len("echo")+1+len(huge)+1) || b.ArgvCount != 4 {
		t.Fatalf("argv digest/size/count = %s %d %d", b.ArgvSHA256, b.ArgvBytes, b.ArgvCount)
	}
	if ArgvSize(b.Argv) > MaxArgvBytes+64 || b.Argv[0] != "echo" || b.Argv[1] != "a" || !strings.Contains(b.Argv[len(b.Argv)-1], "1 more arguments") {
		t.Fatalf("abbreviated argv = %d bytes, %q…", ArgvSize(b.Argv), b.Argv[len(b.Argv)-1])
	}
	for _, s := range []string{b.Reason, b.CommandLine} {
		if len(s) > MaxStringBytes || !strings.Contains(s, "1048576 bytes, sha256 ") && !strings.Contains(s, "1048581 bytes, sha256 ") {
			t.Fatalf("abbreviated string = %d bytes, ends %q", len(s), s[max(0, len(s)-90):])
		}
	}
	line, err := Marshal(b)
	if err != nil || len(line) > MaxArgvBytes+4*MaxStringBytes {
		t.Fatalf("a bounded entry takes %d bytes (%v)", len(line), err)
	}
	if ArgvDigest([]string{"a b"}) == ArgvDigest([]string{"a", "b"}) {
		t.Fatal("the digest does not separate tokens")
	}
	// A multi-byte character is never cut in half.
	if s := abbreviate(strings.Repeat("é", 3000), 200); !strings.HasPrefix(s, "é") || strings.ContainsRune(s, '\uFFFD') || len(s) > 200 {
		t.Fatalf("abbreviate cut a character: %q", s)
	}

	var paths []string
	for i := range 300 {
		paths = append(paths, fmt.Sprintf("dir/%03d/%s", i, strings.Repeat("p", 600)))
	}
	c := Bound(Entry{Kind: KindRunEnd, Changes: &runinfo.ChangeSummary{Created: paths, Modified: []string{"m"}, Method: "content-hash"}}).Changes
	if len(c.Created) != MaxListedChanges || len(c.Created[0]) > maxChangePathBytes || !c.Incomplete || !strings.Contains(c.Reason, "run's record keeps them all") || len(c.Modified) != 1 {
		t.Fatalf("bounded changes: %d created, first %d bytes, incomplete %v, reason %q", len(c.Created), len(c.Created[0]), c.Incomplete, c.Reason)
	}
}

// TestAppendBoundsEntries: what Append writes is bounded, whatever it is
// given.
func TestAppendBoundsEntries(t *testing.T) {
	l, path := openTest(t, Options{})
	argv := []string{"rm", strings.Repeat("y", 900<<10)}
	if err := l.Append(Entry{Kind: KindProposal, Argv: argv}); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	if fi.Size() > 8<<10 {
		t.Fatalf("one proposal took %d bytes of the log", fi.Size())
	}
	got := collect(t, path, OldestFirst)
	if len(got) != 1 || got[0].ArgvSHA256 != ArgvDigest(argv) || got[0].ArgvCount != 2 {
		t.Fatalf("read back %+v", got)
	}
}

// fillLog appends n entries of about 200 bytes, with the given prefix.
func fillLog(t *testing.T, l *Log, prefix string, n int) {
	t.Helper()
	for i := range n {
		if err := l.Append(Entry{Kind: KindProposal, RunID: fmt.Sprintf("%s-%05d", prefix, i), Reason: strings.Repeat("r", 120)}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestHousekeepCompressesAllButTheNewest: after housekeeping, every rotated
// file but the newest is compressed, and every entry reads back, in order.
func TestHousekeepCompressesAllButTheNewest(t *testing.T) {
	l, path := openTest(t, Options{MaxBytes: 4 << 10})
	fillLog(t, l, "e", 300)
	if err := l.Housekeep(); err != nil {
		t.Fatal(err)
	}
	files, err := listRotated(path)
	if err != nil || len(files) < 3 {
		t.Fatalf("rotated files %v, %v", files, err)
	}
	for i, f := range files {
		if f.gz != (i < len(files)-1) {
			t.Fatalf("file %d of %d (%s) compressed = %v", i+1, len(files), f.name, f.gz)
		}
	}
	got := collect(t, path, OldestFirst)
	if len(got) != 300 || got[0].RunID != "e-00000" || got[299].RunID != "e-00299" {
		t.Fatalf("read %d entries back across compressed files", len(got))
	}
	for i := 1; i < len(got); i++ {
		if got[i].RunID <= got[i-1].RunID {
			t.Fatalf("out of order at %d", i)
		}
	}
	if past, _ := PastCommands(path, 0); len(past) != 0 {
		t.Fatalf("past commands %v from entries without argv", past)
	}
}

// TestHousekeepMigratesNumberedFiles: files of the former naming
// (audit.log.N, N=1 newest) are renamed after their times, oldest first,
// and read in order.
func TestHousekeepMigratesNumberedFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "agentgate")
	path := Path(dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	base := time.Now().Add(-time.Hour)
	for n := 1; n <= 3; n++ {
		line, _ := Marshal(Entry{Kind: KindProposal, RunID: fmt.Sprintf("old-%d", 4-n)})
		name := fmt.Sprintf("%s.%d", path, n)
		if err := os.WriteFile(name, line, 0o600); err != nil {
			t.Fatal(err)
		}
		when := base.Add(-time.Duration(n) * time.Minute)
		os.Chtimes(name, when, when)
	}
	l, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	fillLog(t, l, "new", 1)
	var before []string
	for _, e := range collect(t, path, OldestFirst) {
		before = append(before, e.RunID)
	}
	if err := l.Housekeep(); err != nil {
		t.Fatal(err)
	}
	var after []string
	for _, e := range collect(t, path, OldestFirst) {
		after = append(after, e.RunID)
	}
	want := "old-1,old-2,old-3,new-00000"
	if strings.Join(before, ",") != want || strings.Join(after, ",") != want {
		t.Fatalf("before %v, after %v; want %s", before, after, want)
	}
	if _, err := os.Stat(path + ".1"); !os.IsNotExist(err) {
		t.Fatal("audit.log.1 still exists")
	}
}

// TestCapDropsOldestAndReportsWhenWithinSpan: over the disk cap, the
// oldest files go first; removing entries younger than the span is
// audited (history_cap) and reported through OnCap. Under the cap nothing
// is removed, however old.
func TestCapDropsOldestAndReportsWhenWithinSpan(t *testing.T) {
	var mu sync.Mutex
	var events []CapEvent
	l, path := openTest(t, Options{MaxBytes: 4 << 10, MaxTotal: 24 << 10, Span: time.Hour,
		OnCap: func(c CapEvent) { mu.Lock(); events = append(events, c); mu.Unlock() }})
	fillLog(t, l, "a", 60)
	if err := l.Housekeep(); err != nil {
		t.Fatal(err)
	}
	if len(collect(t, path, OldestFirst)) != 60 {
		t.Fatal("entries removed under the cap")
	}
	// Random reasons do not compress: the cap is reached.
	for i := range 400 {
		if err := l.Append(Entry{Kind: KindProposal, RunID: fmt.Sprintf("b-%05d", i), Reason: fmt.Sprintf("%x", ArgvDigest([]string{fmt.Sprint(i)}))}); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Housekeep(); err != nil {
		t.Fatal(err)
	}
	total := int64(0)
	files, _ := Files(path)
	for _, f := range files {
		fi, _ := os.Stat(f)
		total += fi.Size()
	}
	if total > 24<<10+4<<10 {
		t.Fatalf("the files take %d bytes, over the cap", total)
	}
	got := collect(t, path, OldestFirst)
	if got[0].RunID == "a-00000" {
		t.Fatal("the oldest entries were kept over the cap")
	}
	if last := got[len(got)-1]; last.Kind != KindHistoryCap || !strings.Contains(last.Message, "disk cap") {
		t.Fatalf("no history_cap entry after the newest: %+v", last)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(events) == 0 || len(events[0].Files) == 0 || events[0].Through.IsZero() {
		t.Fatalf("OnCap got %+v", events)
	}
}

// TestCapBeyondSpanIsQuiet: files older than the span go without a report.
func TestCapBeyondSpanIsQuiet(t *testing.T) {
	reported := false
	l, path := openTest(t, Options{MaxBytes: 4 << 10, MaxTotal: 8 << 10, Span: time.Hour, OnCap: func(CapEvent) { reported = true }})
	// Rotated files named two hours back stand for old history.
	old := time.Now().Add(-2 * time.Hour)
	for i := range 6 {
		line, _ := Marshal(Entry{Kind: KindProposal, RunID: fmt.Sprintf("old-%d", i), Reason: strings.Repeat("z", 3000)})
		if err := os.WriteFile(rotatedName(path, old.Add(time.Duration(i)*time.Second)), line, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	fillLog(t, l, "new", 5)
	if err := l.Housekeep(); err != nil {
		t.Fatal(err)
	}
	if reported {
		t.Fatal("dropping history older than the span was reported as reaching the cap")
	}
	for _, e := range collect(t, path, OldestFirst) {
		if e.Kind == KindHistoryCap {
			t.Fatal("a history_cap entry for history older than the span")
		}
	}
}
