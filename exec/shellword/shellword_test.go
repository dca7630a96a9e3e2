package shellword

import (
	"slices"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/exec/display"
)

// Two line-continuation bypasses once found in the hook: bash removes the
// backslash-newline inside the double quotes, then sees $( and ${.
const (
	bypassCmdSubst = "echo \"$\\\n(touch /tmp/pwned)\""
	bypassPrompt   = "echo \"$\\\n{value@P}\""
)

func TestAgentCommandAccepted(t *testing.T) {
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
		{"l\\\ns -la", []string{"ls", "-la"}},
		{"echo a\\\nb", []string{"echo", "ab"}},
		{"echo \"a\\\nb\"", []string{"echo", "ab"}},
		{"echo 'a\\\nb'", []string{"echo", "a\\\nb"}},
		{"echo \\\\\\\nb", []string{"echo", `\b`}},
		{"echo \"a\\\\\nb\"", []string{"echo", "a\\\nb"}},
		{"echo 'a\nb'", []string{"echo", "a\nb"}},
		{"git diff --ext\\-diff", []string{"git", "diff", "--ext-diff"}},
		{`npm run build --if-present`, []string{"npm", "run", "build", "--if-present"}},
		{`cat résumé.txt`, []string{"cat", "résumé.txt"}},
		{`printf ''`, []string{"printf", ""}},
		{`git log --format=%H@%an:x,y+z`, []string{"git", "log", "--format=%H@%an:x,y+z"}},
		{`'my prog' x`, []string{"my prog", "x"}},
		{`"~/x" '*' "{a,b}" '$HOME' "a#b"`, []string{"~/x", "*", "{a,b}", "$HOME", "a#b"}},
		{`echo \=ls '=ls' a=b`, []string{"echo", "=ls", "=ls", "a=b"}},
		{"echo\ta", []string{"echo", "a"}},
	}
	for _, tc := range tests {
		got, err := AgentCommand(tc.line)
		if err != nil {
			t.Errorf("AgentCommand(%q): refused: %v", tc.line, err)
			continue
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("AgentCommand(%q) = %q, want %q", tc.line, got, tc.want)
		}
		if typed, err := Typed(tc.line); err != nil || !slices.Equal(typed, got) {
			t.Errorf("Typed(%q) = %q, %v; want what AgentCommand returns, %q", tc.line, typed, err, got)
		}
	}
}

func TestAgentCommandRefused(t *testing.T) {
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
		{"continued command substitution in double quotes", bypassCmdSubst, "$ inside double quotes"},
		{"continued prompt expansion in double quotes", bypassPrompt, "$ inside double quotes"},
		{"continued dollar unquoted", "echo $\\\n(id)", "parse"},
		{"continued dollar brace unquoted", "echo $\\\n{x}", `"$"`},
		{"lone dollar in double quotes", `echo "a$"`, "$ inside double quotes"},
		{"assignment before command", "FOO=bar ls", "assigns"},
		{"assignment alone", "FOO=bar", "assigns"},
		{"glob star", "rm *.go", `"*"`},
		{"glob question", "ls a?", `"?"`},
		{"glob bracket", "ls [ab]", `"["`},
		{"brace expansion", "echo {a,b}", `"{"`},
		{"brace range", "echo {1..3}", `"{"`},
		{"tilde", "ls ~/x", `"~"`},
		{"tilde after equals", "echo a=~/x", `"~"`},
		{"zsh equals expansion", "echo =ls", "unquoted ="},
		{"zsh equals expansion after continuation", "echo \\\n=ls", "unquoted ="},
		{"zsh equals program", "=ls -l", "unquoted ="},
		{"zsh rc_quotes", "echo 'a''b'", "back to back"},
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
		{"CR in quotes", "git 'a\rb'", "control character"},
		{"NUL in quotes", "git 'a\x00b'", "control character"},
		{"escape in quotes", "echo '\x1b[2J'", "control character"},
		{"DEL", "echo a\x7fb", "control character"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			argv, err := AgentCommand(tc.line)
			if argv != nil || err == nil {
				t.Fatalf("AgentCommand(%q) = %q, %v: want a refusal", tc.line, argv, err)
			}
			if !strings.Contains(err.Error(), tc.reasonHas) {
				t.Errorf("AgentCommand(%q) reason %q does not mention %q", tc.line, err, tc.reasonHas)
			}
		})
	}
}

func TestTyped(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		err  string
	}{
		{in: "git status", want: []string{"git", "status"}},
		{in: `git commit -m 'a b' "c d" e\ f`, want: []string{"git", "commit", "-m", "a b", "c d", "e f"}},
		{in: `printf $'a\tb\x41\u00e9'`, want: []string{"printf", "a\tbAé"}},
		{in: `printf $'\e[1m\'\\\z'`, want: []string{"printf", "\x1b[1m'\\\\z"}},
		{in: `printf $'\101\x7f\xff'`, want: []string{"printf", "A\x7f\xff"}},
		{in: `echo "x\$y" ''`, want: []string{"echo", "x$y", ""}},
		{in: "", err: "type the command"},
		{in: "  ", err: "type the command"},
		{in: "ls | wc", err: "|"},
		{in: "ls; rm x", err: "2 commands"},
		{in: "ls > out", err: "redirection"},
		{in: "FOO=1 make", err: "assigns"},
		{in: "echo $HOME", err: "variable"},
		{in: `echo "$HOME"`, err: "double quotes"},
		{in: "rm *.go", err: "quote it"},
		{in: "ls # c", err: "comment"},
		{in: "echo 'open", err: "does not parse"},
		{in: `echo $'\0'`, err: "NUL"},
		{in: `echo $'\x00'`, err: "NUL"},
		{in: `echo $'\u0000'`, err: "NUL"},
		{in: `echo $'\cA'`, err: `\c`},
		{in: `echo $'\ud800'`, err: "not a Unicode character"},
		{in: `echo $'\U00110000'`, err: "not a Unicode character"},
	} {
		got, err := Typed(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Typed(%q) = %q, %v; want an error mentioning %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("Typed(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// TestTypedInvertsCommand: what display.Command writes — bare words, single
// quotes, $'…' with escapes, invalid bytes — Typed reads back to the same
// argv, so a command shown to a person can be typed back as a rule.
func TestTypedInvertsCommand(t *testing.T) {
	rng := newRand(5)
	for i := 0; i < 3000; i++ {
		argv := randomArgv(rng, i%2 == 1)
		disp := display.Command(argv)
		got, err := Typed(disp)
		if err != nil {
			t.Fatalf("argv %q shown as %s: %v", argv, disp, err)
		}
		if !slices.Equal(got, argv) {
			t.Fatalf("argv %q shown as %s parses back as %q", argv, disp, got)
		}
	}
}

func FuzzTyped(f *testing.F) {
	for _, s := range []string{"git status", `a 'b c' "d" $'\x1b'`, "ls | wc", "echo $HOME", strings.Repeat("x ", 50), bypassCmdSubst} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		argv, err := Typed(line)
		if err != nil || len(argv) == 0 {
			return
		}
		// Whatever parses is shown in a form that parses to the same argv.
		back, err := Typed(display.Command(argv))
		if err != nil || !slices.Equal(back, argv) {
			t.Fatalf("%q parses to %q, shown as %s, which parses to %q (%v)", line, argv, display.Command(argv), back, err)
		}
		// And the agent reading accepts nothing Typed refuses.
		if a, err := AgentCommand(line); err == nil && !slices.Equal(a, argv) {
			t.Fatalf("%q: AgentCommand %q, Typed %q", line, a, argv)
		}
	})
}
