package audit

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// readAll reads from pos and returns the run ids seen.
func readAll(t *testing.T, path string, pos Position, match string) ([]string, Position, bool) {
	t.Helper()
	var ids []string
	next, reset, err := ReadSince(path, pos, []byte(match), func(e Entry) { ids = append(ids, e.RunID) })
	if err != nil {
		t.Fatal(err)
	}
	return ids, next, reset
}

func appendIDs(t *testing.T, l *Log, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		e := Entry{Time: time.Unix(0, int64(i)+1).UTC(), Kind: KindDecision, RunID: fmt.Sprint(i), Decision: DecisionApproved}
		if i%2 == 0 {
			e.Decision = DecisionRule
		}
		if err := l.Append(e); err != nil {
			t.Fatal(err)
		}
	}
}

func seq(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprint(i))
	}
	return out
}

func TestReadSinceIncremental(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	ids, pos, reset := readAll(t, path, Position{}, "")
	if len(ids) != 0 || pos != (Position{}) || !reset {
		t.Fatalf("empty log: %v %+v %v", ids, pos, reset)
	}
	l, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	appendIDs(t, l, 0, 3)
	ids, pos, reset = readAll(t, path, pos, "")
	if !slices.Equal(ids, seq(0, 3)) || !reset {
		t.Fatalf("first read: %v reset=%v", ids, reset)
	}
	appendIDs(t, l, 3, 5)
	ids, pos, reset = readAll(t, path, pos, "")
	if !slices.Equal(ids, seq(3, 5)) || reset {
		t.Fatalf("second read: %v reset=%v, want only the new entries", ids, reset)
	}
	ids, _, reset = readAll(t, path, pos, "")
	ids = slices.DeleteFunc(ids, func(id string) bool { return id == "" })
	if len(ids) != 0 || reset {
		t.Fatalf("nothing new: %v reset=%v", ids, reset)
	}
	// Only lines holding match are decoded and passed.
	ids, _, _ = readAll(t, path, Position{}, `"allowed_by_rule"`)
	if !slices.Equal(ids, []string{"0", "2", "4"}) {
		t.Fatalf("matching lines: %v", ids)
	}
}

func TestReadSinceUnfinishedLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	l, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	appendIDs(t, l, 0, 1)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	line, _ := Marshal(Entry{Time: time.Unix(0, 99).UTC(), Kind: KindProposal, RunID: "late"})
	f.Write(line[:10]) // a writer caught mid-line
	ids, pos, _ := readAll(t, path, Position{}, "")
	if !slices.Equal(ids, []string{"0"}) {
		t.Fatalf("with an unfinished line: %v", ids)
	}
	f.Write(line[10:])
	if ids, _, reset := readAll(t, path, pos, ""); !slices.Equal(ids, []string{"late"}) || reset {
		t.Fatalf("after the line was finished: %v reset=%v", ids, reset)
	}
}

func TestReadSinceAcrossRotation(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	l, err := Open(path, Options{MaxBytes: 400, MaxTotal: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var seen []string
	pos := Position{}
	n := 0
	for round := range 12 {
		appendIDs(t, l, n, n+round%3+1) // a few entries: sometimes no rotation, sometimes one
		n += round%3 + 1
		ids, next, reset := readAll(t, path, pos, "")
		if reset && round > 0 {
			t.Fatalf("round %d: position lost although no file was dropped", round)
		}
		seen, pos = append(seen, ids...), next
	}
	if !slices.Equal(seen, seq(0, n)) {
		t.Fatalf("entries seen across rotations:\n%v\nwant\n%v", seen, seq(0, n))
	}
	if files, _ := Files(path); len(files) < 2 {
		t.Fatalf("the test did not rotate: %v", files)
	}
	// Older files compressed: the position holds (it counts decompressed
	// bytes) and what follows it is read.
	appendIDs(t, l, n, n+3)
	if err := l.Housekeep(); err != nil {
		t.Fatal(err)
	}
	ids, next, reset := readAll(t, path, pos, "")
	ids = slices.DeleteFunc(ids, func(id string) bool { return id == "" }) // a history_cap entry
	if reset || !slices.Equal(ids, seq(n, n+3)) {
		t.Fatalf("after compression: %v reset=%v, want %v", ids, reset, seq(n, n+3))
	}
	n, pos = n+3, next
	// Many rotations between two reads and the disk cap enforced: the
	// position's file is gone, so the whole retained log is read again and
	// reset is said.
	appendIDs(t, l, n, n+40)
	if err := l.Housekeep(); err != nil {
		t.Fatal(err)
	}
	ids, _, reset = readAll(t, path, pos, "")
	ids = slices.DeleteFunc(ids, func(id string) bool { return id == "" })
	if !reset || len(ids) == 0 || ids[len(ids)-1] != fmt.Sprint(n+39) {
		t.Fatalf("after the position rotated away: reset=%v, %d entries ending %v", reset, len(ids), ids[len(ids)-1:])
	}
	// A log replaced by another: reset. (Closed first: Windows keeps the
	// name of a deleted file that is still open, Wine even lets it be
	// opened again.)
	l.Close()
	files, _ := Files(path)
	for _, f := range files {
		os.Remove(f)
	}
	l2, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	appendIDs(t, l2, 1000, 1001)
	if ids, _, reset := readAll(t, path, pos, ""); !reset || !slices.Equal(ids, []string{"1000"}) {
		t.Fatalf("replaced log: %v reset=%v", ids, reset)
	}
}

// TestReadSinceIntoACompressedFile: a position inside a file that was
// rotated and then compressed holds: the rest of that file is read from
// the compressed copy, then the newer files, without a reset.
func TestReadSinceIntoACompressedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	l, err := Open(path, Options{MaxBytes: 300})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	appendIDs(t, l, 0, 1)
	_, pos, _ := readAll(t, path, Position{}, "")
	appendIDs(t, l, 1, 12) // the position's file rotates, and others after it
	if err := l.Housekeep(); err != nil {
		t.Fatal(err)
	}
	files, _ := listRotated(path)
	if len(files) < 2 || !files[0].gz {
		t.Fatalf("the position's file was not compressed: %+v", files)
	}
	ids, _, reset := readAll(t, path, pos, "")
	if reset || !slices.Equal(ids, seq(1, 12)) {
		t.Fatalf("read %v reset=%v, want %v", ids, reset, seq(1, 12))
	}
}
