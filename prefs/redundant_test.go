package prefs

import (
	"testing"
)

func TestCoveringRule(t *testing.T) {
	p := testPaths(t)
	root := t.TempDir()
	writeFile(t, p.GlobalFile(), "git\nls -l\nls -l\nsed\ntimeout 10\n")
	provFile, _ := p.ProviderFile("claude")
	writeFile(t, provFile, "git status\nmake\nmake test\nls\n")
	writeFile(t, ProjectFile(root), "ls -l -a\nnpm test\nnpm\n")
	s := openStore(t, p)
	if err := s.Trust(root); err != nil {
		t.Fatal(err)
	}
	rules := func(scope Scope, provider, project string) []Rule {
		rs, _, err := s.Rules(scope, provider, project)
		if err != nil {
			t.Fatal(err)
		}
		return rs
	}
	global, prov, proj := rules(ScopeGlobal, "", ""), rules(ScopeProvider, "claude", ""), rules(ScopeProject, "", root)
	extra := []Rule{
		{Tokens: []string{"sed", "-i"}, Scope: ScopeGlobal, File: p.GlobalFile(), Line: 99},
		{Tokens: []string{"sed", "-n"}, Scope: ScopeGlobal, File: p.GlobalFile(), Line: 100},
		{Tokens: []string{"timeout", "10", "rm"}, Scope: ScopeGlobal, File: p.GlobalFile(), Line: 101},
	}
	for _, c := range []struct {
		name string
		r    Rule
		want string // covering rule's tokens, "" for none
	}{
		{"the broadest global rule", global[0], ""},
		{"the first of two equal lines", global[1], ""},
		{"the second of two equal lines", global[2], "ls -l"},
		{"a provider rule under a global one", prov[0], "git"},
		{"a provider rule under an earlier provider rule", prov[2], "make"},
		{"a provider rule broader than the global ones", prov[3], ""},
		{"a project rule under a global one", proj[0], "ls -l"},
		{"a project rule under a later project rule", proj[1], "npm"},
		{"the project rule that covers", proj[2], ""},
		{"an option the guard stops with the shorter rule", extra[0], ""},
		{"an option the guard lets through", extra[1], "sed"},
		{"a wrapper rule does not cover what it wraps", extra[2], ""},
	} {
		got := s.CoveringRule(c.r)
		gotText := ""
		if got != nil {
			gotText = FormatList(got.Tokens)
		}
		if gotText != c.want {
			t.Errorf("%s (%s): covered by %q, want %q", c.name, FormatList(c.r.Tokens), gotText, c.want)
		}
	}
	// A project rule is never covered by a provider rule (it applies to
	// every provider), nor a provider rule by a project rule.
	writeFile(t, ProjectFile(root), "make test\n")
	s2 := openStore(t, p)
	s2.Trust(root)
	proj2, _, _ := s2.Rules(ScopeProject, "", root)
	if got := s2.CoveringRule(proj2[0]); got != nil {
		t.Errorf("project rule make test covered by %+v (a provider rule)", got)
	}
}
