package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgate/agentgate/exec/platformtest"
)

func openTest(t *testing.T, opts Options) (*Log, string) {
	t.Helper()
	path := Path(filepath.Join(t.TempDir(), "agentgate"))
	l, err := Open(path, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return l, path
}

func collect(t *testing.T, path string, order Order) []Entry {
	t.Helper()
	var out []Entry
	for e, err := range Entries(path, order) {
		if err != nil {
			t.Fatalf("Entries: %v", err)
		}
		out = append(out, e)
	}
	return out
}

func TestAppendAndReadBothOrders(t *testing.T) {
	l, path := openTest(t, Options{Host: "app"})
	for i := range 5 {
		if err := l.Append(Entry{Kind: KindProposal, RunID: fmt.Sprint(i), Argv: []string{"echo", fmt.Sprint(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	old := collect(t, path, OldestFirst)
	neu := collect(t, path, NewestFirst)
	if len(old) != 5 || len(neu) != 5 {
		t.Fatalf("got %d and %d entries, want 5", len(old), len(neu))
	}
	for i := range 5 {
		if old[i].RunID != fmt.Sprint(i) || neu[i].RunID != fmt.Sprint(4-i) {
			t.Fatalf("order wrong at %d: %s / %s", i, old[i].RunID, neu[i].RunID)
		}
		if old[i].Host != "app" || old[i].Time.IsZero() {
			t.Fatalf("defaults not applied: %+v", old[i])
		}
	}
	if runtime.GOOS != "windows" { // no Unix modes there; the profile's ACL guards the file
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("mode = %v, %v; want 0600", fi.Mode(), err)
		}
	}
}

func TestInvisibleCharactersEscapedInFile(t *testing.T) {
	l, path := openTest(t, Options{})
	argv := []string{"echo", "a\u202eb", "zero\u200bwidth", "emoji\U0001F600", "tag\U000E0041", "line\nbreak"}
	if err := l.Append(Entry{Kind: KindProposal, Argv: argv}); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"\u202e", "\u200b", "\U000E0041", "\n\"", "break\n"} {
		if strings.Contains(string(raw), bad) {
			t.Errorf("raw file contains %q literally: %s", bad, raw)
		}
	}
	for _, want := range []string{`\u202e`, `\u200b`, `\udb40\udc41`, "\U0001F600"} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("raw file lacks %q: %s", want, raw)
		}
	}
	got := collect(t, path, OldestFirst)
	if len(got) != 1 || strings.Join(got[0].Argv, "|") != strings.Join(argv, "|") {
		t.Fatalf("round trip = %q, want %q", got[0].Argv, argv)
	}
}

func TestRotationKeepsEverythingUnderTheCap(t *testing.T) {
	l, path := openTest(t, Options{MaxBytes: 2000})
	const n = 200
	for i := range n {
		if err := l.Append(Entry{Kind: KindRunEnd, RunID: fmt.Sprintf("run-%03d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	files, err := Files(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 5 || files[len(files)-1] != path {
		t.Fatalf("files = %v, want several rotated files, then audit.log", files)
	}
	for i, f := range files[:len(files)-1] {
		if rotatedTime(path, f).IsZero() {
			t.Fatalf("%s is not named after its rotation time", f)
		}
		if i > 0 && files[i-1] >= f {
			t.Fatalf("files out of order: %v", files)
		}
	}
	for _, f := range files {
		if fi, _ := os.Stat(f); fi.Size() > 2000 {
			t.Fatalf("%s has %d bytes, over MaxBytes", f, fi.Size())
		}
	}
	got := collect(t, path, NewestFirst)
	if len(got) != n || got[0].RunID != fmt.Sprintf("run-%03d", n-1) {
		t.Fatalf("read %d entries, newest %+v; want all %d", len(got), got[0], n)
	}
	for i := 1; i < len(got); i++ {
		if got[i].RunID >= got[i-1].RunID {
			t.Fatalf("entries out of order at %d: %s after %s", i, got[i].RunID, got[i-1].RunID)
		}
	}
}

// TestConcurrentWritersAcrossRotation opens the log several times (separate
// file descriptors and separate rotation locks, as separate processes do) and
// appends from all of them at once while rotating: no line is torn and,
// with enough files kept, none is lost.
func TestConcurrentWritersAcrossRotation(t *testing.T) {
	platformtest.RequireAtomicAppends(t)
	dir := filepath.Join(t.TempDir(), "agentgate")
	path := Path(dir)
	const writers, each = 6, 150
	var wg sync.WaitGroup
	for w := range writers {
		l, err := Open(path, Options{MaxBytes: 16 << 10})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if err := l.Append(Entry{Kind: KindDecision, RunID: fmt.Sprintf("w%d-%d", w, i), Message: strings.Repeat("m", i%50)}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	for e, err := range Entries(path, OldestFirst) {
		if err != nil {
			t.Fatalf("torn or unreadable line: %v", err)
		}
		if seen[e.RunID] {
			t.Fatalf("entry %s duplicated", e.RunID)
		}
		seen[e.RunID] = true
	}
	if len(seen) != writers*each {
		t.Fatalf("read %d entries, want %d", len(seen), writers*each)
	}
	files, _ := Files(path)
	if len(files) < 3 {
		t.Fatalf("expected several rotations, got files %v", files)
	}
}

func TestMalformedLineReportedAndSkipped(t *testing.T) {
	l, path := openTest(t, Options{})
	l.Append(Entry{Kind: KindProposal, RunID: "a"})
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("{\"kind\":\"propo\n")
	f.Close()
	l.Append(Entry{Kind: KindProposal, RunID: "b"})
	var ids []string
	var lineErrs int
	for e, err := range Entries(path, OldestFirst) {
		var le *LineError
		if errors.As(err, &le) {
			lineErrs++
			if le.Line != 2 || le.File != path {
				t.Fatalf("line error at %s:%d, want line 2", le.File, le.Line)
			}
			continue
		}
		ids = append(ids, e.RunID)
	}
	if lineErrs != 1 || strings.Join(ids, ",") != "a,b" {
		t.Fatalf("ids %v, line errors %d", ids, lineErrs)
	}
}

// TestEntryBeingAppendedIsNotUnreadable: a reader that comes while an entry
// is being appended sees the active file end in part of a line; that part
// is not yielded (no error either) until its newline is written, and a
// torn line that a later entry ended is reported.
func TestEntryBeingAppendedIsNotUnreadable(t *testing.T) {
	l, path := openTest(t, Options{})
	l.Append(Entry{Kind: KindProposal, RunID: "a"})
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(`{"kind":"proposal","run_id":"b"`); err != nil { // no newline yet
		t.Fatal(err)
	}
	read := func() (ids []string, lineErrs int) {
		for e, err := range Entries(path, OldestFirst) {
			if err != nil {
				lineErrs++
				continue
			}
			ids = append(ids, e.RunID)
		}
		return ids, lineErrs
	}
	if ids, lineErrs := read(); strings.Join(ids, ",") != "a" || lineErrs != 0 {
		t.Fatalf("with an entry half appended: ids %v, line errors %d; want a and none", ids, lineErrs)
	}
	if _, err := f.WriteString("}\n"); err != nil {
		t.Fatal(err)
	}
	if ids, lineErrs := read(); strings.Join(ids, ",") != "a,b" || lineErrs != 0 {
		t.Fatalf("once its newline is written: ids %v, line errors %d; want a,b and none", ids, lineErrs)
	}
	// A torn write (a crash mid-entry) ended by the next entry.
	if _, err := f.WriteString(`{"kind":"prop`); err != nil {
		t.Fatal(err)
	}
	l.Append(Entry{Kind: KindProposal, RunID: "c"})
	if ids, lineErrs := read(); strings.Join(ids, ",") != "a,b" || lineErrs != 1 {
		t.Fatalf("after a torn write and an entry: ids %v, line errors %d; want a,b and one", ids, lineErrs)
	}
}

func TestPastCommands(t *testing.T) {
	l, path := openTest(t, Options{})
	l.Append(Entry{Kind: KindProposal, Argv: []string{"go", "test"}, Provider: "p", ProjectRoot: "/proj"})
	l.Append(Entry{Kind: KindDecision, Argv: []string{"ignored"}})
	l.Append(Entry{Kind: KindProposal, CommandLine: "ls | wc", ThroughAgentShell: true})
	l.Append(Entry{Kind: KindProposal, Argv: []string{"make"}})
	l.Append(Entry{Kind: KindProposal, Argv: []string{"ls", "-l"}})
	all, err := PastCommands(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 3 || all[0].Argv[0] != "ls" || all[2].Argv[0] != "go" || all[2].Provider != "p" || all[2].Project != "/proj" || all[2].Time.IsZero() {
		t.Fatalf("PastCommands = %+v", all)
	}
	two, _ := PastCommands(path, 2)
	if len(two) != 2 || two[1].Argv[0] != "make" {
		t.Fatalf("limit 2 = %+v", two)
	}
	none, err := PastCommands(filepath.Join(t.TempDir(), "absent.log"), 0)
	if err != nil || len(none) != 0 {
		t.Fatalf("absent log: %v, %v", none, err)
	}
}

func TestFollowAcrossRotation(t *testing.T) {
	l, path := openTest(t, Options{MaxBytes: 1500})
	l.Append(Entry{Kind: KindProposal, RunID: "before"}) // not delivered: Follow starts at the end
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	got := make(chan string, 200)
	done := make(chan error, 1)
	go func() {
		done <- Follow(ctx, path, func(e Entry, err error) bool {
			if err != nil {
				t.Errorf("follow: %v", err)
				return false
			}
			got <- e.RunID
			return e.RunID != "last"
		})
	}()
	time.Sleep(3 * FollowPoll) // let Follow open the file and seek to its end
	// Entries are ~100 bytes, so a file holds ~15: pausing two polls every 5
	// entries lets Follow see every file before the next rotation.
	const n = 40
	for i := range n {
		l.Append(Entry{Kind: KindProposal, RunID: fmt.Sprintf("e%02d", i)})
		if i%5 == 4 {
			time.Sleep(2 * FollowPoll)
		}
	}
	l.Append(Entry{Kind: KindProposal, RunID: "last"})
	if err := <-done; err != nil {
		t.Fatalf("Follow returned %v", err)
	}
	close(got)
	var ids []string
	for id := range got {
		ids = append(ids, id)
	}
	if len(ids) != n+1 || ids[0] != "e00" || ids[n] != "last" {
		t.Fatalf("followed %d entries: %v", len(ids), ids)
	}
	for i := 1; i < n; i++ {
		if ids[i] <= ids[i-1] {
			t.Fatalf("out of order: %v", ids)
		}
	}
	if files, _ := Files(path); len(files) < 2 {
		t.Fatalf("no rotation happened: %v", files)
	}
}

func TestAppendAfterClose(t *testing.T) {
	l, _ := openTest(t, Options{})
	l.Close()
	if err := l.Append(Entry{Kind: KindProposal}); !errors.Is(err, ErrClosed) {
		t.Fatalf("err = %v, want ErrClosed", err)
	}
}

// fileEntries decodes every line of each audit log file, oldest file first.
func fileEntries(t *testing.T, path string) [][]Entry {
	t.Helper()
	files, err := Files(path)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]Entry
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var entries []Entry
		for line := range strings.SplitSeq(strings.TrimSuffix(string(raw), "\n"), "\n") {
			var e Entry
			if err := json.Unmarshal([]byte(line), &e); err != nil {
				t.Fatalf("%s: torn or unreadable line %q: %v", f, line, err)
			}
			entries = append(entries, e)
		}
		out = append(out, entries)
	}
	return out
}

func TestAppendSeveralEntriesInOneCall(t *testing.T) {
	l, path := openTest(t, Options{Host: "app"})
	stamp := time.Date(2026, 11, 30, 10, 15, 0, 0, time.UTC)
	batch := []Entry{
		{Kind: KindProposal, RunID: "r1"},
		{Kind: KindDecision, RunID: "r1", Host: "cli", Time: stamp, Decision: DecisionRule},
		{Kind: KindRunStart, RunID: "r1", PID: 42},
	}
	if err := l.Append(batch...); err != nil {
		t.Fatal(err)
	}
	if !batch[0].Time.IsZero() || batch[0].Host != "" {
		t.Errorf("Append modified the caller's entry: %+v", batch[0])
	}
	got := collect(t, path, OldestFirst)
	if len(got) != 3 {
		t.Fatalf("read %d entries, want 3: %+v", len(got), got)
	}
	for i, e := range got {
		if e.RunID != "r1" || e.Kind != batch[i].Kind || e.Time.IsZero() {
			t.Errorf("entry %d = %+v, want kind %s of r1 with a time", i, e, batch[i].Kind)
		}
	}
	if got[0].Host != "app" || got[1].Host != "cli" || !got[1].Time.Equal(stamp) || got[2].PID != 42 {
		t.Errorf("defaults or fields wrong: %+v", got)
	}
	before, _ := os.Stat(path)
	if err := l.Append(); err != nil {
		t.Fatalf("Append() = %v, want nil", err)
	}
	if after, _ := os.Stat(path); after.Size() != before.Size() {
		t.Fatalf("Append() changed the file size from %d to %d", before.Size(), after.Size())
	}
	l.Close()
	if err := l.Append(); err != nil {
		t.Fatalf("Append() after Close = %v, want nil", err)
	}
	if err := l.Append(batch...); !errors.Is(err, ErrClosed) {
		t.Fatalf("Append after Close = %v, want ErrClosed", err)
	}
}

func TestAppendWritesNothingWhenAnEntryCannotBeEncoded(t *testing.T) {
	l, path := openTest(t, Options{})
	err := l.Append(Entry{Kind: KindProposal}, Entry{Kind: KindDecision, Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)})
	if err == nil || !strings.Contains(err.Error(), "year outside of range") {
		t.Fatalf("err = %v, want a year-out-of-range error", err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != 0 {
		t.Fatalf("the log holds %d bytes (%v), want none", fi.Size(), err)
	}
}

// TestBatchesStayTogetherAcrossWritersAndRotation appends proposal+decision
// pairs from several Logs on one file (as separate processes do) while it
// rotates often: each pair's lines are adjacent in one file, even a batch
// larger than MaxBytes (it takes a file of its own).
func TestBatchesStayTogetherAcrossWritersAndRotation(t *testing.T) {
	platformtest.RequireAtomicAppends(t)
	path := Path(filepath.Join(t.TempDir(), "agentgate"))
	const writers, each = 4, 80
	var wg sync.WaitGroup
	for w := range writers {
		l, err := Open(path, Options{MaxBytes: 4 << 10})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				id := fmt.Sprintf("w%d-%d", w, i)
				reason := strings.Repeat("r", i%40)
				if w == 0 && i == each/2 {
					reason = strings.Repeat("big", 3<<10) // the pair alone exceeds MaxBytes
				}
				proposal := Entry{Kind: KindProposal, RunID: id, Reason: reason}
				decision := Entry{Kind: KindDecision, RunID: id, Decision: DecisionRule}
				if err := l.Append(proposal, decision); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	total := 0
	files := fileEntries(t, path)
	if len(files) < 3 {
		t.Fatalf("expected several rotations, got %d files", len(files))
	}
	for f, entries := range files {
		for i := 0; i < len(entries); i += 2 {
			p := entries[i]
			if p.Kind != KindProposal || i+1 == len(entries) || entries[i+1].Kind != KindDecision || entries[i+1].RunID != p.RunID {
				t.Fatalf("file %d, line %d: proposal %s is not directly followed by its decision", f, i+1, p.RunID)
			}
			total++
		}
	}
	if total != writers*each {
		t.Fatalf("read %d pairs, want %d", total, writers*each)
	}
}

// TestAppendSoonWritesAtOnceAndSyncsLater checks that AppendSoon's lines are
// in the file when it returns (readable by others, safe from a crash of the
// process), that a later Append and Close work as usual, and that every
// line is kept in order.
func TestAppendSoonWritesAtOnceAndSyncsLater(t *testing.T) {
	l, path := openTest(t, Options{Host: "app"})
	if err := l.AppendSoon(Entry{Kind: KindRunStart, RunID: "1"}); err != nil {
		t.Fatal(err)
	}
	if got := collect(t, path, OldestFirst); len(got) != 1 || got[0].RunID != "1" {
		t.Fatalf("after AppendSoon the file holds %+v, want run_start 1", got)
	}
	pending := l.unsynced()
	if !pending {
		t.Fatalf("AppendSoon's line is not marked as waiting for its fsync")
	}
	if err := l.Append(Entry{Kind: KindProposal, RunID: "2"}); err != nil {
		t.Fatal(err)
	}
	pending = l.unsynced()
	if pending {
		t.Fatalf("Append's fsync did not cover the earlier AppendSoon line")
	}
	if err := l.AppendSoon(Entry{Kind: KindRunEnd, RunID: "3"}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		pending = l.unsynced()
		if !pending {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the deferred fsync did not happen within 10 s (SyncDelay is %v)", SyncDelay)
		}
		time.Sleep(SyncDelay)
	}
	if err := l.AppendSoon(Entry{Kind: KindRunEnd, RunID: "4"}); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("Close with a pending fsync: %v", err)
	}
	var ids []string
	for _, e := range collect(t, path, OldestFirst) {
		ids = append(ids, e.RunID)
	}
	if strings.Join(ids, ",") != "1,2,3,4" {
		t.Fatalf("entries %v, want 1,2,3,4 in order", ids)
	}
}

// TestAppendThenSync: the lines are in the file when AppendThenSync returns
// (before their fsync), and the returned function makes them durable.
func TestAppendThenSync(t *testing.T) {
	l, path := openTest(t, Options{Host: "app"})
	sync, err := l.AppendThenSync(Entry{Kind: KindProposal, RunID: "1"}, Entry{Kind: KindDecision, RunID: "1"})
	if err != nil {
		t.Fatal(err)
	}
	if got := collect(t, path, OldestFirst); len(got) != 2 || got[0].Kind != KindProposal || got[1].Kind != KindDecision {
		t.Fatalf("after AppendThenSync the file holds %+v, want the proposal and its decision", got)
	}
	pending := l.unsynced()
	if !pending {
		t.Fatal("the lines are not marked as waiting for their fsync")
	}
	if err := sync(); err != nil {
		t.Fatal(err)
	}
	pending = l.unsynced()
	if pending {
		t.Fatal("sync() did not fsync the lines")
	}
	if err := sync(); err != nil {
		t.Fatalf("a second sync() with nothing pending: %v", err)
	}
}

// unsynced reports whether written lines wait for their fsync.
func (l *Log) unsynced() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.synced < l.written
}
