package prefs

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// BenchmarkDecide measures one decision against a global list of N rules
// (argv of five tokens, matched by a two-token rule), plus a provider and a
// project list. Compare rules=100000 with rules=10 from the same run: the
// trie makes the cost depend on argv, not on N.
func BenchmarkDecide(b *testing.B) {
	for _, n := range []int{10, 1000, 100000} {
		b.Run(fmt.Sprintf("rules=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			p := Paths{ConfigDir: dir + "/config", StateDir: dir + "/state"}
			var content strings.Builder
			for i := range n {
				fmt.Fprintf(&content, "tool%d sub%d --flag\n", i, i%97)
			}
			content.WriteString("git status\n")
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
			argv := []string{"git", "status", "--short", "--branch", "."}
			miss := []string{"tool1", "sub2", "--flag", "x", "y"}
			if !s.Decide(argv, "codex", root).Allowed || s.Decide(miss, "codex", root).Allowed {
				b.Fatal("benchmark rules do not decide as expected")
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if i%2 == 0 {
					s.Decide(argv, "codex", root)
				} else {
					s.Decide(miss, "codex", root)
				}
			}
		})
	}
}
