package model_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentgate/agentgate/agentbridge"
	"github.com/agentgate/agentgate/agentbridge/audit"
	"github.com/agentgate/agentgate/agentbridge/rulestats"
	"github.com/agentgate/agentgate/exec/platformtest"
	"github.com/agentgate/agentgate/prefs"
	"github.com/agentgate/agentgate/ui/model"
	"github.com/agentgate/agentgate/ui/model/modeltest"
)

// TestAllowForGivesABoundGrant: "for 15 minutes", "for 1 hour" and "until
// agentgate quits" on the card give a grant bound to the proposal's
// project, provider and executable, approve the proposal, and the grant
// then allows the command for that provider only.
// nativeRequest is modeltest.Request with its paths absolute on this
// platform too (C:\p\repo on Windows): grants are bound to absolute paths.
func nativeRequest(id string, argv ...string) *agentbridge.ApprovalRequest {
	req := modeltest.Request(id, argv...)
	native := platformtest.NativePath
	req.ProjectRoot, req.Command.ProjectRoot = native(req.ProjectRoot), native(req.Command.ProjectRoot)
	req.Command.Executable, req.Command.Dir = native(req.Command.Executable), native(req.Command.Dir)
	return req
}

func TestAllowForGivesABoundGrant(t *testing.T) {
	paths := prefs.Paths{ConfigDir: t.TempDir(), StateDir: t.TempDir()}
	instance, err := prefs.HoldInstance(paths)
	require.NoError(t, err)
	grants := prefs.OpenGrants(paths)
	defer instance.Close(grants)
	for _, c := range []struct {
		kind   model.AllowKind
		length model.GrantLength
	}{{model.AllowExact, model.For15Minutes}, {model.AllowProgram, model.ForOneHour}, {model.AllowExact, model.UntilQuit}} {
		clock := modeltest.NewClock(time.Now())
		q := &model.Queue{}
		m := &model.CardModel{Queue: q, Grants: grants, Instance: instance.ID(), Now: clock.Now}
		assert.Equal(t, []model.GrantLength{model.For15Minutes, model.ForOneHour, model.UntilQuit}, m.GrantLengths())
		req := nativeRequest("r", "rg", "-n", c.length.Label)
		ch := modeltest.Ask(t, context.Background(), q, req)
		m.Sync()
		assert.ErrorIs(t, m.AllowFor(c.kind, c.length), model.ErrNotArmed)
		clock.Add(model.ArmDelay)
		require.NoError(t, m.AllowFor(c.kind, c.length))
		ans := modeltest.Result(t, ch).Answer
		assert.True(t, ans.Approved)
		assert.Contains(t, ans.Message, "temporary grant")

		q2 := prefs.GrantQuery{Argv: req.Command.Argv, Executable: req.Command.Executable, Provider: "claude", Project: req.ProjectRoot}
		got, ok, err := grants.Match(q2)
		require.NoError(t, err)
		require.True(t, ok, "%v %s: the grant allows the command", c.kind, c.length.Label)
		assert.Equal(t, "card", got.Grant.By)
		assert.Equal(t, c.length.UntilQuit, got.Grant.UntilQuit())
		if !c.length.UntilQuit {
			assert.Equal(t, c.length.For, got.Left.Round(time.Minute))
		}
		q2.Provider = "codex"
		_, ok, _ = grants.Match(q2)
		assert.False(t, ok, "a card grant applies to the card's provider only")
	}
	m := &model.CardModel{Queue: &model.Queue{}, Grants: grants}
	assert.Equal(t, []model.GrantLength{model.For15Minutes, model.ForOneHour}, m.GrantLengths(), "no instance: no until-quit")
	assert.Empty(t, (&model.CardModel{}).GrantLengths(), "no grants: no lengths")
}

func TestAllowForRefusals(t *testing.T) {
	paths := prefs.Paths{ConfigDir: t.TempDir(), StateDir: t.TempDir()}
	grants := prefs.OpenGrants(paths)
	clock := modeltest.NewClock(time.Now())
	q := &model.Queue{}
	m := &model.CardModel{Queue: q, Grants: grants, Now: clock.Now}
	req := nativeRequest("r", "bash", "-c", "make")
	ch := modeltest.Ask(t, context.Background(), q, req)
	m.Sync()
	clock.Add(model.ArmDelay)
	assert.Contains(t, model.GrantWarning(req, model.AllowProgram), "only the exact command")
	assert.Empty(t, model.GrantWarning(req, model.AllowExact))
	err := m.AllowFor(model.AllowProgram, model.For15Minutes)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "only the exact command")
	err = m.AllowFor(model.AllowExact, model.UntilQuit)
	require.Error(t, err, "until quit without an app instance")
	assert.Equal(t, 1, q.Len(), "a refused grant approves nothing")
	list, _ := grants.List()
	assert.Empty(t, list)
	require.NoError(t, m.AllowFor(model.AllowExact, model.For15Minutes))
	assert.True(t, modeltest.Result(t, ch).Answer.Approved)
	text := model.GrantText(req, model.AllowExact, model.For15Minutes)
	assert.True(t, strings.HasPrefix(text, "exactly bash -c make ("+model.DisplayPath(req.Command.Executable)+") in Project «repo», for claude only, for 15 minutes"), text)
}

// TestPreferencesStatsAndGrants: the Allowed commands model gives each
// rule its figures and marks, lists the grants in force with their time
// left, and revokes them.
func TestPreferencesStatsAndGrants(t *testing.T) {
	paths := prefs.Paths{ConfigDir: t.TempDir(), StateDir: t.TempDir()}
	store, err := prefs.Open(paths)
	require.NoError(t, err)
	for _, r := range [][]string{{"git"}, {"git", "status"}} {
		_, err := store.Add(prefs.ScopeGlobal, "", "", r)
		require.NoError(t, err)
	}
	log, err := audit.Open(audit.Path(paths.StateDir), audit.Options{})
	require.NoError(t, err)
	defer log.Close()
	require.NoError(t, log.Append(audit.Entry{Kind: audit.KindDecision, Decision: audit.DecisionRule, Argv: []string{"git", "log"},
		Rule: &audit.Rule{Text: "git", Scope: "global", File: paths.GlobalFile(), Line: 1}}))
	counter := rulestats.New(paths.StateDir, audit.Path(paths.StateDir))
	grants := prefs.OpenGrants(paths)
	clock := modeltest.NewClock(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC))
	grants.Now = clock.Now
	m := &model.AllowedModel{Store: store, Grants: grants,
		Stats: func(rules []prefs.Rule) ([]rulestats.Stat, error) { return counter.Stats(store.CoveringRule, rules) }}

	v, err := m.View(model.ScopeRef{Scope: prefs.ScopeGlobal})
	require.NoError(t, err)
	stats, err := m.RuleStats(v)
	require.NoError(t, err)
	require.Len(t, stats, 2)
	assert.Regexp(t, `^1 use, \d{4}-\d\d-\d\d \d\d:\d\d git log$`, stats[0].Summary)
	assert.Empty(t, stats[0].Marks)
	assert.Equal(t, "never used", stats[1].Summary)
	assert.Equal(t, "redundant: covered by «git» (allow.list:1)", stats[1].Marks)

	project := t.TempDir()
	a, err := grants.Give(prefs.GrantRequest{Kind: prefs.GrantExact, Argv: []string{"make", "test"}, Executable: platformtest.NativePath("/usr/bin/make"),
		Project: project, Provider: "claude", By: "card", For: time.Hour})
	require.NoError(t, err)
	_, err = grants.Give(prefs.GrantRequest{Kind: prefs.GrantProgram, Argv: []string{"ls"}, Executable: platformtest.NativePath("/bin/ls"),
		Project: project, AllProviders: true, By: "terminal", For: 15 * time.Minute})
	require.NoError(t, err)
	clock.Add(3 * time.Minute)
	lines, err := m.GrantLines(clock.Now())
	require.NoError(t, err)
	require.Len(t, lines, 2)
	assert.Equal(t, "the program ls", lines[0].Allows)
	assert.Equal(t, "12 min left · every agent, given at the terminal · Project «"+filepath.Base(project)+"» ("+model.DisplayPath(project)+") · "+model.DisplayPath(platformtest.NativePath("/bin/ls")), lines[0].Detail)
	assert.Equal(t, "exactly make test", lines[1].Allows)
	assert.True(t, strings.HasPrefix(lines[1].Detail, "57 min left · claude, given on the card · "), lines[1].Detail)
	require.NoError(t, m.Revoke(a.ID))
	lines, _ = m.GrantLines(clock.Now())
	assert.Len(t, lines, 1)
	n, err := m.RevokeAll()
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	lines, _ = m.GrantLines(clock.Now())
	assert.Empty(t, lines)
}
