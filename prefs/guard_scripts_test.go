package prefs

import (
	"math/rand/v2"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// sedFragments are pieces random sed scripts are made of: addresses,
// commands with and without arguments, s and y with odd delimiters,
// bracket expressions, escapes, a/i/c text, labels, blocks and the
// dangerous e and w forms. r and R (reading, allowed) and /dev/stdout are
// left out: sed --sandbox refuses them although the guard allows them.
var sedFragments = []string{
	"p", "d", "n", "N", "=", "q", "l", "x", "h", "G", "1", "$", "2,4", "/a/", `\,a,`, "0,/b/", "1~2", "!", ";", "\n", " ", "{", "}",
	"s/a/b/", "s/a/b/g", "s/a/b/e", "s/a/b/w f", "s|x|y|2", "s/[/]/x/", "s/[]/]/x/", `s/\//x/`, "s,a,b,I", "s/a/b/gpe", "y/ab/ba/",
	"e", "e id", "w f", "W f", "a text", "a\\\ntext", "i x;e y", "c\\", ":lab", "b lab", "t", "T lab", "#c", "s/x", "/[/", "s/a/b/x", "e\n",
}

// TestSedDangerAgreesWithSed: for random scripts the guard calls safe, GNU
// sed --sandbox (which refuses exactly the e, r and w forms) does not find
// an e or w command either.
func TestSedDangerAgreesWithSed(t *testing.T) {
	sed, err := osexec.LookPath("sed")
	if err != nil {
		t.Skip("sed is not installed")
	}
	if out, err := osexec.Command(sed, "--sandbox", "-n", "p").CombinedOutput(); err != nil {
		t.Skipf("sed has no --sandbox (not GNU sed): %s", out)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	safe := 0
	for i := 0; i < 1500; i++ {
		var b strings.Builder
		for n := 1 + rng.IntN(6); n > 0; n-- {
			b.WriteString(sedFragments[rng.IntN(len(sedFragments))])
		}
		script := b.String()
		if sedDanger(script) != "" {
			continue
		}
		safe++
		cmd := osexec.Command(sed, "--sandbox", "-n", "-e", script)
		cmd.Dir = t.TempDir()
		cmd.Stdin = strings.NewReader("a\nb\n")
		out, _ := cmd.CombinedOutput()
		if strings.Contains(string(out), "disabled in sandbox mode") {
			t.Errorf("script %q: the guard calls it safe, sed finds an e or w command: %s", script, out)
		}
	}
	if safe < 100 {
		t.Fatalf("only %d random scripts were safe; the generator needs more harmless text", safe)
	}
}

// awkFragments are pieces random awk programs are made of; the dangerous
// ones would create the file M when run.
var awkFragments = []string{
	"{", "}", "print", " ", "$1", "$2", ",", ";", "\n", "(", ")", "x", "=", "1", "2", ">", ">=", "<", "/", "/a|b/", "/[/]/", `"s"`, `"a|b"`,
	"||", "&&", "?", ":", "NR", "if", "else", "BEGIN", "END", "printf", `"%s"`, "++", "-", "#c\n",
	`system("touch M")`, `print > "M"`, `print >> "M"`, `print | "touch M"`, `"touch M" | getline`, `> "M"`, `| "touch M"`,
}

// TestAwkDangerAgreesWithAwk: for random programs the guard calls safe,
// the system's awk run on two lines of input creates no file (every
// dangerous fragment would create M).
func TestAwkDangerAgreesWithAwk(t *testing.T) {
	awk, err := osexec.LookPath("awk")
	if err != nil {
		t.Skip("awk is not installed")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	safe, ran := 0, 0
	for i := 0; i < 1500; i++ {
		var b strings.Builder
		for n := 1 + rng.IntN(8); n > 0; n-- {
			b.WriteString(awkFragments[rng.IntN(len(awkFragments))])
		}
		prog := b.String()
		if awkDanger(prog) != "" {
			continue
		}
		safe++
		dir := t.TempDir()
		cmd := osexec.Command(awk, prog)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
		cmd.Stdin = strings.NewReader("a b\nc d\n")
		if cmd.Run() == nil {
			ran++
		}
		if entries, _ := os.ReadDir(dir); len(entries) > 0 {
			t.Errorf("program %q: the guard calls it safe, but awk created %s", prog, filepath.Join(dir, entries[0].Name()))
		}
	}
	t.Logf("%d safe programs, %d ran without error", safe, ran)
	if safe < 100 || ran < 20 {
		t.Fatalf("only %d safe programs, %d ran; the generator needs more valid text", safe, ran)
	}
}
