package hook

import (
	"math/rand/v2"
	osexec "os/exec"
	"slices"
	"strings"
	"testing"
)

func TestLiteralArgvAccepted(t *testing.T) {
	tests := []struct {
		line string
		want []string
	}{
		{"ls", []string{"ls"}},
		{"  git   status  ", []string{"git", "status"}},
		{"git status\n", []string{"git", "status"}},
		{"go test -run TestX ./...", []string{"go", "test", "-run", "TestX", "./..."}},
		{`git commit -m 'fix: a "b" c'`, []string{"git", "commit", "-m", `fix: a "b" c`}},
		{`echo "hello world"`, []string{"echo", "hello world"}},
		{`echo "a\"b\\c\$d\q"`, []string{"echo", `a"b\c$d\q`}},
		{`echo a\ b`, []string{"echo", "a b"}},
		{`echo \*`, []string{"echo", "*"}},
		{`echo 'it'\''s'`, []string{"echo", "it's"}},
		{"ls \\\n  -la", []string{"ls", "-la"}},
		{`npm run build --if-present`, []string{"npm", "run", "build", "--if-present"}},
		{`cat résumé.txt`, []string{"cat", "résumé.txt"}},
		{`printf ''`, []string{"printf", ""}},
		{`git log --format=%H@%an:x,y+z`, []string{"git", "log", "--format=%H@%an:x,y+z"}},
		{`'my prog' x`, []string{"my prog", "x"}},
		{`"~/x" '*' "{a,b}" '$HOME' "a#b"`, []string{"echo", "~/x", "*", "{a,b}", "$HOME", "a#b"}[1:]},
	}
	for _, tc := range tests {
		got, reason := LiteralArgv(tc.line)
		if reason != "" {
			t.Errorf("LiteralArgv(%q): refused: %s", tc.line, reason)
			continue
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("LiteralArgv(%q) = %q, want %q", tc.line, got, tc.want)
		}
	}
}

func TestLiteralArgvRefused(t *testing.T) {
	tests := []struct {
		name, line, reasonHas string
	}{
		{"and", "make && make install", "&&"},
		{"or", "test -f x || touch x", "||"},
		{"semicolon", "cd /tmp; ls", "2 commands"},
		{"trailing semicolon", "ls;", "separator"},
		{"pipe", "cat x | sh", "|"},
		{"pipe stderr", "cat x |& sh", "|&"},
		{"background", "sleep 10 &", "background"},
		{"newline", "ls\nrm -rf x", "2 commands"},
		{"redirect out", "echo x > f", "redirection"},
		{"redirect in", "sh < f", "redirection"},
		{"redirect fd", "ls 2>&1", "redirection"},
		{"append", "echo x >> f", "redirection"},
		{"here-doc", "cat <<EOF\nhi\nEOF", "redirection"},
		{"here-string", "cat <<< hi", "redirection"},
		{"command substitution", "echo $(id)", "command substitution"},
		{"backticks", "echo `id`", "command substitution"},
		{"variable", "echo $HOME", "variable"},
		{"braced variable", "echo ${HOME}", "variable"},
		{"variable in double quotes", `echo "$HOME"`, "double quotes"},
		{"substitution in double quotes", `echo "$(id)"`, "double quotes"},
		{"assignment before command", "FOO=bar ls", "assigns"},
		{"assignment alone", "FOO=bar", "assigns"},
		{"glob star", "rm *.go", `"*"`},
		{"glob question", "ls a?", `"?"`},
		{"glob bracket", "ls [ab]", `"["`},
		{"brace expansion", "echo {a,b}", `"{"`},
		{"brace range", "echo {1..3}", `"{"`},
		{"tilde", "ls ~/x", `"~"`},
		{"tilde after equals", "echo a=~/x", `"~"`},
		{"subshell", "(ls)", "subshell"},
		{"group", "{ ls; }", "group"},
		{"process substitution", "diff <(ls) x", "process substitution"},
		{"arithmetic expansion", "echo $((1+2))", "arithmetic"},
		{"arithmetic command", "((x=1))", "arithmetic"},
		{"negation", "! ls", "!"},
		{"bang in word", "echo hi!", `"!"`},
		{"bang in double quotes", `echo "hi!"`, "!"},
		{"comment", "ls # list", "comment"},
		{"function", "f() { ls; }", "function"},
		{"if", "if true; then ls; fi", "if"},
		{"for", "for i in a; do ls; done", "for"},
		{"while", "while true; do ls; done", "while"},
		{"case", "case x in x) ls;; esac", "case"},
		{"test clause", "[[ -f x ]]", "test"},
		{"declare", "export FOO=bar", "declaration"},
		{"time", "time ls", "time"},
		{"ansi-c quoting", "echo $'a\\nb'", "$'"},
		{"locale quoting", `echo $"a"`, `$"`},
		{"extglob", "ls @(a|b)", "extended glob"},
		{"caret", "echo a^b", `"^"`},
		{"hash mid-word", "echo a#b", `"#"`},
		{"parens", "echo (", "parse"},
		{"unterminated quote", "echo 'abc", "parse"},
		{"empty", "", "no command"},
		{"blank", "  \n ", "no command"},
		{"coproc", "coproc ls", "coproc"},
		{"trailing backslash", "echo a\\", "lone backslash"},
		// The parser reads CR as blank space, bash as a character: with the
		// line continuation below, bash runs a second command.
		{"escaped CR before newline", "git status \\\r\nrm -rf x", "control character"},
		{"CR between words", "git\rstatus", "control character"},
		{"CRLF", "git status\r\nrm -rf x", "control character"},
		{"NUL in quotes", "git 'a\x00b'", "control character"},
		{"escape in quotes", "echo '\x1b[2J'", "control character"},
		{"DEL", "echo a\x7fb", "control character"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			argv, reason := LiteralArgv(tc.line)
			if argv != nil || reason == "" {
				t.Fatalf("LiteralArgv(%q) = %q, %q: want a refusal", tc.line, argv, reason)
			}
			if !strings.Contains(reason, tc.reasonHas) {
				t.Errorf("LiteralArgv(%q) reason %q does not mention %q", tc.line, reason, tc.reasonHas)
			}
		})
	}
}

// TestLiteralArgvAgreesWithBash: for random command lines that LiteralArgv
// accepts, bash splits the line into exactly the same words. The line is run
// as the arguments of a function that prints them, so nothing else runs.
func TestLiteralArgvAgreesWithBash(t *testing.T) {
	bash, err := osexec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed; this test compares with a real bash")
	}
	rng := rand.New(rand.NewPCG(7, 8))
	alphabet := []string{"a", "Z", "0", "-", ".", "/", "=", ":", ",", "@", "%", "+", "_", " ", " ", "'", `"`, `\`,
		"$", "*", "é", "{", "}", "~", "#", "!", "\\\n", "x y", "'q q'", `"d d"`, `\ `, "\r", "\t", "\x7f"}
	accepted := 0
	for i := 0; i < 3000 && accepted < 200; i++ {
		var b strings.Builder
		n := 1 + rng.IntN(12)
		for j := 0; j < n; j++ {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		line := "w " + b.String()
		want, reason := LiteralArgv(line)
		if reason != "" {
			continue
		}
		accepted++
		script := `p() { for a; do printf '%s\0' "$a"; done; }; p ` + line
		out, err := osexec.Command(bash, "--norc", "-c", script).Output()
		if err != nil {
			t.Fatalf("bash -c %q: %v", script, err)
		}
		got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
		if !slices.Equal(got, want) {
			t.Errorf("line %q: LiteralArgv = %q, bash = %q", line, want, got)
		}
	}
	if accepted < 50 {
		t.Fatalf("only %d random lines were literal; the generator needs more literal text", accepted)
	}
}
