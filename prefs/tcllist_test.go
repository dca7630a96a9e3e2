package prefs

import (
	"bufio"
	"encoding/hex"
	"errors"
	"io"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseList(t *testing.T) {
	tests := []struct {
		name string
		line string
		want []string
	}{
		{"empty", "", []string{}},
		{"white space only", " \t\v\f\r ", []string{}},
		{"bare words", "git status --short", []string{"git", "status", "--short"}},
		{"runs of white space", "  a \t b\v\fc  ", []string{"a", "b", "c"}},
		{"empty token", "{} x", []string{"", "x"}},
		{"braces keep content literally", `{a b} {\n$x}`, []string{"a b", `\n$x`}},
		{"nested braces", "{a {b c} d}", []string{"a {b c} d"}},
		{"escaped brace inside braces", `{a\{b}`, []string{`a\{b`}},
		{"backslash-newline inside braces is literal", "{a\\\nb}", []string{"a\\\nb"}},
		{"quotes substitute", `"a b\tc"`, []string{"a b\tc"}},
		{"braces inside quotes are plain", `"{a"`, []string{"{a"}},
		{"quote inside a bare word", `a"b`, []string{`a"b`}},
		{"brace inside a bare word", `a{b`, []string{`a{b`}},
		{"escaped space joins", `a\ b`, []string{"a b"}},
		{"letter escapes", `\a\b\f\n\r\t\v`, []string{"\a\b\f\n\r\t\v"}},
		{"hex takes two digits", `\x414`, []string{"A4"}},
		{"hex without digits", `\xg`, []string{"xg"}},
		{"unicode escape", `\u00e9\u65e5`, []string{"é日"}},
		{"surrogate pair", `\uD83D\uDE00`, []string{"😀"}},
		{"lone surrogate", `\uD83Dx`, []string{"\xed\xa0\xbdx"}},
		{"long unicode escape", `\U00e9`, []string{"é"}},
		{"long escape above U+FFFF, as Tcl 8.6", `\U1F600`, []string{"\uFFFD"}},
		{"long escape stops at U+10FFFF", `\U110000`, []string{"\uFFFD0"}},
		{"surrogates from mixed escapes", `\uD83D\U0000DE00`, []string{"😀"}},
		{"octal", `\101\0`, []string{"A\x00"}},
		{"octal stops at 0377", `\777`, []string{"?7"}},
		{"backslash-newline with indentation", "a\\\n   b", []string{"a b"}},
		{"trailing backslash", `a\`, []string{`a\`}},
		{"escaped other character", `\é\q`, []string{"éq"}},
		{"escaped character above U+FFFF, as Tcl 8.6", `\😀`, []string{"\uFFFD"}},
		{"hash is an ordinary token", "#a b", []string{"#a", "b"}},
		{"non-ASCII space is not a separator", "a\u00a0b", []string{"a\u00a0b"}},
		{"CR separates", "a\rb", []string{"a", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseList(tt.line)
			if err != nil {
				t.Fatalf("ParseList(%q): %v", tt.line, err)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("ParseList(%q) = %q, want %q", tt.line, got, tt.want)
			}
		})
	}
}

func TestParseListErrors(t *testing.T) {
	tests := []struct {
		line   string
		column int
		reason string
	}{
		{"{a", 1, "unmatched open brace in list"},
		{"x {a {b}", 3, "unmatched open brace in list"},
		{`{a\}`, 1, "unmatched open brace in list"},
		{`"a`, 1, "unmatched open quote in list"},
		{`é "a`, 3, "unmatched open quote in list"},
		{"{a}b", 4, `list element in braces followed by "b" instead of space`},
		{"日 {a}本 x", 6, `list element in braces followed by "本" instead of space`},
		{"{a}bcdefghijklmnopqrstuvwxyz", 4, `list element in braces followed by "bcdefghijklmnopqrstu" instead of space`},
		{`"a"b`, 4, `list element in quotes followed by "b" instead of space`},
	}
	for _, tt := range tests {
		_, err := ParseList(tt.line)
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Fatalf("ParseList(%q) error = %v, want a *ParseError", tt.line, err)
		}
		if pe.Column != tt.column || pe.Reason != tt.reason {
			t.Errorf("ParseList(%q) = col %d %q, want col %d %q", tt.line, pe.Column, pe.Reason, tt.column, tt.reason)
		}
	}
}

func TestFormatList(t *testing.T) {
	tests := []struct {
		tokens []string
		want   string
	}{
		{nil, ""},
		{[]string{"git", "status"}, "git status"},
		{[]string{""}, "{}"},
		{[]string{"a b"}, "{a b}"},
		{[]string{"$HOME", "[x]", "a;b", `a"b`}, `{$HOME} {[x]} {a;b} {a"b}`},
		{[]string{"a{b}c"}, "a{b}c"},
		{[]string{"a{b"}, `a\{b`},
		{[]string{"}"}, `\}`},
		{[]string{"{a}"}, "{{a}}"},
		{[]string{`"x`}, `{"x}`},
		{[]string{"#x", "#y"}, "{#x} #y"},
		{[]string{"#x y{"}, `\#x\ y\{`},
		{[]string{`a\`}, `a\\`},
		{[]string{`a\b`}, `{a\b}`},
		{[]string{"a\nb"}, `a\nb`},
		{[]string{"a b\r\n"}, `a\ b\r\n`},
		{[]string{"tab\there"}, "{tab\there}"},
		{[]string{"日本", "é"}, "日本 é"},
		{[]string{"\x01"}, "\x01"},
		{[]string{"a\\\nb"}, `a\\\nb`},
	}
	for _, tt := range tests {
		if got := FormatList(tt.tokens); got != tt.want {
			t.Errorf("FormatList(%q) = %q, want %q", tt.tokens, got, tt.want)
		}
	}
}

// tclServer is one tclsh process answering list questions over stdin (see
// testdata/prefs/listserver.tcl).
type tclServer struct {
	t   *testing.T
	in  io.WriteCloser
	out *bufio.Scanner
}

// startTclServer starts tclsh for the test, skipping it when tclsh is absent.
func startTclServer(t *testing.T) *tclServer {
	t.Helper()
	tclsh, err := exec.LookPath("tclsh")
	if err != nil {
		t.Skip("tclsh is not installed (Debian package tcl; `make test` installs it): cannot compare with Tcl")
	}
	cmd := exec.Command(tclsh, filepath.Join("..", "testdata", "prefs", "listserver.tcl"))
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close()
		cmd.Wait()
	})
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	return &tclServer{t: t, in: in, out: sc}
}

// ask sends one request line and returns the answer's words.
func (s *tclServer) ask(request string) []string {
	s.t.Helper()
	if _, err := io.WriteString(s.in, request+"\n"); err != nil {
		s.t.Fatalf("writing to tclsh: %v", err)
	}
	if !s.out.Scan() {
		s.t.Fatalf("tclsh gave no answer to %q: %v", request, s.out.Err())
	}
	return strings.Fields(s.out.Text())
}

// parse returns Tcl's elements of s, or Tcl's error message.
func (s *tclServer) parse(text string) ([]string, string) {
	s.t.Helper()
	words := s.ask("P " + hex.EncodeToString([]byte(text)))
	if words[0] == "ERR" {
		return nil, unhex(s.t, words[1])
	}
	tokens := []string{}
	for _, w := range words[1:] {
		if w == "-" {
			w = ""
		}
		tokens = append(tokens, unhex(s.t, w))
	}
	return tokens, ""
}

// format returns Tcl's [list] string of tokens.
func (s *tclServer) format(tokens []string) string {
	s.t.Helper()
	request := "F"
	for _, tok := range tokens {
		if tok == "" {
			request += " -"
		} else {
			request += " " + hex.EncodeToString([]byte(tok))
		}
	}
	words := s.ask(request)
	if len(words) == 1 {
		return ""
	}
	return unhex(s.t, words[1])
}

func unhex(t *testing.T, h string) string {
	t.Helper()
	b, err := hex.DecodeString(h)
	if err != nil {
		t.Fatalf("bad hex from tclsh %q: %v", h, err)
	}
	return string(b)
}

// tokenPieces are the fragments generated tokens are made of: everything
// that matters to Tcl's list syntax, plus ordinary and non-ASCII text.
var tokenPieces = []string{
	"a", "b", "git", "x", "0", "7", "-", "=", "/", ".", ",",
	" ", "  ", "\t", "\n", "\r", "\v", "\f", "\r\n",
	"{", "}", "{}", "{a}", "\"", "\\", "\\\\", "\\{", "\\}", "\\\n", "\\n",
	"$", "[", "]", ";", "#", "\x01", "\x1b", "\x7f",
	"é", "日本", "😀", "\u00a0", "\u200b", "\u202e",
}

// randomToken builds a token of 0 to 6 pieces.
func randomToken(r *rand.Rand) string {
	var b strings.Builder
	for range r.IntN(7) {
		b.WriteString(tokenPieces[r.IntN(len(tokenPieces))])
	}
	return b.String()
}

// randomTokens builds a list of 1 to 5 tokens.
func randomTokens(r *rand.Rand) []string {
	tokens := make([]string, 1+r.IntN(5))
	for i := range tokens {
		tokens[i] = randomToken(r)
	}
	return tokens
}

// TestFormatListReadByTcl: every line FormatList writes is one line, and
// tclsh reads it back to the same tokens.
func TestFormatListReadByTcl(t *testing.T) {
	tcl := startTclServer(t)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 4000 {
		tokens := randomTokens(r)
		line := FormatList(tokens)
		if strings.ContainsAny(line, "\n\r") {
			t.Fatalf("FormatList(%q) = %q spans lines", tokens, line)
		}
		got, tclErr := tcl.parse(line)
		if tclErr != "" || !slices.Equal(got, tokens) {
			t.Fatalf("case %d: tokens %q formatted as %q; tclsh reads %q (error %q)", i, tokens, line, got, tclErr)
		}
	}
}

// TestParseListReadsTclLists: every list tclsh formats, ParseList reads to
// the same tokens — those on one line and those Tcl spreads over lines.
func TestParseListReadsTclLists(t *testing.T) {
	tcl := startTclServer(t)
	r := rand.New(rand.NewPCG(3, 4))
	oneLine := 0
	for i := range 4000 {
		tokens := randomTokens(r)
		text := tcl.format(tokens)
		if !strings.ContainsAny(text, "\n\r") {
			oneLine++
		}
		got, err := ParseList(text)
		if err != nil || !slices.Equal(got, tokens) {
			t.Fatalf("case %d: tclsh formats %q as %q; ParseList reads %q (error %v)", i, tokens, text, got, err)
		}
	}
	if oneLine < 1000 {
		t.Fatalf("only %d of 4000 generated lists were on one line: the generator is off", oneLine)
	}
}

// linePieces are fragments of arbitrary (often malformed) list text.
var linePieces = []string{
	"a", "b", " ", "\t", "\n", "{", "}", "\"", "\\", "$", "[", "]", ";", "#",
	`\u00e9`, `\uD83D`, `\uDE00`, `\U1F600`, `\U110000`, `\x4`, `\x41g`, `\777`, `\0`, `\n`, "\\\n  ",
	"é", "日本", "😀", "\x01",
}

// TestParseListAgreesWithTcl: on arbitrary text, ParseList and Tcl accept
// the same strings, read the same tokens and give the same error messages.
func TestParseListAgreesWithTcl(t *testing.T) {
	tcl := startTclServer(t)
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 6000 {
		var b strings.Builder
		for range r.IntN(10) {
			b.WriteString(linePieces[r.IntN(len(linePieces))])
		}
		text := b.String()
		want, tclErr := tcl.parse(text)
		got, err := ParseList(text)
		switch {
		case tclErr != "" && err == nil:
			t.Fatalf("case %d: %q: tclsh fails (%s), ParseList reads %q", i, text, tclErr, got)
		case tclErr == "" && err != nil:
			t.Fatalf("case %d: %q: tclsh reads %q, ParseList fails: %v", i, text, want, err)
		case err != nil && err.(*ParseError).Reason != tclErr:
			t.Fatalf("case %d: %q: tclsh says %q, ParseList says %q", i, text, tclErr, err.(*ParseError).Reason)
		case err == nil && !slices.Equal(got, want):
			t.Fatalf("case %d: %q: tclsh reads %q, ParseList reads %q", i, text, want, got)
		}
	}
}

func FuzzParseFormat(f *testing.F) {
	for _, seed := range []string{"", "git status", "{a b} c", `"q\"x"`, "{", `a\`, "\\\n", `\uD83D\uDE00`, "#x {} y"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		tokens, err := ParseList(text) // must not panic
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Column < 1 {
				t.Fatalf("ParseList(%q) error %v: want a *ParseError with a column", text, err)
			}
		}
		// Use the text's own pieces as tokens too, so odd bytes get formatted.
		for _, toks := range [][]string{tokens, strings.Split(text, " "), {text}} {
			if len(toks) == 0 {
				continue
			}
			line := FormatList(toks)
			if strings.ContainsAny(line, "\n\r") {
				t.Fatalf("FormatList(%q) = %q spans lines", toks, line)
			}
			back, err := ParseList(line)
			if err != nil || !slices.Equal(back, toks) {
				t.Fatalf("FormatList(%q) = %q, read back as %q (error %v)", toks, line, back, err)
			}
		}
	})
}
