package prefs

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/agentgate/agentgate/exec/platformtest"
)

// untrustedLines returns the line numbers of the untrusted rules.
func untrustedLines(t *testing.T, s *Store, root string) []int {
	t.Helper()
	rules, err := s.Untrusted(root)
	if err != nil {
		t.Fatal(err)
	}
	var lines []int
	for _, r := range rules {
		lines = append(lines, r.Line)
	}
	return lines
}

func TestProjectTrust(t *testing.T) {
	p := testPaths(t)
	root := t.TempDir()
	// An agent (or a cloned repository) wrote the file directly: not trusted.
	writeFile(t, ProjectFile(root), "make\ngo test ./...\n")
	s := openStore(t, p)
	if s.Decide(Query{Argv: []string{"make"}, Provider: "", ProjectRoot: root, Dir: os.TempDir()}).Allowed {
		t.Fatal("a project rule written outside agentgate must not apply")
	}
	if got := untrustedLines(t, s, root); !slices.Equal(got, []int{1, 2}) {
		t.Fatalf("untrusted lines %v, want [1 2]", got)
	}
	// A person confirms the content.
	if err := s.Trust(root); err != nil {
		t.Fatal(err)
	}
	if !s.Decide(Query{Argv: []string{"make"}, Provider: "", ProjectRoot: root, Dir: os.TempDir()}).Allowed || !s.Decide(Query{Argv: []string{"go", "test", "./..."}, Provider: "", ProjectRoot: root, Dir: os.TempDir()}).Allowed {
		t.Fatal("confirmed rules must apply")
	}
	if got := untrustedLines(t, s, root); len(got) != 0 {
		t.Fatalf("untrusted after Trust: %v", got)
	}
	// A later outside edit changes one rule and adds one: only those go inactive.
	writeFile(t, ProjectFile(root), "make\ngo test ./... -exec sh\nbash\n")
	s2 := openStore(t, p) // a fresh process reads the same state
	if !s2.Decide(Query{Argv: []string{"make"}, Provider: "", ProjectRoot: root, Dir: os.TempDir()}).Allowed {
		t.Fatal("an unchanged confirmed rule must stay active")
	}
	if s2.Decide(Query{Argv: []string{"go", "test", "./...", "-exec", "sh"}, Provider: "", ProjectRoot: root, Dir: os.TempDir()}).Allowed || s2.Decide(Query{Argv: []string{"bash"}, Provider: "", ProjectRoot: root, Dir: os.TempDir()}).Allowed {
		t.Fatal("changed and added rules must be inactive")
	}
	if got := untrustedLines(t, s2, root); !slices.Equal(got, []int{2, 3}) {
		t.Fatalf("untrusted lines %v, want [2 3]", got)
	}
	// Confirming only what was shown (TrustRules) activates exactly that.
	if err := s2.TrustRules(root, [][]string{{"bash"}}); err != nil {
		t.Fatal(err)
	}
	if !s2.Decide(Query{Argv: []string{"bash"}, Provider: "", ProjectRoot: root, Dir: os.TempDir()}).Allowed || s2.Decide(Query{Argv: []string{"go", "test", "./...", "-exec", "sh"}, Provider: "", ProjectRoot: root, Dir: os.TempDir()}).Allowed {
		t.Fatal("TrustRules must confirm only the listed rules")
	}
}

func TestProjectEditsThroughAgentgateConfirmThemselves(t *testing.T) {
	p := testPaths(t)
	root := t.TempDir()
	writeFile(t, ProjectFile(root), "curl evil\n")
	s := openStore(t, p)
	rule, err := s.Add(ScopeProject, "", root, []string{"make", "test"})
	if err != nil {
		t.Fatal(err)
	}
	if !rule.Active || rule.Line != 2 || rule.Project != root {
		t.Fatalf("Add returned %+v", rule)
	}
	if !s.Decide(Query{Argv: []string{"make", "test"}, Provider: "", ProjectRoot: root, Dir: os.TempDir()}).Allowed {
		t.Fatal("a rule added through agentgate must apply")
	}
	if s.Decide(Query{Argv: []string{"curl", "evil"}, Provider: "", ProjectRoot: root, Dir: os.TempDir()}).Allowed {
		t.Fatal("adding a rule must not confirm the file's other, outside rules")
	}
	// Removing withdraws the confirmation: written back from outside, it is inactive.
	if err := s.Remove(ScopeProject, "", root, []string{"make", "test"}); err != nil {
		t.Fatal(err)
	}
	writeFile(t, ProjectFile(root), "curl evil\nmake test\n")
	s2 := openStore(t, p)
	if s2.Decide(Query{Argv: []string{"make", "test"}, Provider: "", ProjectRoot: root, Dir: os.TempDir()}).Allowed {
		t.Fatal("a removed rule written back from outside must be inactive")
	}
	info, err := os.Stat(p.trustFile())
	if err != nil || (runtime.GOOS != "windows" && info.Mode().Perm() != 0o600) {
		t.Fatalf("trust.json: %v %v", info, err)
	}
}

func TestProjectRoot(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(base, "repo")
	deep := filepath.Join(repo, "a", "b")
	worktree := filepath.Join(base, "wt")
	plain := filepath.Join(base, "plain")
	for _, d := range []string{filepath.Join(repo, ".git"), deep, worktree, plain} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(worktree, ".git"), "gitdir: /elsewhere\n")
	tests := []struct{ dir, want string }{
		{deep, repo},
		{repo, repo},
		{worktree, worktree},
		{plain, plain},
	}
	for _, tt := range tests {
		got, err := ProjectRoot(tt.dir)
		if err != nil || got != tt.want {
			t.Errorf("ProjectRoot(%q) = %q, %v; want %q", tt.dir, got, err, tt.want)
		}
	}
	if _, err := ProjectRoot(filepath.Join(base, "missing")); err == nil {
		t.Error("a missing directory must be an error")
	}
}

func TestProjectRootThroughSymlink(t *testing.T) {
	platformtest.RequireSymlinks(t)
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(base, "repo")
	deep := filepath.Join(repo, "a", "b")
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(deep, link); err != nil {
		t.Fatal(err)
	}
	if got, err := ProjectRoot(link); err != nil || got != repo {
		t.Errorf("ProjectRoot(%q) = %q, %v; want %q", link, got, err, repo)
	}
}

func TestValidateProviderName(t *testing.T) {
	for _, good := range []string{"claude-code", "codex", "gemini_cli", "tool.v2", "A1"} {
		if err := ValidateProviderName(good); err != nil {
			t.Errorf("%q: %v", good, err)
		}
	}
	for _, bad := range []string{"", ".", "..", "a/b", `a\b`, "../x", "a..b", "sp ace", "con", "NUL.x", "com1", "é", string(make([]byte, 65))} {
		if err := ValidateProviderName(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	p := Paths{ConfigDir: "/c", StateDir: "/s"}
	if f, err := p.ProviderFile("codex"); err != nil || f != filepath.Join("/c", "providers", "codex.allow.list") {
		t.Errorf("ProviderFile = %q, %v", f, err)
	}
	if _, err := p.ProviderFile("../../etc/passwd"); err == nil {
		t.Error("ProviderFile must validate the name")
	}
	if got := ProjectFile("/r"); got != filepath.Join("/r", ".agentgate", "allow.list") {
		t.Errorf("ProjectFile = %q", got)
	}
}

// TestProjectEditRefusedThroughLinks: a project's .agentgate directory or
// allow.list that is a symbolic link (which an agent or a repository can
// plant) is not edited through, so a rule the person meant for the project
// cannot land in the global list.
func TestProjectEditRefusedThroughLinks(t *testing.T) {
	platformtest.RequireSymlinks(t)
	for _, link := range []string{"directory", "file"} {
		t.Run(link, func(t *testing.T) {
			p := testPaths(t)
			root := t.TempDir()
			writeFile(t, p.GlobalFile(), "# global\n")
			switch link {
			case "directory":
				if err := os.Symlink(filepath.Dir(p.GlobalFile()), filepath.Join(root, ".agentgate")); err != nil {
					t.Fatal(err)
				}
			case "file":
				if err := os.MkdirAll(filepath.Join(root, ".agentgate"), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(p.GlobalFile(), ProjectFile(root)); err != nil {
					t.Fatal(err)
				}
			}
			s := openStore(t, p)
			if _, err := s.Add(ScopeProject, "", root, []string{"python3"}); err == nil {
				t.Fatal("a project rule was written through a symbolic link")
			}
			if err := s.Remove(ScopeProject, "", root, []string{"python3"}); err == nil {
				t.Fatal("a project rule was removed through a symbolic link")
			}
			if got, err := os.ReadFile(p.GlobalFile()); err != nil || string(got) != "# global\n" {
				t.Fatalf("global list = %q, %v; want it unchanged", got, err)
			}
			if s.Decide(Query{Argv: []string{"python3", "-c", "x"}, Provider: "", ProjectRoot: "", Dir: os.TempDir()}).Allowed {
				t.Fatal("the project rule became a global one")
			}
		})
	}
}
