package cli

import (
	"bytes"
	"github.com/agentgate/agentgate/agentbridge/audit"
	"os"
	"strings"
	"testing"
)

func TestAllowCheckListAndTerminalRequired(t *testing.T) {
	s := newCLISandbox(t, "# mine\ngit status\n")
	var out, errOut bytes.Buffer
	e := s.env(&out, &errOut)
	if code := dispatch([]string{"allow", "check", "--", "git", "status", "-s"}, e); code != 0 {
		t.Fatalf("check allowed: exit %d: %s%s", code, out.String(), errOut.String())
	}
	if want := "rule «git status» (global, " + s.paths.GlobalFile() + ":2)"; !strings.Contains(out.String(), want) {
		t.Errorf("check output %q lacks %q", out.String(), want)
	}
	out.Reset()
	if code := dispatch([]string{"allow", "check", "--", "git", "push"}, e); code != 1 || !strings.Contains(out.String(), "    git push\n") {
		t.Errorf("check not allowed: exit %d: %s", code, out.String())
	}
	out.Reset()
	if code := dispatch([]string{"allow", "list"}, e); code != 0 || !strings.Contains(out.String(), "     2  git status") {
		t.Errorf("list: exit %d:\n%s%s", code, out.String(), errOut.String())
	}
	for _, sub := range []string{"add", "rm"} {
		errOut.Reset()
		if code := dispatch([]string{"allow", sub, "--", "rm", "-rf"}, e); code != 2 || !strings.Contains(errOut.String(), "terminal") {
			t.Errorf("%s without a terminal: exit %d: %s", sub, code, errOut.String())
		}
	}
	if code := dispatch([]string{"allow", "trust"}, e); code != 2 {
		t.Errorf("trust without a terminal: exit %d", code)
	}
	if b, _ := os.ReadFile(s.paths.GlobalFile()); string(b) != "# mine\ngit status\n" {
		t.Errorf("the list changed without a terminal: %q", b)
	}
}

func TestAllowAddRemoveAtTerminal(t *testing.T) {
	s := newCLISandbox(t, "")
	var out, errOut bytes.Buffer
	e := s.env(&out, &errOut)
	e.stdinIsTerminal = func() bool { return true }
	e.stdin = strings.NewReader("")
	if code := dispatch([]string{"allow", "add", "--", "go", "test"}, e); code != 0 {
		t.Fatalf("add: exit %d: %s", code, errOut.String())
	}
	e.stdin = strings.NewReader("n\n")
	if code := dispatch([]string{"allow", "add", "--", "python3"}, e); code != 1 || !strings.Contains(out.String(), "arbitrary code") {
		t.Errorf("add launcher declined: exit %d: %s", code, out.String())
	}
	if b, _ := os.ReadFile(s.paths.GlobalFile()); string(b) != "go test\n" {
		t.Errorf("list %q", b)
	}
	if code := dispatch([]string{"allow", "rm", "--", "go", "test"}, e); code != 0 {
		t.Errorf("rm: exit %d: %s", code, errOut.String())
	}
	if b, _ := os.ReadFile(s.paths.GlobalFile()); string(b) != "" {
		t.Errorf("after rm: %q", b)
	}
}

func TestLogShowsEntries(t *testing.T) {
	s := newCLISandbox(t, "")
	if code, _, stderr := runCLI(t, s, "run", "--", s.trueProgram(t)); code != 0 {
		t.Fatalf("run: %d %s", code, stderr)
	}
	var out, errOut bytes.Buffer
	if code := dispatch([]string{"log"}, s.env(&out, &errOut)); code != 0 {
		t.Fatalf("log: %d %s", code, errOut.String())
	}
	for _, want := range []string{"proposal", "allowed_by_rule", "run_start", "run_end", "run_changes", "created=0 modified=0 deleted=0", "[cli]"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if code := dispatch([]string{"log", "--json", "-n", "1"}, s.env(&out, &errOut)); code != 0 || strings.Count(out.String(), "\n") != 1 || !strings.Contains(out.String(), `"kind":"run_changes"`) {
		t.Errorf("log --json -n 1: %d %q", code, out.String())
	}
}

// TestAllowTrustAtATerminal: project rules written outside agentgate stay
// inactive until a person confirms them at a terminal; a "no" changes
// nothing, a "yes" activates exactly the rules shown.
func TestAllowTrustAtATerminal(t *testing.T) {
	s := newCLISandbox(t, "")
	if err := os.MkdirAll(s.project+"/.agentgate", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.project+"/.agentgate/allow.list", []byte("make test\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	check := func() int {
		var out, errOut bytes.Buffer
		return dispatch([]string{"allow", "check", "--", "make", "test"}, s.env(&out, &errOut))
	}
	if code := check(); code != 1 {
		t.Fatalf("an unconfirmed project rule allowed the command (exit %d)", code)
	}
	trust := func(answer string) (int, string) {
		var out, errOut bytes.Buffer
		e := s.env(&out, &errOut)
		e.stdin = strings.NewReader(answer)
		e.stdinIsTerminal = func() bool { return true }
		code := dispatch([]string{"allow", "trust"}, e)
		return code, out.String() + errOut.String()
	}
	if code, out := trust("n\n"); code != 1 || !strings.Contains(out, "make test") || !strings.Contains(out, "Nothing changed") {
		t.Fatalf("trust, answered no: exit %d: %s", code, out)
	}
	if code := check(); code != 1 {
		t.Fatalf("after a no, the rule allowed the command (exit %d)", code)
	}
	if code, out := trust("y\n"); code != 0 || !strings.Contains(out, "Confirmed") {
		t.Fatalf("trust, answered yes: exit %d: %s", code, out)
	}
	if code := check(); code != 0 {
		t.Fatalf("after a yes, the rule does not allow the command (exit %d)", code)
	}
}

// TestAllowCheckExplainsTheGuard: `allow check` names the rule that matches,
// each finding of the argument guard, and what would let the command run
// unattended (only the exact command; nothing for sudo).
func TestAllowCheckExplainsTheGuard(t *testing.T) {
	s := newCLISandbox(t, "git diff\nsudo\n")
	var out, errOut bytes.Buffer
	e := s.env(&out, &errOut)
	if code := dispatch([]string{"allow", "check", "--", "git", "diff", "--stat"}, e); code != 0 {
		t.Fatalf("everyday git diff --stat: exit %d: %s", code, out.String())
	}
	out.Reset()
	code := dispatch([]string{"allow", "check", "--", "git", "diff", "--output=/tmp/x"}, e)
	for _, want := range []string{"not allowed unattended: rule «git diff»", "--output=/tmp/x (argument 2): writes the diff to a file anywhere",
		"only the exact command would allow it", "git diff --output=/tmp/x\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("check output %q lacks %q", out.String(), want)
		}
	}
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	out.Reset()
	if code := dispatch([]string{"allow", "check", "--", "sudo", "ls"}, e); code != 1 || !strings.Contains(out.String(), "no rule lets it run unattended") {
		t.Errorf("sudo: exit %d: %s", code, out.String())
	}
}

// TestTerminalOutputEscapesWhatAgentsWrote: a project rule carrying a
// terminal escape sequence and a carriage return (which made `allow trust`
// show `printf hello` while the person confirmed `sh -c {touch …}`) is
// shown escaped by allow trust and allow list, and so is an audit message
// in agentgate log: no raw control character reaches the terminal.
func TestTerminalOutputEscapesWhatAgentsWrote(t *testing.T) {
	s := newCLISandbox(t, "")
	if err := os.MkdirAll(s.project+"/.agentgate", 0o755); err != nil {
		t.Fatal(err)
	}
	line := "sh -c {touch /tmp/pwned\x1b[2K\rprintf hello}\n"
	if err := os.WriteFile(s.project+"/.agentgate/allow.list", []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	clean := func(what, out string) {
		t.Helper()
		if strings.ContainsAny(out, "\x1b\r") {
			t.Errorf("%s printed a raw control character: %q", what, out)
		}
		if !strings.Contains(out, `pwned\x1b\[2K\rprintf`) {
			t.Errorf("%s does not show the rule escaped: %q", what, out)
		}
	}
	var out, errOut bytes.Buffer
	e := s.env(&out, &errOut)
	e.stdin = strings.NewReader("n\n")
	e.stdinIsTerminal = func() bool { return true }
	dispatch([]string{"allow", "trust"}, e)
	clean("allow trust", out.String()+errOut.String())
	out.Reset()
	dispatch([]string{"allow", "list"}, s.env(&out, &errOut))
	clean("allow list", out.String())

	log, err := audit.Open(audit.Path(s.paths.StateDir), audit.Options{Host: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if err := log.Append(audit.Entry{Kind: audit.KindRefusal, Message: "\x1b[2K\rall fine", Argv: []string{"echo", "\u202eevil"}}); err != nil {
		t.Fatal(err)
	}
	log.Close()
	out.Reset()
	dispatch([]string{"log"}, s.env(&out, &errOut))
	if got := out.String(); strings.ContainsAny(got, "\x1b\r\u202e") || !strings.Contains(got, `\x1b[2K\rall fine`) || !strings.Contains(got, `\u202eevil`) {
		t.Errorf("agentgate log: %q", got)
	}
}

func TestTermWriter(t *testing.T) {
	var b bytes.Buffer
	w := termWriter{&b}
	n, err := w.Write([]byte("a\tb\nc\x1b[31md\u202ee\r\xff\n"))
	if err != nil || n != 18 {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if want := "a\tb\nc\\x1b[31md\\u202ee\\r\\xff\n"; b.String() != want {
		t.Errorf("wrote %q, want %q", b.String(), want)
	}
}
