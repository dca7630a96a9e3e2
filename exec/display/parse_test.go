package display

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseWords(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		err  string
	}{
		{in: "git status", want: []string{"git", "status"}},
		{in: `git commit -m 'a b' "c d" e\ f`, want: []string{"git", "commit", "-m", "a b", "c d", "e f"}},
		{in: `printf $'a\tb\x41\u00e9'`, want: []string{"printf", "a\tbAé"}},
		{in: `echo "x\$y" ''`, want: []string{"echo", "x$y", ""}},
		{in: "", err: "type the command"},
		{in: "ls | wc", err: "plain command"},
		{in: "ls; rm x", err: "one command"},
		{in: "ls > out", err: "redirection"},
		{in: "FOO=1 make", err: "variables"},
		{in: "echo $HOME", err: "expansion"},
		{in: `echo "$HOME"`, err: "expansion"},
		{in: "rm *.go", err: "glob"},
		{in: "ls # c", err: "comment"},
		{in: "echo 'open", err: "not valid shell words"},
		{in: `echo $'\0'`, err: "NUL"},
	} {
		got, err := ParseWords(tc.in)
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err, "%q", tc.in)
			continue
		}
		require.NoError(t, err, "%q", tc.in)
		assert.Equal(t, tc.want, got, "%q", tc.in)
	}
}

// TestParseWordsInvertsCommand: what Command writes — bare words, single
// quotes, $'…' with escapes, invalid bytes — ParseWords reads back to the
// same argv, so a command shown to a person can be typed back as a rule.
func TestParseWordsInvertsCommand(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 2000; i++ {
		alphabet, invalid := printableAlphabet, false
		if i%2 == 1 {
			alphabet, invalid = escapedAlphabet, true
		}
		argv := randomArgv(rng, alphabet, invalid)
		disp := Command(argv)
		got, err := ParseWords(disp)
		require.NoError(t, err, "argv %q shown as %s", argv, disp)
		if !equalArgv(got, argv) {
			t.Fatalf("argv %q shown as %s parses back as %q", argv, disp, got)
		}
	}
}

func FuzzParseWords(f *testing.F) {
	for _, s := range []string{"git status", `a 'b c' "d" $'\x1b'`, "ls | wc", "echo $HOME", strings.Repeat("x ", 50)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		argv, err := ParseWords(line)
		if err != nil || len(argv) == 0 {
			return
		}
		// Whatever parses is shown in a form that parses to the same argv.
		back, err := ParseWords(Command(argv))
		if err != nil || !equalArgv(back, argv) {
			t.Fatalf("%q parses to %q, shown as %s, which parses to %q (%v)", line, argv, Command(argv), back, err)
		}
	})
}
