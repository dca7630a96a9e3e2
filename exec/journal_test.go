package exec

import (
	"errors"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// journalFiles returns the journals in stateDir's runs directory.
func journalFiles(t *testing.T, stateDir string) []string {
	t.Helper()
	return journals(stateDir)
}

// TestBurstOfRunsIsJournaledThenCompacted: runs that finish together are
// appended to the executor's journal (no file per run), read from there by
// ListRecords and ReadRecord, and written as record files by Flush, which
// removes the journal.
func TestBurstOfRunsIsJournaledThenCompacted(t *testing.T) {
	e, root := testExecutor(t, Config{Confine: ConfineConfig{Off: true}})
	cmd, err := Validate(Proposal{Argv: []string{"true"}, ProjectRoot: root}, PathFromEnv(e.cfg.Env))
	require.NoError(t, err)
	var runs []*Run
	for range 5 {
		r, err := e.Start(cmd, Meta{})
		require.NoError(t, err)
		runs = append(runs, r)
	}
	for _, r := range runs {
		waitRun(t, r)
		<-r.ChangesDone()
	}
	// The records reach the disk within persistDelay; a batch of several
	// goes to the journal.
	deadline := time.Now().Add(eventually)
	for len(journalFiles(t, e.cfg.StateDir)) == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	require.Len(t, journalFiles(t, e.cfg.StateDir), 1, "a burst of runs is journaled")
	for _, r := range runs {
		_, err := os.Stat(recordPath(e.cfg.StateDir, r.ID()))
		assert.ErrorIs(t, err, os.ErrNotExist, "no file of its own yet")
	}
	deadline = time.Now().Add(eventually)
	for {
		recs, err := ListRecords(e.cfg.StateDir)
		require.NoError(t, err)
		final := 0
		for _, rec := range recs {
			if rec.State == StateExited && !rec.ChangesPending {
				final++
			}
		}
		if final == len(runs) || time.Now().After(deadline) {
			assert.Equal(t, len(runs), final, "every run read from the journal, finished: %+v", recs)
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	rec, err := ReadRecord(e.cfg.StateDir, runs[0].ID())
	require.NoError(t, err)
	assert.Equal(t, StateExited, rec.State)

	e.Flush()
	assert.Empty(t, journalFiles(t, e.cfg.StateDir), "Flush compacts the journal away")
	for _, r := range runs {
		rec, err := readRecord(recordPath(e.cfg.StateDir, r.ID()), false)
		require.NoError(t, err)
		assert.Equal(t, StateExited, rec.State)
	}
}

// TestSingleRunGetsItsOwnFile: a run that comes alone is written as its own
// record file, no journal.
func TestSingleRunGetsItsOwnFile(t *testing.T) {
	e, root := testExecutor(t, Config{Confine: ConfineConfig{Off: true}})
	cmd, err := Validate(Proposal{Argv: []string{"true"}, ProjectRoot: root}, PathFromEnv(e.cfg.Env))
	require.NoError(t, err)
	r, err := e.Start(cmd, Meta{})
	require.NoError(t, err)
	waitRun(t, r)
	<-r.ChangesDone()
	e.records.flush()
	_, err = readRecord(recordPath(e.cfg.StateDir, r.ID()), false)
	assert.NoError(t, err)
	assert.Empty(t, journalFiles(t, e.cfg.StateDir))
}

// TestParseJournal: the newest line of each run counts unless an older one
// is further along; a torn last line and garbage are skipped.
func TestParseJournal(t *testing.T) {
	lines := []string{
		`{"id":"a","state":"running"}`,
		`not json`,
		`{"id":"a","state":"exited","changes_pending":true}`,
		`{"id":"b","state":"exited"}`,
		`{"id":"b","state":"running"}`, // cannot go back
		`{"id":"../x","state":"exited"}`,
		`{"id":"a","state":"exited"}`,
		`{"id":"c","state":"exit`, // torn: no newline
	}
	got := parseJournal([]byte(strings.Join(lines, "\n")), false)
	require.Len(t, got, 2)
	assert.Equal(t, StateExited, got["a"].State)
	assert.False(t, got["a"].ChangesPending)
	assert.Equal(t, StateExited, got["b"].State)
}

// TestMarkLostCompactsAGoneHostsJournal: the journal of a host that died
// becomes record files, its running runs lost; a live host's journal is
// left alone.
func TestMarkLostCompactsAGoneHostsJournal(t *testing.T) {
	stateDir := t.TempDir()
	require.NoError(t, os.MkdirAll(runsDir(stateDir), 0o700))
	argv := helperArgv(t, "exit", "0")
	dead := osexec.Command(argv[0], argv[1:]...)
	require.NoError(t, dead.Run())
	self := os.Getpid()
	selfStart, _ := processIdentity(self)

	gone := journal{name: "gone"}
	require.NoError(t, errors.Join(gone.appendRecords(stateDir, []Record{
		{ID: "r1", State: StateRunning, HostPID: dead.Process.Pid, HostStart: "x"},
		{ID: "r2", State: StateExited, HostPID: dead.Process.Pid, HostStart: "x"},
	})...))
	gone.f.Close()
	live := journal{name: "live"}
	require.NoError(t, errors.Join(live.appendRecords(stateDir, []Record{
		{ID: "r3", State: StateRunning, HostPID: self, HostStart: selfStart},
	})...))
	defer live.f.Close()

	n, err := MarkLost(stateDir)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.Equal(t, []string{"live" + journalSuffix}, journals(stateDir))
	r1, err := readRecord(recordPath(stateDir, "r1"), false)
	require.NoError(t, err)
	assert.Equal(t, StateLost, r1.State)
	r2, err := readRecord(recordPath(stateDir, "r2"), false)
	require.NoError(t, err)
	assert.Equal(t, StateExited, r2.State)
	r3, err := ReadRecord(stateDir, "r3")
	require.NoError(t, err)
	assert.Equal(t, StateRunning, r3.State)
	// A run only in a live journal can still be asked to cancel.
	require.NoError(t, RequestCancel(stateDir, "r3"))
	_, err = os.Stat(filepath.Join(runsDir(stateDir), "r3.cancel"))
	assert.NoError(t, err)
}

// TestPruneLeavesJournaledRecords: a finished record only in a live
// journal is not pruned (it would come back from there).
func TestPruneLeavesJournaledRecords(t *testing.T) {
	stateDir := t.TempDir()
	require.NoError(t, os.MkdirAll(runsDir(stateDir), 0o700))
	old := time.Now().Add(-48 * time.Hour)
	j := journal{name: "j"}
	require.NoError(t, errors.Join(j.appendRecords(stateDir, []Record{{ID: "inj", State: StateExited, StartedAt: old}})...))
	defer j.f.Close()
	require.NoError(t, writeRecord(stateDir, Record{ID: "file", State: StateExited, StartedAt: old}))
	res, err := PruneRecords(stateDir, Retention{Span: time.Hour})
	require.NoError(t, err)
	assert.Equal(t, 1, res.Runs)
	recs, err := ListRecords(stateDir)
	require.NoError(t, err)
	require.Len(t, recs, 1)
	assert.Equal(t, "inj", recs[0].ID)
}
