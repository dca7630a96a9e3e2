package prefs

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// testPaths returns Paths inside a fresh temporary directory.
func testPaths(t *testing.T) Paths {
	dir := t.TempDir()
	return Paths{ConfigDir: filepath.Join(dir, "config", "agentgate"), StateDir: filepath.Join(dir, "state", "agentgate")}
}

// writeFile writes content to path, creating directories, as a person would.
func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func openStore(t *testing.T, p Paths) *Store {
	t.Helper()
	s, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestDecideExactTokens(t *testing.T) {
	p := testPaths(t)
	writeFile(t, p.GlobalFile(), "# my rules\ngit status\nls\n\n{go} test ./...\n")
	s := openStore(t, p)
	tests := []struct {
		argv []string
		want bool
	}{
		{[]string{"git", "status"}, true},
		{[]string{"git", "status", "--short"}, true},
		{[]string{"git"}, false},
		{[]string{"git", "statusx"}, false},
		{[]string{"gitx", "status"}, false},
		{[]string{"Git", "status"}, false},
		{[]string{"/usr/bin/git", "status"}, false},
		{[]string{"ls"}, true},
		{[]string{"lsx"}, false},
		{[]string{"ls", "-la"}, true},
		{[]string{"go", "test", "./..."}, true},
		{[]string{"go", "test", "./...x"}, false},
		{[]string{"go", "test"}, false},
		{nil, false},
	}
	for _, tt := range tests {
		d := s.Decide(Query{Argv: tt.argv, Provider: "", ProjectRoot: "", Dir: os.TempDir()})
		if d.Allowed != tt.want || (d.Rule != nil) != tt.want {
			t.Errorf("Decide(%q) = %+v, want allowed=%v", tt.argv, d, tt.want)
		}
	}
	d := s.Decide(Query{Argv: []string{"go", "test", "./..."}, Provider: "", ProjectRoot: "", Dir: os.TempDir()})
	if d.Rule.Scope != ScopeGlobal || d.Rule.File != p.GlobalFile() || d.Rule.Line != 5 {
		t.Fatalf("provenance = %+v, want global %s line 5", d.Rule, p.GlobalFile())
	}
}

func TestDecideScopesAndProviderIsolation(t *testing.T) {
	p := testPaths(t)
	root := t.TempDir()
	writeFile(t, p.GlobalFile(), "echo\n")
	claude, _ := p.ProviderFile("claude-code")
	writeFile(t, claude, "npm test\n")
	writeFile(t, ProjectFile(root), "make check\n")
	s := openStore(t, p)
	if err := s.Trust(root); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		argv      []string
		provider  string
		root      string
		wantScope Scope
	}{
		{[]string{"echo", "hi"}, "", "", ScopeGlobal},
		{[]string{"echo", "hi"}, "codex", root, ScopeGlobal},
		{[]string{"npm", "test"}, "claude-code", "", ScopeProvider},
		{[]string{"npm", "test"}, "codex", "", ""},
		{[]string{"npm", "test"}, "", "", ""},
		{[]string{"npm", "test"}, "../providers/claude-code", "", ""},
		{[]string{"make", "check"}, "", root, ScopeProject},
		{[]string{"make", "check"}, "", t.TempDir(), ""},
		{[]string{"make", "check"}, "", "relative/dir", ""},
		{[]string{"make", "check"}, "", "", ""},
	}
	for _, tt := range tests {
		d := s.Decide(Query{Argv: tt.argv, Provider: tt.provider, ProjectRoot: tt.root, Dir: os.TempDir()})
		got := Scope("")
		if d.Allowed {
			got = d.Rule.Scope
		}
		if got != tt.wantScope {
			t.Errorf("Decide(%q, %q, %q) scope %q, want %q", tt.argv, tt.provider, tt.root, got, tt.wantScope)
		}
	}
	d := s.Decide(Query{Argv: []string{"npm", "test"}, Provider: "claude-code", ProjectRoot: "", Dir: os.TempDir()})
	if d.Rule.Provider != "claude-code" || d.Rule.File != claude || d.Rule.Line != 1 {
		t.Fatalf("provider provenance = %+v", d.Rule)
	}
}

func TestDecideBroadestRuleWins(t *testing.T) {
	p := testPaths(t)
	writeFile(t, p.GlobalFile(), "git log --oneline\ngit log\ngit log\n")
	prov, _ := p.ProviderFile("codex")
	writeFile(t, prov, "git\n")
	s := openStore(t, p)
	if d := s.Decide(Query{Argv: []string{"git", "log", "--oneline"}, Provider: "", ProjectRoot: "", Dir: os.TempDir()}); d.Rule.Line != 2 {
		t.Fatalf("want the broader global rule on line 2, got %+v", d.Rule)
	}
	if d := s.Decide(Query{Argv: []string{"git", "log", "--oneline"}, Provider: "codex", ProjectRoot: "", Dir: os.TempDir()}); d.Rule.Scope != ScopeProvider {
		t.Fatalf("want the broader provider rule, got %+v", d.Rule)
	}
}

func TestMalformedLinesAreSkippedAndReported(t *testing.T) {
	p := testPaths(t)
	writeFile(t, p.GlobalFile(), "ls\n{unclosed\n  # indented comment\r\ncat {a}b\npwd")
	s := openStore(t, p)
	rules, errs, err := s.Rules(ScopeGlobal, "", "")
	if err != nil {
		t.Fatal(err)
	}
	var lines []int
	for _, r := range rules {
		lines = append(lines, r.Line)
	}
	if !slices.Equal(lines, []int{1, 5}) {
		t.Fatalf("rules on lines %v, want [1 5]", lines)
	}
	if len(errs) != 2 {
		t.Fatalf("errors = %v, want 2", errs)
	}
	want := []string{
		p.GlobalFile() + ":2:1: unmatched open brace in list",
		p.GlobalFile() + `:4:8: list element in braces followed by "b" instead of space`,
	}
	for i, e := range errs {
		if e.Error() != want[i] {
			t.Errorf("error %d = %q, want %q", i, e.Error(), want[i])
		}
	}
	if !s.Decide(Query{Argv: []string{"pwd"}, Provider: "", ProjectRoot: "", Dir: os.TempDir()}).Allowed || s.Decide(Query{Argv: []string{"cat", "x"}, Provider: "", ProjectRoot: "", Dir: os.TempDir()}).Allowed {
		t.Fatal("the good rules must apply and the bad one must not")
	}
}

func TestAddRemoveKeepEveryOtherByte(t *testing.T) {
	tests := []struct {
		name       string
		before     string
		afterAdd   string
		afterRmAdd string // after removing the added rule again
	}{
		{"missing file", "", "git status\n", ""},
		{"final newline", "# c\n\nls\n", "# c\n\nls\ngit status\n", "# c\n\nls\n"},
		{"no final newline", "# c\nls", "# c\nls\ngit status", "# c\nls"},
		{"CRLF", "# c\r\nls\r\n", "# c\r\nls\r\ngit status\r\n", "# c\r\nls\r\n"},
		{"CRLF no final newline", "ls\r\n  pwd", "ls\r\n  pwd\r\ngit status", "ls\r\n  pwd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := testPaths(t)
			if tt.before != "" {
				writeFile(t, p.GlobalFile(), tt.before)
			}
			s := openStore(t, p)
			rule, err := s.Add(ScopeGlobal, "", "", []string{"git", "status"})
			if err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, p.GlobalFile()); got != tt.afterAdd {
				t.Fatalf("after Add: %q, want %q", got, tt.afterAdd)
			}
			if !rule.Active || rule.Scope != ScopeGlobal || rule.Line != strings.Count(tt.afterAdd[:strings.Index(tt.afterAdd, "git status")], "\n")+1 {
				t.Fatalf("Add returned %+v", rule)
			}
			if !s.Decide(Query{Argv: []string{"git", "status"}, Provider: "", ProjectRoot: "", Dir: os.TempDir()}).Allowed {
				t.Fatal("an added rule must apply at once")
			}
			if _, err := s.Add(ScopeGlobal, "", "", []string{"git", "status"}); err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, p.GlobalFile()); got != tt.afterAdd {
				t.Fatalf("adding a present rule changed the file to %q", got)
			}
			if err := s.Remove(ScopeGlobal, "", "", []string{"git", "status"}); err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, p.GlobalFile()); got != tt.afterRmAdd {
				t.Fatalf("after Remove: %q, want %q", got, tt.afterRmAdd)
			}
			if s.Decide(Query{Argv: []string{"git", "status"}, Provider: "", ProjectRoot: "", Dir: os.TempDir()}).Allowed {
				t.Fatal("a removed rule must stop applying at once")
			}
			if err := s.Remove(ScopeGlobal, "", "", []string{"git", "status"}); err == nil || !strings.Contains(err.Error(), "no rule") {
				t.Fatalf("removing an absent rule: %v", err)
			}
		})
	}
}

func TestAddCreatesPrivateFiles(t *testing.T) {
	p := testPaths(t)
	s := openStore(t, p)
	if _, err := s.Add(ScopeProvider, "gemini", "", []string{"ls"}); err != nil {
		t.Fatal(err)
	}
	file, _ := p.ProviderFile("gemini")
	for path, want := range map[string]os.FileMode{file: 0o600, filepath.Dir(file): 0o700, p.ConfigDir: 0o700} {
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if runtime.GOOS != "windows" && info.Mode().Perm() != want { // Windows: no Unix modes; the profile's ACL guards them
			t.Errorf("%s has mode %v, want %v", path, info.Mode().Perm(), want)
		}
	}
	if !s.Decide(Query{Argv: []string{"ls"}, Provider: "gemini", ProjectRoot: "", Dir: os.TempDir()}).Allowed || s.Decide(Query{Argv: []string{"ls"}, Provider: "codex", ProjectRoot: "", Dir: os.TempDir()}).Allowed {
		t.Fatal("provider rule must apply to its provider only")
	}
}

func TestAddRejectsBadInput(t *testing.T) {
	s := openStore(t, testPaths(t))
	tests := []struct {
		scope    Scope
		provider string
		root     string
		tokens   []string
		want     string
	}{
		{ScopeGlobal, "", "", nil, "at least one token"},
		{ScopeGlobal, "", "", []string{"", "x"}, "empty"},
		{ScopeGlobal, "", "", []string{"a", "b\x00"}, "NUL"},
		{ScopeProvider, "", "", []string{"ls"}, "empty"},
		{ScopeProvider, "../x", "", []string{"ls"}, ".."},
		{ScopeProject, "", "rel", []string{"ls"}, "absolute"},
		{"system", "", "", []string{"ls"}, "unknown allow-list scope"},
	}
	for _, tt := range tests {
		_, err := s.Add(tt.scope, tt.provider, tt.root, tt.tokens)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Add(%q, %q, %q, %q) error %v, want it to mention %q", tt.scope, tt.provider, tt.root, tt.tokens, err, tt.want)
		}
	}
}

func TestRoundTripThroughFile(t *testing.T) {
	p := testPaths(t)
	s := openStore(t, p)
	odd := [][]string{{"echo", "a b", "{", "}", `\`, "$x", "#", ""}, {"#cmd", "x\ny"}, {"日本", "\t"}}
	for _, tokens := range odd {
		if _, err := s.Add(ScopeGlobal, "", "", tokens); err != nil {
			t.Fatal(err)
		}
	}
	s2 := openStore(t, p)
	rules, errs, _ := s2.Rules(ScopeGlobal, "", "")
	if len(errs) != 0 || len(rules) != len(odd) {
		t.Fatalf("rules %v errors %v", rules, errs)
	}
	for i, r := range rules {
		if !slices.Equal(r.Tokens, odd[i]) {
			t.Errorf("rule %d read back as %q, want %q", i, r.Tokens, odd[i])
		}
		if !s2.Decide(Query{Argv: odd[i], Provider: "", ProjectRoot: "", Dir: os.TempDir()}).Allowed {
			t.Errorf("%q not allowed after reading back", odd[i])
		}
	}
}

func TestOpenErrors(t *testing.T) {
	if _, err := Open(Paths{ConfigDir: "rel", StateDir: "/x"}); err == nil {
		t.Fatal("relative config dir must be refused")
	}
	p := testPaths(t)
	writeFile(t, p.trustFile(), "{not json")
	if _, err := Open(p); err == nil || !strings.Contains(err.Error(), "delete") {
		t.Fatalf("damaged trust.json: %v", err)
	}
}

// TestDecideWithTheGuard: the broadest matching rule is reported when the
// guard finds nothing; when it leaves findings, the longest matching rule
// (an exact rule a person wrote) is tried, and an exact rule allows its
// own dangerous arguments and nothing beyond them.
func TestDecideWithTheGuard(t *testing.T) {
	p := testPaths(t)
	writeFile(t, p.GlobalFile(), "sort\nsort -o out.txt in.txt\n")
	s := openStore(t, p)
	dir := t.TempDir()
	for _, tc := range []struct {
		argv     string
		allowed  bool
		line     int
		findings int
	}{
		{"sort -u in.txt", true, 1, 0},
		{"sort -o out.txt in.txt", true, 2, 0},
		{"sort -o other.txt in.txt", false, 1, 1},
		{"sort -o out.txt in.txt --compress-program=sh", false, 2, 1},
		{"cat -v", false, 0, 0},
		{"sudo sort", false, 0, 1},
	} {
		d := s.Decide(Query{Argv: strings.Fields(tc.argv), Dir: dir})
		line := 0
		if d.Rule != nil {
			line = d.Rule.Line
		}
		if d.Allowed != tc.allowed || line != tc.line || len(d.Findings) != tc.findings {
			t.Errorf("Decide(%q) = allowed %v, rule line %d, findings %s; want %v, %d, %d findings",
				tc.argv, d.Allowed, line, FindingsText(d.Findings), tc.allowed, tc.line, tc.findings)
		}
	}
}
