package prefs

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// benchStore returns a store whose global list holds n generated rules
// plus `go test` and `git status`, and a project root holding a clean git
// repository (.git/config as `git init` writes it, an empty .git/hooks).
func benchStore(b *testing.B, n int) (*Store, string) {
	dir := b.TempDir()
	p := Paths{ConfigDir: dir + "/config", StateDir: dir + "/state"}
	var content strings.Builder
	for i := range n {
		fmt.Fprintf(&content, "tool%d sub%d --flag\n", i, i%97)
	}
	content.WriteString("go test\ngit status\n")
	if err := os.MkdirAll(p.ConfigDir, 0o700); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(p.GlobalFile(), []byte(content.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	s, err := Open(p)
	if err != nil {
		b.Fatal(err)
	}
	root := b.TempDir()
	if err := os.MkdirAll(root+"/.git/hooks", 0o700); err != nil {
		b.Fatal(err)
	}
	gitConfig := "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n"
	if err := os.WriteFile(root+"/.git/config", []byte(gitConfig), 0o600); err != nil {
		b.Fatal(err)
	}
	return s, root
}

// BenchmarkDecide measures one decision — rule match and argument guard —
// against a global list of N rules plus a provider and a project list:
// alternately an allowed `go test -run TestX -count=1 ./...` (matched by
// the two-token rule `go test`, its options read by the guard) and a miss
// of five tokens. Compare rules=100000 with rules=10 from the same run:
// the trie makes the cost depend on argv, not on N.
func BenchmarkDecide(b *testing.B) {
	benchDecide(b, []string{"go", "test", "-run", "TestX", "-count=1", "./..."})
}

// BenchmarkDecideGit is BenchmarkDecide for `git status --short --branch .`
// (rule `git status`): the guard also finds the repository and reads its
// .git/config and .git/hooks, a handful of system calls.
func BenchmarkDecideGit(b *testing.B) {
	benchDecide(b, []string{"git", "status", "--short", "--branch", "."})
}

// benchDecide alternates argv (allowed) and a miss.
func benchDecide(b *testing.B, argv []string) {
	for _, n := range []int{10, 1000, 100000} {
		b.Run(fmt.Sprintf("rules=%d", n), func(b *testing.B) {
			s, root := benchStore(b, n)
			hit := Query{Argv: argv, Provider: "codex", ProjectRoot: root, Dir: root}
			miss := Query{Argv: []string{"tool1", "sub2", "--flag", "x", "y"}, Provider: "codex", ProjectRoot: root, Dir: root}
			if d := s.Decide(hit); !d.Allowed {
				b.Fatalf("%q is not allowed: %s", argv, FindingsText(d.Findings))
			}
			if s.Decide(miss).Allowed {
				b.Fatal("the miss is allowed")
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if i%2 == 0 {
					s.Decide(hit)
				} else {
					s.Decide(miss)
				}
			}
		})
	}
}
