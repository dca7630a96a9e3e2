package model

import (
	"fmt"
	"time"

	"github.com/agentgate/agentgate/prefs"
)

// GrantKeeper is what Preferences needs from the temporary grants;
// *prefs.Grants implements it.
type GrantKeeper interface {
	// List returns the grants in force (see prefs.Grants.List).
	List() ([]prefs.Grant, error)
	// Revoke ends one grant (see prefs.Grants.Revoke).
	Revoke(id string) error
	// RevokeAll ends every grant (see prefs.Grants.RevokeAll).
	RevokeAll() (int, error)
}

// RuleStatLine is what Preferences shows under a rule: its figures and
// marks.
type RuleStatLine struct {
	// Summary is "12 uses, last 2026-03-01 10:15 git status -s" or "never
	// used".
	Summary string
	// Marks is "unused for 30 days", "redundant: covered by «git»
	// (allow.list:1)", both joined by "; ", or "".
	Marks string
}

// RuleStats returns the figures of each rule of v, in v's order. It reads
// what the audit log gained since the last time (incrementally, but the
// first time the whole log): call it off the UI thread. Without Stats it
// returns nil.
func (m *AllowedModel) RuleStats(v View) ([]RuleStatLine, error) {
	if m.Stats == nil || len(v.Rules) == 0 {
		return nil, nil
	}
	rules := make([]prefs.Rule, len(v.Rules))
	for i, r := range v.Rules {
		rules[i] = r.Rule
	}
	stats, err := m.Stats(rules)
	if stats == nil {
		return nil, err
	}
	out := make([]RuleStatLine, len(stats))
	for i, st := range stats {
		out[i] = RuleStatLine{Summary: st.Summary(), Marks: st.Marks()}
	}
	return out, err
}

// GrantLine is one row of the Temporary grants section.
type GrantLine struct {
	// Grant is the grant as stored.
	Grant prefs.Grant
	// Allows says what it allows: "exactly git status".
	Allows string
	// Detail says how long it has left, for whom, where and bound to which
	// program: "12 min left · claude-code, given on the card · Project
	// «app» (~/src/app) · /usr/bin/git".
	Detail string
}

// GrantLines returns the grants in force at now, soonest to end first (an
// ended one is not listed: it is removed as it is read).
func (m *AllowedModel) GrantLines(now time.Time) ([]GrantLine, error) {
	if m.Grants == nil {
		return nil, nil
	}
	list, err := m.Grants.List()
	out := make([]GrantLine, len(list))
	for i, g := range list {
		left := g.LeftText(now)
		if !g.UntilQuit() {
			left += " left"
		}
		out[i] = GrantLine{Grant: g, Allows: g.AllowsText(), Detail: fmt.Sprintf("%s · %s · %s · %s", left, g.ForText(),
			ScopeRef{Scope: prefs.ScopeProject, Project: g.Project}.Label(), DisplayPath(g.Executable))}
	}
	return out, err
}

// Revoke ends the grant with that id at once, for every host.
func (m *AllowedModel) Revoke(id string) error {
	if m.Grants == nil {
		return fmt.Errorf("no grant %q: this window keeps no temporary grants", id)
	}
	return m.Grants.Revoke(id)
}

// RevokeAll ends every grant at once and returns how many there were.
func (m *AllowedModel) RevokeAll() (int, error) {
	if m.Grants == nil {
		return 0, nil
	}
	return m.Grants.RevokeAll()
}
