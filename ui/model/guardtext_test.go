package model_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentgate/agentgate/agentbridge"
	"github.com/agentgate/agentgate/prefs"
	"github.com/agentgate/agentgate/ui/model"
)

// TestGuardText: the card names the rule that matched with its file
// relative to the home directory, then each finding on its own line; with
// no rule it only lists what the command does; with no findings it says
// nothing.
func TestGuardText(t *testing.T) {
	skipWindowsDisplayPaths(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	findings := []prefs.Finding{
		{Arg: 2, Text: "--ext-diff", Why: "runs the external diff program the configuration names"},
		{Arg: -1, Text: "core.pager = less", Why: "runs a program"},
	}
	rule := &prefs.Rule{Tokens: []string{"git", "diff"}, Scope: prefs.ScopeGlobal,
		File: filepath.Join(home, ".config", "agentgate", "allow.list"), Line: 2, Active: true}

	assert.Equal(t, "The rule «git diff» (global, ~"+string(os.PathSeparator)+filepath.Join(".config", "agentgate", "allow.list")+":2)"+
		" matches, but it does not allow these arguments:\n"+
		"• --ext-diff (argument 2): runs the external diff program the configuration names\n"+
		"• core.pager = less: runs a program",
		model.GuardText(&agentbridge.ApprovalRequest{Findings: findings, MatchedRule: rule}))
	assert.Equal(t, "Note what this command does:\n• --ext-diff (argument 2): runs the external diff program the configuration names",
		model.GuardText(&agentbridge.ApprovalRequest{Findings: findings[:1]}))
	assert.Empty(t, model.GuardText(&agentbridge.ApprovalRequest{MatchedRule: rule}))
}
