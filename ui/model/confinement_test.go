package model_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentgate/agentgate/exec"
	"github.com/agentgate/agentgate/exec/runinfo"
	"github.com/agentgate/agentgate/ui/model"
	"github.com/agentgate/agentgate/ui/model/modeltest"
)

// TestCardShowsConfinementAndApprovesUnconfinedOnce: the card shows what
// the run may write and where its program resolves to; approving without
// write confinement is a one-time answer, offered only when the run's
// writes would be confined.
func TestCardShowsConfinementAndApprovesUnconfinedOnce(t *testing.T) {
	clock := modeltest.NewClock(time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC))
	q := &model.Queue{}
	m := &model.CardModel{Queue: q, Now: clock.Now}
	req := modeltest.Request("a", "python3", "build.py")
	req.Command.ExecutableResolved = "/usr/bin/python3.11"
	req.Confinement = runinfo.Confinement{Writes: []string{"project", "temp", "cache"}, Network: "any"}
	ch := modeltest.Ask(t, context.Background(), q, req)
	shown, _ := m.Sync()
	c := model.ContentOf(shown, 1, 1, clock.Now())
	assert.Equal(t, "writes: project, temp, cache", c.Confinement)
	assert.Equal(t, "/usr/bin/python3 → /usr/bin/python3.11", c.Executable)
	assert.Empty(t, c.Protected, "no earlier run changed protected files")
	shown.ProtectedChanged = []string{"npm test (run r0): changed .git/config"}
	assert.Equal(t, "⚠ Earlier runs in this project changed files that steer agents and tools; look at them before you answer:\n"+
		"  npm test (run r0): changed .git/config", model.ContentOf(shown, 1, 1, clock.Now()).Protected)
	assert.True(t, model.OffersUnconfinedOnce(shown))
	assert.ErrorIs(t, m.ApproveWithoutWriteConfinement(), model.ErrNotArmed, "inert like every answer")
	clock.Add(model.ArmDelay)
	require.NoError(t, m.ApproveWithoutWriteConfinement())
	a := modeltest.Result(t, ch).Answer
	assert.True(t, a.Approved)
	assert.True(t, a.WithoutWriteConfinement)
	assert.Equal(t, "card", a.By)

	unconfined := modeltest.Request("b", "ls")
	unconfined.Confinement = runinfo.Confinement{Unconfined: "Landlock is not available on this kernel", Network: "any"}
	modeltest.Ask(t, context.Background(), q, unconfined)
	shown, _ = m.Sync()
	clock.Add(model.ArmDelay)
	assert.Equal(t, "writes: not confined (Landlock is not available on this kernel)", model.ContentOf(shown, 1, 1, clock.Now()).Confinement)
	assert.False(t, model.OffersUnconfinedOnce(shown))
	assert.Error(t, m.ApproveWithoutWriteConfinement(), "nothing to lift: not offered")
	assert.Equal(t, 1, q.Len(), "still pending")
}

// TestProcessesShowConfinementAndProtectedChanges: the selected run's
// summary names its confinement; a run that changed protected files says
// so loudly in its details and is announced once.
func TestProcessesShowConfinementAndProtectedChanges(t *testing.T) {
	state := t.TempDir()
	runs := filepath.Join(state, "runs")
	require.NoError(t, os.MkdirAll(runs, 0o700))
	write := func(rec exec.Record) {
		b, err := json.Marshal(rec)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(runs, rec.ID+".json"), b, 0o600))
	}
	base := exec.Record{Argv: []string{"npm", "test"}, State: exec.StateExited, StartedAt: time.Now(),
		Confinement: &runinfo.Confinement{Writes: []string{"project", "temp", "cache"}}}
	old := base
	old.ID, old.ProtectedChanged = "old", []string{"changed .git/config"}
	write(old)
	m := &model.ProcessesModel{StateDir: state}
	require.NoError(t, m.LoadAll())
	assert.Empty(t, m.ProtectedAlerts(), "runs found at start-up were not announced now")

	fresh := base
	fresh.ID, fresh.ProtectedChanged = "fresh", []string{"created .mcp.json"}
	write(fresh)
	m.Update([]string{"fresh"})
	alerts := m.ProtectedAlerts()
	require.Len(t, alerts, 1)
	assert.Equal(t, "created .mcp.json — during npm test", model.ProtectedAlertText(&alerts[0]))
	assert.Empty(t, m.ProtectedAlerts(), "announced once")

	rec, _, ok := m.Find("fresh")
	require.True(t, ok)
	assert.Contains(t, model.RunSummary(&rec, time.Now()), "writes: project, temp, cache")
	_, _, changes := model.RunDetails(&rec, nil)
	assert.True(t, strings.HasPrefix(changes, "⚠ Files that steer agents and tools changed"), changes)
	assert.Contains(t, changes, "created .mcp.json")
}
