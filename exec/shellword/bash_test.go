package shellword

import (
	"bytes"
	"math/rand/v2"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentgate/agentgate/exec/display"
)

// bashRunner runs shell lines in a real bash with every command replaced by
// a printer of its argv: PATH is an empty directory and bash's
// command_not_found_handle prints its arguments (the program name first)
// NUL-terminated, as `printf '%s\0'` would. Builtins and keywords would run
// as themselves, so lines whose program is one are not compared.
type bashRunner struct {
	// bash is the bash executable.
	bash string
	// dir is an empty directory: PATH and the working directory.
	dir string
	// builtins holds bash's builtin and keyword names.
	builtins map[string]bool
}

// newBashRunner returns a runner, skipping the test when bash is missing:
// the comparison needs the real shell (`make test` installs it).
func newBashRunner(t testing.TB) *bashRunner {
	bash, err := osexec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed; this test compares with a real bash")
	}
	r := &bashRunner{bash: bash, dir: t.TempDir(), builtins: map[string]bool{}}
	out, err := osexec.Command(bash, "--norc", "--noprofile", "-c", "compgen -b; compgen -k").Output()
	if err != nil {
		t.Fatalf("listing bash builtins: %v", err)
	}
	for _, name := range strings.Fields(string(out)) {
		r.builtins[name] = true
	}
	return r
}

// comparable reports whether argv's program reaches command_not_found_handle
// (not a builtin or keyword, no slash, no leading % which resumes a job).
func (r *bashRunner) comparable(argv []string) bool {
	return !r.builtins[argv[0]] && !strings.ContainsRune(argv[0], '/') && !strings.HasPrefix(argv[0], "%")
}

// argv runs line and returns the argv bash ran.
func (r *bashRunner) argv(t testing.TB, line string) []string {
	t.Helper()
	script := "command_not_found_handle() { printf '%s\\0' \"$@\"; }\n" + line
	cmd := osexec.Command(r.bash, "--norc", "--noprofile", "-c", script)
	cmd.Dir = r.dir
	cmd.Env = []string{"PATH=" + r.dir, "LC_ALL=C.UTF-8", "HOME=" + r.dir}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bash -c %q: %v (%s)", script, err, stderr.String())
	}
	if !bytes.HasSuffix(out, []byte{0}) {
		t.Fatalf("bash -c %q printed %q: not one NUL-terminated argv", script, out)
	}
	return strings.Split(string(out[:len(out)-1]), "\x00")
}

// plainFragments are pieces of literal text: words, blanks, every kind of
// quote, escapes, and line continuations inside and outside quotes.
var plainFragments = []string{
	"a", "Z", "0", "-", "--", ".", "/", "=", ":", ",", "@", "%", "+", "_", "é", "中", "\u202e",
	" ", " ", " ", "\t", "'", "'", `"`, `"`, `\`, `\\`, "\\\n", "\\\n", `\'`, `\"`, `\$`, "\\`", `\ `, `\a`, `\=`,
	"x y", "'q q'", `"d d"`, "'a\\\nb'", "\"a\\\nb\"", "\"a\\\\\nb\"", "$'\\n'", `$'\x41'`, `$'\u00e9'`, `$'\e'`,
	`$'\101'`, `$'\xff'`, `$'\c'`, `$'\'`, `\x`, `\t`, `\n`, `\0`, `\u`, "'\n'", "\"\n\"",
}

// specialFragments are pieces a literal line must not hold, or may hold
// only quoted: CR/LF and other controls, expansions, globs, operators.
var specialFragments = []string{
	"\n", "\r", "\r\n", "\\\r\n", "\x1b", "\x00", "$", "$'", `$"`, "${", "}", "{", "(", ")", "`", "~", "#", "!",
	"*", "?", "[", "]", "^", ";", "|", "&", "<", ">", "\"$\\\n(\"", "\"$\\\n{\"", "\"$\"", "$\\\n",
}

// randomLine builds a line of 1–14 random fragments after a program word.
func randomLine(rng *rand.Rand) string {
	var b strings.Builder
	switch rng.IntN(4) {
	case 0:
		b.WriteString("prog ")
	case 1:
		b.WriteString([]string{"'pr og' ", `"prog" `, `p\rog `, "p\\\nrog ", "pr'o'g ", "=prog ", "$'p\\x72og' "}[rng.IntN(7)])
	}
	n := 1 + rng.IntN(14)
	for j := 0; j < n; j++ {
		if rng.IntN(12) == 0 {
			b.WriteString(specialFragments[rng.IntN(len(specialFragments))])
		} else {
			b.WriteString(plainFragments[rng.IntN(len(plainFragments))])
		}
	}
	return b.String()
}

// TestAgreesWithBash is the property test of the reader: for random lines
// built from every kind of quote, escape, line continuation and CR/LF, each
// line AgentCommand or Typed calls one literal simple command runs, in a
// real bash, exactly the argv they return.
func TestAgreesWithBash(t *testing.T) {
	r := newBashRunner(t)
	rng := newRand(7)
	cases := 4000
	if testing.Short() {
		cases = 800
	}
	accepted, compared := 0, 0
	for i := 0; i < cases; i++ {
		line := randomLine(rng)
		agent, agentErr := AgentCommand(line)
		typed, typedErr := Typed(line)
		if agentErr == nil && (typedErr != nil || !slices.Equal(agent, typed)) {
			t.Fatalf("line %q: AgentCommand %q, but Typed %q, %v", line, agent, typed, typedErr)
		}
		if typedErr != nil {
			continue
		}
		accepted++
		if !r.comparable(typed) {
			continue
		}
		compared++
		if got := r.argv(t, line); !slices.Equal(got, typed) {
			t.Errorf("line %q: parsed as %q, bash runs %q", line, typed, got)
		}
	}
	t.Logf("%d random lines, %d literal, %d compared with bash", cases, accepted, compared)
	if compared < cases/5 {
		t.Fatalf("only %d of %d random lines were compared; the generator needs more literal text", compared, cases)
	}
}

// TestAgreesWithBashOnEdgeCases compares the hand-picked lines of the
// accept tables, and the display form of random argvs, with bash.
func TestAgreesWithBashOnEdgeCases(t *testing.T) {
	r := newBashRunner(t)
	lines := []string{
		"prog a\\\nb", "prog \"a\\\nb\"", "prog 'a\\\nb'", "prog \\\\\\\nb", "prog \"a\\\\\nb\"", "pr\\\nog x",
		"prog 'a\nb'", "prog \"a\nb\"", `prog "a\"b\\c\$d\q"`, `prog 'it'\''s'`, "prog \\\n  -la", "prog\ta",
		"git diff --ext\\-diff", `prog $'a\tb\x41\u00e9'`, `prog $'\e[1m\'\\\z'`, `prog $'\101\x7f\xff'`, `prog $'a\\\nb'`,
		"prog $'a\\\nb'", `prog $'\x4' $'\u41' $'\U1F600' $'\777'`, `prog \é`, "prog é\\\n中",
	}
	rng := newRand(11)
	for i := 0; i < 300; i++ {
		argv := randomArgv(rng, i%2 == 1)
		argv[0] = "prog"
		lines = append(lines, display.Command(argv))
	}
	for _, line := range lines {
		want, err := Typed(line)
		if err != nil {
			t.Errorf("Typed(%q): %v", line, err)
			continue
		}
		if !r.comparable(want) {
			continue
		}
		if got := r.argv(t, line); !slices.Equal(got, want) {
			t.Errorf("line %q: parsed as %q, bash runs %q", line, want, got)
		}
	}
}

// TestBypassesRunInBash shows the two line-continuation bypasses really run a
// command substitution in bash, so their refusal is no accident of wording.
func TestBypassesRunInBash(t *testing.T) {
	r := newBashRunner(t)
	marker := filepath.Join(r.dir, "pwned")
	line := strings.Replace(bypassCmdSubst, "touch /tmp/pwned", "printf made > "+marker, 1)
	if out, err := osexec.Command(r.bash, "--norc", "--noprofile", "-c", line).CombinedOutput(); err != nil {
		t.Fatalf("bash -c %q: %v (%s)", line, err, out)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("bash did not run the hidden command substitution of %q: %v", line, err)
	}
	for _, l := range []string{bypassCmdSubst, bypassPrompt} {
		if argv, err := AgentCommand(l); err == nil {
			t.Errorf("AgentCommand(%q) = %q: a hidden expansion was called literal", l, argv)
		}
		if argv, err := Typed(l); err == nil {
			t.Errorf("Typed(%q) = %q: a hidden expansion was called literal", l, argv)
		}
	}
}

// FuzzAgreesWithBash is the fuzzing form of TestAgreesWithBash (scripts/fuzz.sh).
func FuzzAgreesWithBash(f *testing.F) {
	for _, s := range []string{"prog a\\\nb", bypassCmdSubst, bypassPrompt, `prog $'\x41' "a\"b" 'c'`, "prog \"a\\\\\nb\""} {
		f.Add(s)
	}
	r := newBashRunner(f)
	f.Fuzz(func(t *testing.T, line string) {
		argv, err := Typed(line)
		if err != nil || !r.comparable(argv) {
			return
		}
		if got := r.argv(t, line); !slices.Equal(got, argv) {
			t.Fatalf("line %q: parsed as %q, bash runs %q", line, argv, got)
		}
	})
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed+1)) }

// argvAlphabet mixes safe characters, every ASCII shell metacharacter,
// printable non-ASCII text and characters that force the $'…' form.
var argvAlphabet = []rune("aZ09_-./=:,@%+ \"'`$\\|&;<>(){}[]*?!~#^é中€ß\u0301\n\t\r\x1b\x7f\u0085\u200b\u202e\u2066\ufeff\u00ad\u00a0\u2028\U000e0041")

// randomArgv returns 1–5 random tokens; invalidBytes mixes in bytes that
// are not UTF-8.
func randomArgv(rng *rand.Rand, invalidBytes bool) []string {
	argv := make([]string, 1+rng.IntN(5))
	for i := range argv {
		var b []byte
		n := rng.IntN(8)
		for j := 0; j < n; j++ {
			if invalidBytes && rng.IntN(10) == 0 {
				b = append(b, byte(0x80+rng.IntN(0x80)))
				continue
			}
			b = utf8.AppendRune(b, argvAlphabet[rng.IntN(len(argvAlphabet))])
		}
		argv[i] = string(b)
	}
	return argv
}
