package display

import (
	"bytes"
	"math/rand/v2"
	"os"
	osexec "os/exec"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text, C:\\x", "plain text, C:\\x"},
		{"a\nb\tc\rd", `a\nb\tc\rd`},
		{"\x1b[2Jhidden", `\x1b[2Jhidden`},
		{"rlo\u202eevil", `rlo\u202eevil`},
		{"tag\U000e0041", `tag\U000e0041`},
		{"bad\xffbyte", `bad\xffbyte`},
		{"é中", "é中"},
	} {
		if got := Text(tc.in); got != tc.want {
			t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestWord(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"bare word", "ls", "ls"},
		{"bare flag with value", "--color=auto", "--color=auto"},
		{"bare path", "./a/b.txt", "./a/b.txt"},
		{"bare punctuation", "user@host:1,2%+_", "user@host:1,2%+_"},
		{"empty", "", "''"},
		{"space", "a b", "'a b'"},
		{"single quote", "it's", `'it'\''s'`},
		{"only quote", "'", `''\'''`},
		{"double quote", `say "hi"`, `'say "hi"'`},
		{"dollar", "$HOME", "'$HOME'"},
		{"backtick", "`id`", "'`id`'"},
		{"glob", "*.go", "'*.go'"},
		{"question", "a?", "'a?'"},
		{"bracket", "[ab]", "'[ab]'"},
		{"brace", "{a,b}", "'{a,b}'"},
		{"tilde", "~/x", "'~/x'"},
		{"hash", "#x", "'#x'"},
		{"semicolon", "a;b", "'a;b'"},
		{"pipe", "|", "'|'"},
		{"redirection", "2>&1", "'2>&1'"},
		{"backslash printable", `a\b`, `'a\b'`},
		{"assignment", "FOO=bar", "'FOO=bar'"},
		{"assignment underscore digits", "_A1=", "'_A1='"},
		{"not assignment digit first", "1A=b", "1A=b"},
		{"not assignment dash", "-A=b", "-A=b"},
		{"leading equals", "=ls", "'=ls'"},
		{"reserved word", "if", "'if'"},
		{"reserved time", "time", "'time'"},
		{"caret", "a^b", "'a^b'"},
		{"printable non-ascii", "héllo", "'héllo'"},
		{"newline", "a\nb", `$'a\nb'`},
		{"tab", "a\tb", `$'a\tb'`},
		{"carriage return", "a\rb", `$'a\rb'`},
		{"escape", "\x1b[31m", `$'\x1b[31m'`},
		{"nul", "a\x00", `$'a\x00'`},
		{"del", "\x7f", `$'\x7f'`},
		{"c1", "a\u0085b", `$'a\u0085b'`},
		{"rlo", "abc\u202edef", `$'abc\u202edef'`},
		{"rlo followed by hex letters", "\u202eabcdef", `$'\u202eabcdef'`},
		{"escape followed by hex", "\x1bab", `$'\x1bab'`},
		{"zero width space", "a\u200bb", `$'a\u200bb'`},
		{"bom", "\ufeffx", `$'\ufeffx'`},
		{"soft hyphen", "un\u00adsafe", `$'un\u00adsafe'`},
		{"isolate", "\u2066x\u2069", `$'\u2066x\u2069'`},
		{"nbsp", "a\u00a0b", `$'a\u00a0b'`},
		{"line separator", "a\u2028b", `$'a\u2028b'`},
		{"hangul filler", "\u3164", `$'\u3164'`},
		{"variation selector", "a\ufe0f", `$'a\ufe0f'`},
		{"tag character", "a\U000e0041", `$'a\U000e0041'`},
		{"invalid byte", "a\xffb", `$'a\xffb'`},
		{"truncated utf8", "\xe2\x80", `$'\xe2\x80'`},
		{"escaped form keeps quote and backslash", "it's\\\n", `$'it\'s\\\n'`},
		{"escaped form keeps printable unicode", "é\n", "$'é\\n'"},
		{"replacement char printable", "\ufffd", "'\ufffd'"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Word(tc.in); got != tc.want {
				t.Errorf("Word(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestCommand(t *testing.T) {
	tests := []struct {
		name string
		argv []string
		want string
	}{
		{"nil", nil, ""},
		{"one", []string{"true"}, "true"},
		{"several", []string{"git", "commit", "-m", "fix: it's done"}, `git commit -m 'fix: it'\''s done'`},
		{"empty arg", []string{"printf", ""}, "printf ''"},
		{"mixed forms", []string{"echo", "a\nb", "c d", "e"}, `echo $'a\nb' 'c d' e`},
		{"assignment as program", []string{"FOO=bar", "x"}, "'FOO=bar' x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Command(tc.argv); got != tc.want {
				t.Errorf("Command(%q) = %q, want %q", tc.argv, got, tc.want)
			}
		})
	}
}

func TestNeedsEscapeListedRanges(t *testing.T) {
	var listed []rune
	for r := rune(0); r < 0x20; r++ {
		listed = append(listed, r)
	}
	listed = append(listed, 0x7f)
	for r := rune(0x80); r <= 0x9f; r++ {
		listed = append(listed, r)
	}
	for r := rune(0x200b); r <= 0x200f; r++ {
		listed = append(listed, r)
	}
	for r := rune(0x202a); r <= 0x202e; r++ {
		listed = append(listed, r)
	}
	for r := rune(0x2066); r <= 0x2069; r++ {
		listed = append(listed, r)
	}
	listed = append(listed, 0xfeff, 0x00ad, 0x2028, 0x2029, 0x00a0, 0x3000, 0x061c, 0x180e)
	for _, r := range listed {
		if !NeedsEscape(r) {
			t.Errorf("NeedsEscape(%U) = false, want true", r)
		}
		w := Word("x" + string(r) + "y")
		if !strings.HasPrefix(w, "$'") || strings.ContainsRune(w, r) {
			t.Errorf("Word with %U = %q: want the character escaped", r, w)
		}
	}
	for _, r := range "aZ0 !~é中€\ufffd" {
		if NeedsEscape(r) {
			t.Errorf("NeedsEscape(%U) = true, want false", r)
		}
	}
}

// TestEveryInvisibleEscaped walks every code point: the display form of a
// token holding it contains the character itself only when it is printable
// and visible, and then contains no other escape.
func TestEveryInvisibleEscaped(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if r >= 0xd800 && r <= 0xdfff {
			continue // surrogates cannot be encoded in UTF-8
		}
		w := Word(string(r))
		escaped := strings.HasPrefix(w, "$'")
		invisible := unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Cc, r) ||
			unicode.Is(unicode.Zl, r) || unicode.Is(unicode.Zp, r) ||
			(unicode.Is(unicode.Zs, r) && r != ' ') || unicode.Is(invisibleFillers, r)
		if invisible && !escaped {
			t.Fatalf("Word(%U) = %q is not escaped", r, w)
		}
		if escaped && r > 0x7f && strings.ContainsRune(w, r) {
			t.Fatalf("Word(%U) = %q contains the raw character", r, w)
		}
	}
}

// TestInvalidUTF8EveryByte: each byte that cannot start valid UTF-8 alone
// is shown as \xHH.
func TestInvalidUTF8EveryByte(t *testing.T) {
	for c := 0x80; c <= 0xff; c++ {
		w := Word(string([]byte{'a', byte(c)}))
		want := "$'a\\x" + string(hexDigits[c>>4]) + string(hexDigits[c&0xf]) + "'"
		if w != want {
			t.Errorf("Word(a\\x%02x) = %q, want %q", c, w, want)
		}
		if !utf8.ValidString(w) {
			t.Errorf("Word(a\\x%02x) = %q is not valid UTF-8", c, w)
		}
	}
}

// splitWithShell has shell read display as the arguments of `set --` and
// prints the words it got, NUL-terminated.
func splitWithShell(t *testing.T, shell, display string) []string {
	t.Helper()
	script := `set -- ` + display + `
for a; do printf '%s\0' "$a"; done`
	cmd := osexec.Command(shell, "-c", script)
	cmd.Env = append(os.Environ(), "LC_ALL=C.UTF-8")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s -c %q: %v: %s", shell, script, err, stderr.String())
	}
	if len(out) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
}

func requireShell(t *testing.T, name string) string {
	t.Helper()
	p, err := osexec.LookPath(name)
	if err != nil {
		t.Skipf("%s is not installed; this test needs a real %s", name, name)
	}
	return p
}

// printableAlphabet mixes safe characters, every ASCII shell metacharacter
// and printable non-ASCII text.
var printableAlphabet = []rune("aZ09_-./=:,@%+ \"'`$\\|&;<>(){}[]*?!~#^é中€ß\u0301")

// escapedAlphabet adds characters that force the $'…' form.
var escapedAlphabet = append(append([]rune{}, printableAlphabet...),
	'\n', '\t', '\r', 0x1b, 0x7f, 0x85, 0x200b, 0x202e, 0x2066, 0xfeff, 0xad, 0xa0, 0x2028, 0xe0041)

func randomArgv(rng *rand.Rand, alphabet []rune, invalidBytes bool) []string {
	argv := make([]string, 1+rng.IntN(5))
	for i := range argv {
		var b []byte
		n := rng.IntN(8)
		for j := 0; j < n; j++ {
			if invalidBytes && rng.IntN(10) == 0 {
				b = append(b, byte(0x80+rng.IntN(0x80)))
				continue
			}
			b = utf8.AppendRune(b, alphabet[rng.IntN(len(alphabet))])
		}
		argv[i] = string(b)
	}
	return argv
}

func equalArgv(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestRoundTripPOSIXShell: for printable input the display form, read by
// the system's POSIX sh (dash on Debian), gives back the same argv.
func TestRoundTripPOSIXShell(t *testing.T) {
	sh := requireShell(t, "sh")
	rng := rand.New(rand.NewPCG(1, 2))
	const cases = 200
	// One shell per batch keeps the test fast: each case prints a separator.
	var script strings.Builder
	var want [][]string
	for i := 0; i < cases; i++ {
		argv := randomArgv(rng, printableAlphabet, false)
		want = append(want, argv)
		script.WriteString("set -- " + Command(argv) + "\nfor a; do printf '%s\\0' \"$a\"; done; printf '\\1\\0'\n")
	}
	cmd := osexec.Command(sh, "-c", script.String())
	cmd.Env = append(os.Environ(), "LC_ALL=C.UTF-8")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sh: %v", err)
	}
	fields := strings.Split(string(out), "\x00")
	var got [][]string
	var cur []string
	for _, f := range fields[:len(fields)-1] {
		if f == "\x01" {
			got = append(got, cur)
			cur = nil
			continue
		}
		cur = append(cur, f)
	}
	if len(got) != cases {
		t.Fatalf("sh printed %d argvs, want %d", len(got), cases)
	}
	for i := range want {
		if !equalArgv(got[i], want[i]) {
			t.Errorf("case %d: display %s\nsh read %q\nwant     %q", i, Command(want[i]), got[i], want[i])
		}
	}
}

// TestRoundTripBashEscaped: display forms using $'…' (controls, invisible
// characters, invalid bytes) read back by bash give the same bytes.
func TestRoundTripBashEscaped(t *testing.T) {
	bash := requireShell(t, "bash")
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 150; i++ {
		argv := randomArgv(rng, escapedAlphabet, true)
		disp := Command(argv)
		if !utf8.ValidString(disp) {
			t.Fatalf("display form %q is not valid UTF-8", disp)
		}
		for _, r := range disp {
			if NeedsEscape(r) && r != '\n' {
				t.Fatalf("display form %q holds raw %U", disp, r)
			}
		}
		if strings.ContainsRune(disp, '\n') {
			t.Fatalf("display form %q holds a raw newline", disp)
		}
		got := splitWithShell(t, bash, disp)
		if !equalArgv(got, argv) {
			t.Errorf("display %s\nbash read %q\nwant      %q", disp, got, argv)
		}
	}
}

// TestCommandPositionBash: tricky program names stay program names when the
// display form is run as a command line.
func TestCommandPositionBash(t *testing.T) {
	bash := requireShell(t, "bash")
	for _, argv := range [][]string{
		{"FOO=bar", "x"}, {"if", "then"}, {"done", "x"}, {"{", "}"}, {"!", "x"},
		{"~nobody-zz", "a"}, {"#c", "d"}, {"=ls"}, {"in"}, {"a b", "c"}, {"zz\u202e", "x"},
	} {
		script := `command_not_found_handle() { for a; do printf '%s\0' "$a"; done; return 0; }
` + Command(argv)
		cmd := osexec.Command(bash, "-c", script)
		cmd.Env = append(os.Environ(), "LC_ALL=C.UTF-8")
		out, err := cmd.Output()
		if err != nil {
			t.Errorf("bash -c %q: %v", script, err)
			continue
		}
		got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
		if !equalArgv(got, argv) {
			t.Errorf("%s: bash ran %q, want %q", Command(argv), got, argv)
		}
	}
}

func BenchmarkCommandPlain(b *testing.B) {
	argv := []string{"go", "test", "-run", "TestX", "./..."}
	for b.Loop() {
		Command(argv)
	}
}

func BenchmarkCommandEscaped(b *testing.B) {
	argv := []string{"echo", "hello\u202eworld", "it's", "a\nb"}
	for b.Loop() {
		Command(argv)
	}
}
