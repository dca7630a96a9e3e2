package ui

import (
	"context"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentgate/agentgate/agentbridge/rulestats"
	"github.com/agentgate/agentgate/prefs"
	"github.com/agentgate/agentgate/ui/model"
	"github.com/agentgate/agentgate/ui/model/modeltest"
)

// newGrantsCard returns a test card whose model gives real grants, with an
// app instance for "until agentgate quits".
func newGrantsCard(t *testing.T) (*cardWindow, *modeltest.Clock, *model.Queue, *prefs.Grants) {
	t.Helper()
	cw, clock, q := newTestCard(t, &modeltest.Rules{})
	paths := prefs.Paths{ConfigDir: t.TempDir(), StateDir: t.TempDir()}
	grants := prefs.OpenGrants(paths)
	in, err := prefs.HoldInstance(paths)
	require.NoError(t, err)
	t.Cleanup(func() { in.Close(grants) })
	cw.view.model.Grants, cw.view.model.Instance = grants, in.ID()
	return cw, clock, q, grants
}

func TestCardViewGrantChoices(t *testing.T) {
	cw, clock, q, grants := newGrantsCard(t)
	ch := modeltest.Ask(t, context.Background(), q, modeltest.Request("a", "ls", "-la"))
	cw.refresh()
	arm(cw, clock)
	v := cw.view
	test.Tap(v.allow)
	arm(cw, clock)
	assert.Equal(t, []string{"Always", "15 minutes", "1 hour", "Until quit"}, v.how.Options)
	assert.Equal(t, "Always", v.how.Selected, "a rule is the default, as before")
	assert.True(t, v.where.Visible())

	v.how.SetSelected("15 minutes")
	assert.False(t, v.where.Visible(), "a grant has no list to choose")
	assert.Contains(t, v.preview.Text, "Allows the program ls with any arguments (/usr/bin/ls) in Project «repo», for claude only, for 15 minutes")
	assert.Equal(t, "Allow for 15 minutes and approve", v.confirm.Text)
	v.what.SetSelected(v.what.Options[v.exactIndex()])
	assert.Contains(t, v.preview.Text, "Allows exactly ls -la")
	test.Tap(v.confirm)
	assert.True(t, modeltest.Result(t, ch).Answer.Approved)
	list, err := grants.List()
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, prefs.GrantExact, list[0].Kind)
	assert.Equal(t, "claude", list[0].Provider)

	// Back to Always: the list choice returns.
	modeltest.Ask(t, context.Background(), q, modeltest.Request("b", "ls"))
	cw.refresh()
	arm(cw, clock)
	test.Tap(v.allow)
	assert.Equal(t, "Always", v.how.Selected, "a new proposal starts from Always")
	v.how.SetSelected("Until quit")
	assert.Equal(t, "Allow until agentgate quits and approve", v.confirm.Text)
	v.how.SetSelected("Always")
	assert.True(t, v.where.Visible())
}

func TestCardViewGrantLauncherExactOnly(t *testing.T) {
	cw, clock, q, grants := newGrantsCard(t)
	ch := modeltest.Ask(t, context.Background(), q, modeltest.Request("a", "bash", "-c", "make"))
	cw.refresh()
	arm(cw, clock)
	v := cw.view
	test.Tap(v.allow)
	arm(cw, clock)
	v.how.SetSelected("1 hour")
	v.what.SetSelected("Program: bash (any arguments)")
	assert.Contains(t, v.warning.Text, "only the exact command can be allowed for a while")
	test.Tap(v.confirm)
	assert.Contains(t, v.status.Text, "only the exact command")
	assert.Equal(t, 1, q.Len(), "nothing approved")
	test.Tap(v.useExact)
	test.Tap(v.confirm)
	assert.True(t, modeltest.Result(t, ch).Answer.Approved)
	list, _ := grants.List()
	require.Len(t, list, 1)
	assert.Equal(t, []string{"bash", "-c", "make"}, list[0].Tokens)
}

func TestPrefsViewGrantsAndStats(t *testing.T) {
	test.NewTempApp(t)
	paths := prefs.Paths{ConfigDir: t.TempDir(), StateDir: t.TempDir()}
	store, err := prefs.Open(paths)
	require.NoError(t, err)
	_, err = store.Add(prefs.ScopeGlobal, "", "", []string{"git", "status"})
	require.NoError(t, err)
	grants := prefs.OpenGrants(paths)
	project := t.TempDir()
	for _, argv := range [][]string{{"make", "test"}, {"ls"}} {
		_, err := grants.Give(prefs.GrantRequest{Kind: prefs.GrantExact, Argv: argv, Executable: "/usr/bin/" + argv[0], Project: project,
			Provider: "claude", By: "card", For: time.Hour})
		require.NoError(t, err)
	}
	m := &model.AllowedModel{Store: store, Grants: grants, Stats: func(rules []prefs.Rule) ([]rulestats.Stat, error) {
		return []rulestats.Stat{{Rule: rules[0], Use: rulestats.Use{Count: 3, Last: time.Now(), LastCommand: "git status -s"}, Unused: true}}, nil
	}}
	v := newPrefsView(m, []model.ScopeRef{{Scope: prefs.ScopeGlobal}}, nil, model.Autostart{})
	defer v.close()
	require.Eventually(t, func() bool { return len(v.ruleStats) == 1 }, 10*time.Second, 10*time.Millisecond)
	assert.Contains(t, v.ruleStats[0].Summary, "3 uses, last ")
	assert.Equal(t, "unused for 30 days", v.ruleStats[0].Marks)

	v.scopeList.Select(1) // the Temporary grants entry
	require.True(t, v.grantsPage.Visible())
	assert.False(t, v.rulesPage.Visible())
	require.Len(t, v.grantLines, 2)
	assert.Equal(t, "exactly make test", v.grantLines[0].Allows)
	assert.Contains(t, v.grantLines[0].Detail, " left · claude, given on the card · ")
	assert.True(t, v.revokeGrant.Disabled())
	v.grants.Select(0)
	test.Tap(v.revokeGrant)
	assert.Contains(t, v.grantsStatus.Text, "Revoked exactly make test")
	require.Len(t, v.grantLines, 1)
	test.Tap(v.revokeAll)
	assert.Empty(t, v.grantLines)
	assert.Equal(t, "Revoked every temporary grant (1).", v.grantsStatus.Text)
	list, _ := grants.List()
	assert.Empty(t, list)

	v.scopeList.Select(0)
	assert.True(t, v.rulesPage.Visible())
	assert.False(t, v.grantsPage.Visible())
}
