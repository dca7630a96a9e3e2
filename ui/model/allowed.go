package model

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentgate/agentgate/agentbridge/rulestats"
	"github.com/agentgate/agentgate/exec/display"
	"github.com/agentgate/agentgate/exec/shellword"
	"github.com/agentgate/agentgate/prefs"
)

// RuleStore is what Preferences ▸ Agent ▸ Allowed commands… needs from the
// allow-lists; *prefs.Store implements it.
type RuleStore interface {
	RuleAdder
	// Rules returns one scope's rules and malformed lines (see prefs.Store.Rules).
	Rules(scope prefs.Scope, provider, projectRoot string) ([]prefs.Rule, []prefs.ParseError, error)
	// Remove deletes a rule (see prefs.Store.Remove).
	Remove(scope prefs.Scope, provider, projectRoot string, tokens []string) error
	// FileFor returns a scope's file (see prefs.Store.FileFor).
	FileFor(scope prefs.Scope, provider, projectRoot string) (string, error)
	// Untrusted returns a project's unconfirmed rules (see prefs.Store.Untrusted).
	Untrusted(projectRoot string) ([]prefs.Rule, error)
	// TrustRules confirms the given project rules (see prefs.Store.TrustRules).
	TrustRules(projectRoot string, rules [][]string) error
}

// ScopeRef names one allow-list: Global, a provider's or a project's.
type ScopeRef struct {
	// Scope is the kind of list.
	Scope prefs.Scope
	// Provider is the provider's name (ScopeProvider only).
	Provider string
	// Project is the project root (ScopeProject only).
	Project string
}

// Label names the list for a person: "Global", "Provider «claude»",
// "Project «repo» (~/src/repo)" (the root relative to home, see
// HomeRelative).
func (s ScopeRef) Label() string {
	switch s.Scope {
	case prefs.ScopeProvider:
		return "Provider «" + s.Provider + "»"
	case prefs.ScopeProject:
		return s.Name() + " (" + DisplayPath(s.Project) + ")"
	}
	return s.Name()
}

// Name names the list briefly: "Global", "Provider «claude»", "Project
// «repo»" (the root's base name).
func (s ScopeRef) Name() string {
	switch s.Scope {
	case prefs.ScopeProvider:
		return "Provider «" + s.Provider + "»"
	case prefs.ScopeProject:
		return "Project «" + filepath.Base(s.Project) + "»"
	}
	return "Global"
}

// AppliesTo says whom the list's rules apply to: "rules for every agent in
// every project", "rules for agents of provider «claude» in every project",
// "rules for every agent in ~/src/repo" (the project relative to home, see
// HomeRelative).
func (s ScopeRef) AppliesTo() string {
	switch s.Scope {
	case prefs.ScopeProvider:
		return "rules for agents of provider «" + s.Provider + "» in every project"
	case prefs.ScopeProject:
		return "rules for every agent in " + DisplayPath(s.Project)
	}
	return "rules for every agent in every project"
}

// KnownScopes returns the lists the Preferences window offers: Global; a
// provider for every name in providers and every providers/<name>.allow.list
// under paths.ConfigDir; a project for every root in projects. Providers and
// projects are sorted and each listed once; invalid provider names and
// relative project roots are left out.
func KnownScopes(paths prefs.Paths, providers, projects []string) []ScopeRef {
	provSet := map[string]bool{}
	for _, p := range providers {
		provSet[p] = true
	}
	if entries, err := os.ReadDir(filepath.Join(paths.ConfigDir, "providers")); err == nil {
		for _, e := range entries {
			if name, ok := strings.CutSuffix(e.Name(), ".allow.list"); ok && !e.IsDir() {
				provSet[name] = true
			}
		}
	}
	out := []ScopeRef{{Scope: prefs.ScopeGlobal}}
	provNames := make([]string, 0, len(provSet))
	for p := range provSet {
		if prefs.ValidateProviderName(p) == nil {
			provNames = append(provNames, p)
		}
	}
	slices.Sort(provNames)
	for _, p := range provNames {
		out = append(out, ScopeRef{Scope: prefs.ScopeProvider, Provider: p})
	}
	projs := slices.Clone(projects)
	slices.Sort(projs)
	for _, p := range slices.Compact(projs) {
		if filepath.IsAbs(p) {
			out = append(out, ScopeRef{Scope: prefs.ScopeProject, Project: p})
		}
	}
	return out
}

// AllowedModel is Preferences ▸ Agent ▸ Allowed commands… without the
// window.
type AllowedModel struct {
	// Store holds the allow-lists.
	Store RuleStore
	// Past returns recent commands from the audit log for the rule preview;
	// nil means none.
	Past func() []prefs.PastCommand
	// Stats returns the figures of rules from the audit log
	// (rulestats.Counter.Stats with the store's CoveringRule); nil shows
	// none.
	Stats func(rules []prefs.Rule) ([]rulestats.Stat, error)
	// Grants are the temporary grants the Temporary grants section lists
	// and revokes; nil shows no such section.
	Grants GrantKeeper
}

// RuleLine is one row of a scope's view.
type RuleLine struct {
	// Rule is the rule as stored.
	Rule prefs.Rule
	// Text is the rule's display form, its place and whether it is active:
	// "git status    allow.list:3" (+ "  — inactive: changed outside agentgate").
	Text string
}

// View is what one scope's page shows.
type View struct {
	// File is the scope's allow-list file.
	File string
	// Rules are the rules in line order.
	Rules []RuleLine
	// Errors are the malformed lines, "line 4: reason" each.
	Errors []string
	// Untrusted counts project rules changed outside agentgate.
	Untrusted int
}

// View reads one scope's list. A scope that cannot be read (invalid name,
// unreadable file) is an error saying what and where.
func (m *AllowedModel) View(s ScopeRef) (View, error) {
	file, err := m.Store.FileFor(s.Scope, s.Provider, s.Project)
	if err != nil {
		return View{}, err
	}
	rules, perrs, err := m.Store.Rules(s.Scope, s.Provider, s.Project)
	if err != nil {
		return View{File: file}, fmt.Errorf("reading %s: %w", file, err)
	}
	v := View{File: file}
	for _, r := range rules {
		text := fmt.Sprintf("%s    %s:%d", display.Command(r.Tokens), filepath.Base(r.File), r.Line)
		if !r.Active {
			text += "  — inactive: changed outside agentgate"
			v.Untrusted++
		}
		v.Rules = append(v.Rules, RuleLine{Rule: r, Text: text})
	}
	for _, pe := range perrs {
		v.Errors = append(v.Errors, fmt.Sprintf("line %d, column %d: %s", pe.Line, pe.Column, pe.Reason))
	}
	return v, nil
}

// Draft is a typed rule before it is saved.
type Draft struct {
	// Tokens are the parsed shell words.
	Tokens []string
	// Line is the exact Tcl list line that will be written, with control
	// and invisible characters shown escaped (display.Text).
	Line string
	// Preview is the rule preview text (see PreviewText).
	Preview string
	// Warning is the launcher warning for a one-token rule on a launcher or
	// interpreter, else "".
	Warning string
}

// Draft parses typed (shell words, see shellword.Typed) for scope s and
// returns what would be written, with the preview; a parse error says what
// is wrong.
func (m *AllowedModel) Draft(s ScopeRef, typed string) (Draft, error) {
	tokens, err := shellword.Typed(typed)
	if err != nil {
		return Draft{}, err
	}
	d := Draft{Tokens: tokens, Line: display.Text(prefs.FormatList(tokens))}
	var past []prefs.PastCommand
	if m.Past != nil {
		past = m.Past()
	}
	d.Preview = PreviewText(prefs.Rule{Tokens: tokens, Scope: s.Scope, Provider: s.Provider, Project: s.Project}, past, 5)
	if len(tokens) == 1 {
		d.Warning = prefs.LauncherWarning(tokens[0])
	}
	return d, nil
}

// Add parses typed and writes it as a rule into s's list.
func (m *AllowedModel) Add(s ScopeRef, typed string) (prefs.Rule, error) {
	d, err := m.Draft(s, typed)
	if err != nil {
		return prefs.Rule{}, err
	}
	return m.Store.Add(s.Scope, s.Provider, s.Project, d.Tokens)
}

// Remove deletes rule r from s's list.
func (m *AllowedModel) Remove(s ScopeRef, r prefs.Rule) error {
	return m.Store.Remove(s.Scope, s.Provider, s.Project, r.Tokens)
}

// TrustReview returns the project's rules changed outside agentgate and
// the review's text: a first line "N rules changed outside agentgate —
// review before trusting", then the file and each rule with its line. No rules → "" and nil.
func (m *AllowedModel) TrustReview(project string) (string, []prefs.Rule, error) {
	rules, err := m.Store.Untrusted(project)
	if err != nil || len(rules) == 0 {
		return "", nil, err
	}
	var b strings.Builder
	noun := "rules"
	if len(rules) == 1 {
		noun = "rule"
	}
	fmt.Fprintf(&b, "%d %s changed outside agentgate — review before trusting\nThey are in %s and allow nothing until you trust them:", len(rules), noun, DisplayPath(prefs.ProjectFile(project)))
	for _, r := range rules {
		fmt.Fprintf(&b, "\n  line %d: %s", r.Line, display.Command(r.Tokens))
	}
	return b.String(), rules, nil
}

// Trust confirms exactly the rules the person was shown in the review
// (rules changed again since stay inactive).
func (m *AllowedModel) Trust(project string, shown []prefs.Rule) error {
	tokens := make([][]string, len(shown))
	for i, r := range shown {
		tokens[i] = r.Tokens
	}
	return m.Store.TrustRules(project, tokens)
}
