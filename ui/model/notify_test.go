package model_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentgate/agentgate/agentbridge"
	"github.com/agentgate/agentgate/agentbridge/audit"
	"github.com/agentgate/agentgate/ui/model"
	"github.com/agentgate/agentgate/ui/model/modeltest"
)

func TestNotificationAndTrayText(t *testing.T) {
	req := modeltest.Request("a", "git", "push", "--force")
	assert.Equal(t, "claude: git push --force", model.NotificationText(req))
	assert.Equal(t, "Answer: claude: git push --force", model.TrayLabel(req))

	hook := &agentbridge.ApprovalRequest{ThroughAgentShell: true, CommandLine: "rm -rf x\u202e", Provider: "co\x1bdex"}
	assert.Equal(t, `co\x1bdex: rm -rf x\u202e`, model.NotificationText(hook), "agent text is escaped")
	hook.Provider = ""
	assert.Equal(t, `rm -rf x\u202e`, model.NotificationText(hook), "no provider: just the command")

	long := modeltest.Request("b", "echo", strings.Repeat("é", 100))
	label := model.TrayLabel(long)
	assert.Equal(t, "Answer: ", label[:8])
	assert.Equal(t, 60, len([]rune(label[8:])), "cut to 60 characters")
	assert.True(t, strings.HasSuffix(label, "…"))
}

func TestEllipsize(t *testing.T) {
	for _, tc := range []struct {
		s     string
		limit int
		want  string
	}{
		{"short", 10, "short"}, {"exactly", 7, "exactly"}, {"longer text", 6, "longe…"},
		{"ééééé", 3, "éé…"}, {"abc", 0, "…"}, {"", 0, ""},
	} {
		assert.Equal(t, tc.want, model.Ellipsize(tc.s, tc.limit), "%q to %d", tc.s, tc.limit)
	}
}

func TestCachedPastReadsTheAuditLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	log, err := audit.Open(path, audit.Options{Host: "app"})
	require.NoError(t, err)
	require.NoError(t, log.Append(audit.Entry{Kind: audit.KindProposal, RunID: "r1", Argv: []string{"make", "test"}, Time: time.Now()}))
	require.NoError(t, log.Close())
	past := model.CachedPast(path)
	got := past()
	require.Len(t, got, 1)
	assert.Equal(t, []string{"make", "test"}, got[0].Argv)
}
