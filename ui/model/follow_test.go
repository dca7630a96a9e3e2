package model_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentgate/agentgate/exec"
	"github.com/agentgate/agentgate/ui/model"
	"github.com/agentgate/agentgate/ui/model/modeltest"
)

// awaitRecord waits, one change notification at a time, until procs knows
// run id (want) or no longer knows it (!want).
func awaitRecord(t *testing.T, procs *model.ProcessesModel, changed <-chan struct{}, id string, want bool) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		if _, _, ok := procs.Find(id); ok == want {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("the Processes model never saw run %s %s", id, map[bool]string{true: "appear", false: "go"}[want])
		}
	}
}

// notifier returns a changed callback and the channel it signals.
func notifier() (func(), <-chan struct{}) {
	ch := make(chan struct{}, 1)
	return func() {
		select {
		case ch <- struct{}{}:
		default:
		}
	}, ch
}

// follow runs model.FollowRuns until the test ends, and waits for it to
// stop before the test's temporary directories are removed.
func follow(t *testing.T, procs *model.ProcessesModel, changed func()) {
	ctx, cancel := context.WithCancel(context.Background())
	stopped := model.FollowRuns(ctx, procs, changed)
	t.Cleanup(func() {
		cancel()
		<-stopped
	})
}

// TestFollowRunsWatchesTheRunsDirectory writes and removes a record as
// another host would: the model follows, and says so through changed.
func TestFollowRunsWatchesTheRunsDirectory(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "runs"), 0o700))
	procs := &model.ProcessesModel{StateDir: dir}
	changed, ch := notifier()
	follow(t, procs, changed)
	modeltest.WriteRecord(t, dir, exec.Record{ID: "r1", Argv: []string{"ls"}, State: exec.StateRunning, StartedAt: time.Now()})
	awaitRecord(t, procs, ch, "r1", true)
	require.NoError(t, os.Remove(filepath.Join(dir, "runs", "r1.json")))
	awaitRecord(t, procs, ch, "r1", false)
}

// TestFollowRunsPollsWithoutAWatch starts with no runs directory (nothing
// to watch): the model re-reads the records periodically instead.
func TestFollowRunsPollsWithoutAWatch(t *testing.T) {
	dir := t.TempDir()
	procs := &model.ProcessesModel{StateDir: dir}
	changed, ch := notifier()
	follow(t, procs, changed)
	modeltest.WriteRecord(t, dir, exec.Record{ID: "r2", Argv: []string{"ls"}, State: exec.StateExited, StartedAt: time.Now()})
	awaitRecord(t, procs, ch, "r2", true)
}

// TestFollowRunsReadsJournals: runs that a host journaled (a burst) show
// as the journal grows, and stay when the journal is compacted into record
// files and removed.
func TestFollowRunsReadsJournals(t *testing.T) {
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	require.NoError(t, os.MkdirAll(runs, 0o700))
	procs := &model.ProcessesModel{StateDir: dir}
	changed, ch := notifier()
	follow(t, procs, changed)
	journal := filepath.Join(runs, "20260101T090000.000000000Z-aaaaaaaaaaaa.journal")
	f, err := os.OpenFile(journal, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	require.NoError(t, err)
	_, err = f.WriteString(`{"id":"j1","state":"running","started_at":"2026-01-01T09:00:00Z"}` + "\n")
	require.NoError(t, err)
	awaitRecord(t, procs, ch, "j1", true)
	_, err = f.WriteString(`{"id":"j2","state":"exited","started_at":"2026-01-01T09:00:01Z"}` + "\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	awaitRecord(t, procs, ch, "j2", true)
	// Compaction: the records become files, then the journal goes.
	modeltest.WriteRecord(t, dir, exec.Record{ID: "j2", State: exec.StateExited, StartedAt: time.Now()})
	require.NoError(t, os.Remove(journal))
	time.Sleep(2 * model.RefreshInterval)
	_, _, ok := procs.Find("j2")
	require.True(t, ok, "a compacted run stays shown")
}
