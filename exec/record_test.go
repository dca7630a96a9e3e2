package exec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentgate/agentgate/exec/atomicfile"
	"github.com/agentgate/agentgate/exec/platformtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writerHelperEnv makes the test binary a record-writer loop (TestMain).
const writerHelperEnv = "AGENTGATE_EXEC_TEST_RECORD_WRITER"

// runRecordWriterLoop rewrites the record "crash" in stateDir forever with a
// growing sequence number and a large argv, until killed.
func runRecordWriterLoop(stateDir string) {
	big := strings.Repeat("x", 256<<10)
	for seq := 0; ; seq++ {
		rec := Record{ID: "crash", State: StateRunning, Argv: []string{strconv.Itoa(seq), big}}
		if err := writeRecord(stateDir, rec); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
	}
}

// TestRecordWriteCrashSafety kills a process that rewrites a record in a
// loop while two readers read it in a loop: every read parses, and so does
// the record left behind.
func TestRecordWriteCrashSafety(t *testing.T) {
	// Readers in a tight loop hold the record open nearly all the time; a
	// replacement then needs POSIX rename semantics.
	platformtest.RequirePOSIXRename(t)
	stateDir := t.TempDir()
	require.NoError(t, os.MkdirAll(runsDir(stateDir), 0o700))
	path := recordPath(stateDir, "crash")
	for round := 0; round < 3; round++ {
		self, err := os.Executable()
		require.NoError(t, err)
		cmd := osexec.Command(self, "-test.run=^$")
		cmd.Env = append(os.Environ(), writerHelperEnv+"="+stateDir)
		cmd.Stderr = os.Stderr
		require.NoError(t, cmd.Start())

		var reads, lastSeq atomic.Int64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					data, err := atomicfile.ReadFile(path)
					if os.IsNotExist(err) {
						continue
					}
					if !assert.NoError(t, err) {
						return
					}
					var rec Record
					if !assert.NoError(t, json.Unmarshal(data, &rec), "torn record of %d bytes", len(data)) {
						return
					}
					seq, _ := strconv.Atoi(rec.Argv[0])
					lastSeq.Store(int64(seq))
					reads.Add(1)
				}
			}()
		}
		// Let the writer get going, then kill it mid-write.
		require.Eventually(t, func() bool { return lastSeq.Load() >= 20 }, 30*time.Second, time.Millisecond)
		require.NoError(t, cmd.Process.Kill())
		cmd.Wait()
		close(stop)
		wg.Wait()
		assert.Positive(t, reads.Load())
		recs, err := ListRecords(stateDir)
		require.NoError(t, err)
		require.Len(t, recs, 1, "the record parses after the kill; temp files are ignored")
		assert.Equal(t, "crash", recs[0].ID)
	}
}

func TestListRecordsSkipsCorrupt(t *testing.T) {
	stateDir := t.TempDir()
	require.NoError(t, os.MkdirAll(runsDir(stateDir), 0o700))
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	require.NoError(t, writeRecord(stateDir, Record{ID: "b", State: StateExited, StartedAt: t0.Add(time.Second)}))
	require.NoError(t, writeRecord(stateDir, Record{ID: "a", State: StateRunning, StartedAt: t0}))
	files := map[string]string{
		"half.json":       `{"id":"half","state":"run`,
		"empty.json":      ``,
		"nostate.json":    `{"id":"nostate"}`,
		"misnamed.json":   `{"id":"other","state":"exited"}`,
		".a.json.tmp-123": `{"id":"a","state":"lost"}`,
		"notes.txt":       `x`,
		"binary.json":     "\x00\xff",
	}
	for name, content := range files {
		require.NoError(t, os.WriteFile(filepath.Join(runsDir(stateDir), name), []byte(content), 0o600))
	}
	require.NoError(t, os.Mkdir(filepath.Join(runsDir(stateDir), "a"), 0o700))
	recs, err := ListRecords(stateDir)
	require.NoError(t, err)
	require.Len(t, recs, 2)
	assert.Equal(t, "a", recs[0].ID)
	assert.Equal(t, "b", recs[1].ID)

	none, err := ListRecords(filepath.Join(stateDir, "missing"))
	require.NoError(t, err)
	assert.Empty(t, none)
}

func TestMarkLost(t *testing.T) {
	stateDir := t.TempDir()
	require.NoError(t, os.MkdirAll(runsDir(stateDir), 0o700))
	self := os.Getpid()
	selfStart, ok := processIdentity(self)
	require.True(t, ok)

	// A process that has ended: its pid is free (or reused by another).
	argv := helperArgv(t, "exit", "0")
	dead := osexec.Command(argv[0], argv[1:]...)
	require.NoError(t, dead.Run())
	deadPID := dead.Process.Pid

	recs := []Record{
		{ID: "live", State: StateRunning, HostPID: self, HostStart: selfStart},
		{ID: "live-nostart", State: StateRunning, HostPID: self},
		{ID: "dead", State: StateRunning, HostPID: deadPID, HostStart: "x"},
		{ID: "nopid", State: StateRunning, HostPID: 0},
		{ID: "done", State: StateExited, HostPID: deadPID},
		{ID: "done-pending", State: StateExited, HostPID: deadPID, ChangesPending: true},
		{ID: "live-pending", State: StateExited, HostPID: self, HostStart: selfStart, ChangesPending: true},
	}
	_, statErr := os.Stat("/proc/self/stat")
	if statErr == nil {
		// The pid is alive but belongs to a different process than the one
		// that recorded it: pid reuse.
		recs = append(recs, Record{ID: "reused", State: StateRunning, HostPID: self, HostStart: selfStart + "0"})
	}
	for _, rec := range recs {
		require.NoError(t, writeRecord(stateDir, rec))
	}
	n, err := MarkLost(stateDir)
	require.NoError(t, err)
	got := map[string]Record{}
	all, err := ListRecords(stateDir)
	require.NoError(t, err)
	for _, rec := range all {
		got[rec.ID] = rec
	}
	want := map[string]State{"live": StateRunning, "live-nostart": StateRunning, "dead": StateLost, "nopid": StateLost, "done": StateExited,
		"done-pending": StateExited, "live-pending": StateExited}
	if statErr == nil {
		want["reused"] = StateLost
	}
	lost := 0
	for id, state := range want {
		assert.Equal(t, state, got[id].State, id)
		if state == StateLost {
			lost++
			assert.Contains(t, got[id].Error, "ended before recording")
			assert.False(t, got[id].EndedAt.IsZero())
		}
	}
	// A finished run whose host died before its change summary was made
	// gets one saying so; a live host's pending summary is left alone.
	assert.False(t, got["done-pending"].ChangesPending)
	require.NotNil(t, got["done-pending"].Changes)
	assert.True(t, got["done-pending"].Changes.Incomplete)
	assert.Contains(t, got["done-pending"].Changes.Reason, "ended before the change summary was made")
	assert.True(t, got["live-pending"].ChangesPending)
	assert.Equal(t, lost+1, n)
	n, err = MarkLost(stateDir)
	require.NoError(t, err)
	assert.Zero(t, n, "a second pass changes nothing")
}

func TestPruneRecords(t *testing.T) {
	stateDir := t.TempDir()
	require.NoError(t, os.MkdirAll(runsDir(stateDir), 0o700))
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	states := []State{StateExited, StateRunning, StateCancelled, StateLost, StateExited}
	for i, st := range states {
		id := fmt.Sprintf("r%d", i)
		require.NoError(t, writeRecord(stateDir, Record{ID: id, State: st, StartedAt: t0.Add(time.Duration(i) * time.Second)}))
		require.NoError(t, os.WriteFile(outputPath(stateDir, id, Stdout), []byte("o"), 0o600))
		// An output directory as versions before the flat layout made.
		require.NoError(t, os.MkdirAll(filepath.Join(runsDir(stateDir), id), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(runsDir(stateDir), id, "stderr"), []byte("e"), 0o600))
	}
	require.NoError(t, os.WriteFile(cancelPath(stateDir, "r0"), nil, 0o600))
	pruned, err := PruneRecords(stateDir, Retention{Keep: 2})
	require.NoError(t, err)
	assert.Equal(t, 2, pruned.Runs)
	recs, err := ListRecords(stateDir)
	require.NoError(t, err)
	var ids []string
	for _, r := range recs {
		ids = append(ids, r.ID)
	}
	assert.Equal(t, []string{"r1", "r3", "r4"}, ids, "the running record and the newest two finished stay")
	for _, gone := range []string{"r0", "r2"} {
		assert.NoDirExists(t, filepath.Join(runsDir(stateDir), gone))
		assert.NoFileExists(t, outputPath(stateDir, gone, Stdout))
	}
	assert.FileExists(t, outputPath(stateDir, "r3", Stdout))
	assert.NoFileExists(t, cancelPath(stateDir, "r0"))
	assert.DirExists(t, filepath.Join(runsDir(stateDir), "r3"))
	_, err = PruneRecords(stateDir, Retention{Keep: -1})
	require.NoError(t, err)
	recs, err = ListRecords(stateDir)
	require.NoError(t, err)
	require.Len(t, recs, 1)
	assert.Equal(t, "r1", recs[0].ID)
}

func TestRequestCancelErrors(t *testing.T) {
	stateDir := t.TempDir()
	require.NoError(t, os.MkdirAll(runsDir(stateDir), 0o700))
	assert.ErrorContains(t, RequestCancel(stateDir, "missing"), "no readable run record")
	assert.ErrorContains(t, RequestCancel(stateDir, "../x"), "invalid")
	require.NoError(t, writeRecord(stateDir, Record{ID: "fin", State: StateExited}))
	require.NoError(t, RequestCancel(stateDir, "fin"))
	assert.NoFileExists(t, cancelPath(stateDir, "fin"), "a finished run gets no request")
}

// TestPruneRecordsKeepsTheSpan: a flood of runs does not push out the runs
// of the span by number, only the disk cap does — outputs first, oldest
// first — and that is counted as a cap cut.
func TestPruneRecordsKeepsTheSpan(t *testing.T) {
	stateDir := t.TempDir()
	require.NoError(t, os.MkdirAll(runsDir(stateDir), 0o700))
	now := time.Now().UTC()
	write := func(id string, started time.Time, out int) {
		var buf bytes.Buffer
		require.NoError(t, encodeRecord(&buf, Record{ID: id, State: StateExited, StartedAt: started, StdoutBytes: int64(out), SpillCap: 1 << 20,
			StdoutPath: outputPath(stateDir, id, Stdout)}))
		require.NoError(t, os.WriteFile(recordPath(stateDir, id), buf.Bytes(), 0o600)) // no fsync: many records
		require.NoError(t, os.WriteFile(outputPath(stateDir, id, Stdout), make([]byte, out), 0o600))
	}
	write("old", now.Add(-48*time.Hour), 10)
	for i := range 600 {
		write(fmt.Sprintf("r%03d", i), now.Add(-time.Hour+time.Duration(i)*time.Second), 0)
	}
	pruned, err := PruneRecords(stateDir, Retention{Keep: 500, Span: 24 * time.Hour, MaxTotal: 1 << 30})
	require.NoError(t, err)
	assert.Equal(t, Pruned{Runs: 1}, pruned, "only the run older than the span, beyond the 500 newest, goes")
	recs, _ := ListRecords(stateDir)
	assert.Len(t, recs, 600, "600 runs of the last hour are all kept, beyond retain_runs")

	// Over the cap: the oldest outputs go first, their records stay.
	write("big1", now.Add(-30*time.Minute), 300<<10)
	write("big2", now.Add(-20*time.Minute), 300<<10)
	size := dirSize(runsDir(stateDir))
	pruned, err = PruneRecords(stateDir, Retention{Keep: 500, Span: 24 * time.Hour, MaxTotal: size - 200<<10})
	require.NoError(t, err)
	assert.Equal(t, 0, pruned.Runs)
	assert.Equal(t, 1, pruned.Outputs)
	assert.Equal(t, 1, pruned.CapCut)
	recs, _ = ListRecords(stateDir)
	var big1 Record
	for _, r := range recs {
		if r.ID == "big1" {
			big1 = r
		}
	}
	assert.True(t, big1.OutputRemoved)
	assert.NoFileExists(t, outputPath(stateDir, "big1", Stdout))
	assert.FileExists(t, outputPath(stateDir, "big2", Stdout))
	c, err := ReadRecorded(big1, Stdout, 0, 100)
	require.NoError(t, err)
	assert.True(t, c.Dropped && c.EOF && len(c.Data) == 0, "the removed output reads as dropped: %+v", c)

	// Far over the cap: the oldest records go too.
	pruned, err = PruneRecords(stateDir, Retention{Keep: 500, Span: 24 * time.Hour, MaxTotal: 64 << 10})
	require.NoError(t, err)
	assert.Positive(t, pruned.Runs)
	assert.Positive(t, pruned.CapCut)
	assert.LessOrEqual(t, dirSize(runsDir(stateDir)), int64(64<<10))
}

// TestRecordsWithoutOutput: a record listed without its output (as the
// Processes window holds many) has none in memory, and ReadRecorded reads
// it from the run's record again, a record file or, for runs that ended
// together, a journal.
func TestRecordsWithoutOutput(t *testing.T) {
	e, root := testExecutor(t, Config{})
	// One run alone is written as a record file; two ending together may
	// be a journal's batch.
	single := waitRun(t, mustStart(t, e, root, 0, nil, "sh", "-c", "echo single; echo oops >&2"))
	e.Flush()
	a, b := mustStart(t, e, root, 0, nil, "echo", "first"), mustStart(t, e, root, 0, nil, "echo", "second")
	waitRun(t, a)
	waitRun(t, b)
	want := map[string]string{single.ID: "single\n", a.ID(): "first\n", b.ID(): "second\n"}

	full, err := ListRecords(e.cfg.StateDir)
	require.NoError(t, err)
	brief, err := ListRecordsWithoutOutput(e.cfg.StateDir)
	require.NoError(t, err)
	require.Len(t, brief, len(full))
	for i, rec := range brief {
		out, ok := want[rec.ID]
		if !ok {
			continue
		}
		assert.Equal(t, out, string(full[i].StdoutInline), "ListRecords keeps the output")
		assert.Nil(t, rec.StdoutInline, "listed without output")
		assert.Nil(t, rec.StderrInline)
		assert.Equal(t, full[i].WithoutInlineOutput(), rec, "otherwise the same record")
		c, err := ReadRecorded(rec, Stdout, 0, 1<<20)
		require.NoError(t, err)
		assert.Equal(t, out, string(c.Data), "read again from the run's record")
		assert.True(t, c.EOF)
		if rec.ID == single.ID {
			c, err := ReadRecorded(rec, Stderr, 2, 1<<20)
			require.NoError(t, err)
			assert.Equal(t, "ps\n", string(c.Data))
		}
	}
	for _, name := range journals(e.cfg.StateDir) {
		recs, err := ReadJournalWithoutOutput(e.cfg.StateDir, name)
		require.NoError(t, err)
		for _, rec := range recs {
			assert.Nil(t, rec.StdoutInline, "a journal read without output")
		}
	}
}
