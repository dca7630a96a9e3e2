//go:build linux

package cli

import (
	"bytes"
	"errors"
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/agentgate/agentgate/exec"
)

// eventually is generous: the machine is shared and slow.
const eventually = 10 * time.Second

const runRules = "true\nfalse\nsleep\nsh -c\nprintf\n"

func TestRunExitCodes(t *testing.T) {
	s := newCLISandbox(t, runRules)
	code, _, stderr := runCLI(t, s, "run", "--", "true")
	if code != exitOK {
		t.Errorf("true: exit %d (%s)", code, stderr)
	}
	code, _, stderr = runCLI(t, s, "run", "--", "false")
	if code != exitFailed || !strings.Contains(stderr, "exited with code 1") {
		t.Errorf("false: exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = runCLI(t, s, "run", "--timeout", "300ms", "--", "sleep", "30")
	if code != exitFailed || !strings.Contains(stderr, "timed out") {
		t.Errorf("sleep past timeout: exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = runCLI(t, s, "run", "--", "definitely-not-a-program-xyz")
	if code != exitDeclined || !strings.Contains(stderr, "executable_not_found") {
		t.Errorf("missing program: exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = runCLI(t, s, "run", "--timeout", "11m", "--", "true")
	if code != exitDeclined || !strings.Contains(stderr, "timeout_out_of_range") {
		t.Errorf("timeout 11m: exit %d, stderr %q", code, stderr)
	}
	code, _, _ = runCLI(t, s, "run")
	if code != exitDeclined {
		t.Errorf("no argv: exit %d", code)
	}
}

func TestRunStreamsOutput(t *testing.T) {
	s := newCLISandbox(t, runRules)
	code, stdout, stderr := runCLI(t, s, "run", "--", "sh", "-c", "printf out; printf err >&2; exit 3")
	if code != exitFailed || stdout != "out" || !strings.Contains(stderr, "err") || !strings.Contains(stderr, "exited with code 3") {
		t.Errorf("exit %d stdout %q stderr %q", code, stdout, stderr)
	}
}

func TestRunRefusedWithoutTerminalStartsNothing(t *testing.T) {
	s := newCLISandbox(t, runRules)
	marker := filepath.Join(s.home, "marker")
	code, _, stderr := runCLI(t, s, "run", "--", "touch", marker)
	if code != exitDeclined {
		t.Fatalf("exit %d, want 2 (stderr %s)", code, stderr)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("the marker exists: the refused command ran")
	}
	wantLine := "touch " + marker
	if !strings.Contains(stderr, s.paths.GlobalFile()) || !strings.Contains(stderr, "\n    "+wantLine+"\n") {
		t.Errorf("stderr does not name %s and the line %q:\n%s", s.paths.GlobalFile(), wantLine, stderr)
	}
	recs, _ := exec.ListRecords(s.paths.StateDir)
	for _, r := range recs {
		if len(r.Argv) > 0 && r.Argv[0] == "touch" {
			t.Errorf("a run record exists for the refused command: %+v", r)
		}
	}
}

// ptySession runs agentgate in a pty and collects what it prints.
type ptySession struct {
	cmd  *osexec.Cmd
	tty  *os.File
	mu   sync.Mutex
	out  bytes.Buffer
	done chan struct{}
}

func startPTY(t *testing.T, s *cliSandbox, args ...string) *ptySession {
	t.Helper()
	cmd := s.command(t, args...)
	tty, err := pty.Start(cmd)
	if err != nil {
		t.Fatalf("pty: %v", err)
	}
	p := &ptySession{cmd: cmd, tty: tty, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		buf := make([]byte, 4096)
		for {
			n, err := tty.Read(buf)
			p.mu.Lock()
			p.out.Write(buf[:n])
			p.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		tty.Close()
	})
	return p
}

func (p *ptySession) waitFor(t *testing.T, text string) {
	t.Helper()
	deadline := time.Now().Add(eventually)
	for time.Now().Before(deadline) {
		p.mu.Lock()
		ok := strings.Contains(p.out.String(), text)
		p.mu.Unlock()
		if ok {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	t.Fatalf("no %q in the terminal within %s:\n%s", text, eventually, p.out.String())
}

// answerUntil sends line and waits for want to appear after it, sending
// the line again (a few times) when want does not follow: the prompt
// discards a line typed before its question was shown, and on a busy
// machine the line can arrive just before that.
func (p *ptySession) answerUntil(t *testing.T, line, want string) {
	t.Helper()
	p.mu.Lock()
	from := p.out.Len()
	p.mu.Unlock()
	for attempt := 0; attempt < 5; attempt++ {
		p.send(t, line)
		deadline := time.Now().Add(eventually / 5)
		for time.Now().Before(deadline) {
			p.mu.Lock()
			ok := strings.Contains(p.out.String()[from:], want)
			p.mu.Unlock()
			if ok {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	t.Fatalf("no %q in the terminal after answering %q:\n%s", want, line, p.out.String())
}

func (p *ptySession) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(p.tty, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

func (p *ptySession) exitCode(t *testing.T) int {
	t.Helper()
	err := p.cmd.Wait()
	<-p.done
	var exitErr *osexec.ExitError
	if errors.As(err, &exitErr) {
		return exitErr.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}

func TestRunPromptOnce(t *testing.T) {
	s := newCLISandbox(t, runRules)
	marker := filepath.Join(s.home, "once")
	p := startPTY(t, s, "run", "--", "touch", marker)
	p.waitFor(t, "Run it?")
	p.waitFor(t, "touch "+marker)
	p.send(t, "o")
	if code := p.exitCode(t); code != exitOK {
		t.Fatalf("exit %d:\n%s", code, p.out.String())
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("approved once, but the marker is missing: %v", err)
	}
	if rules, _ := os.ReadFile(s.paths.GlobalFile()); strings.Contains(string(rules), "touch") {
		t.Errorf("approve once wrote a rule: %s", rules)
	}
}

func TestRunPromptDeny(t *testing.T) {
	s := newCLISandbox(t, runRules)
	marker := filepath.Join(s.home, "denied")
	p := startPTY(t, s, "run", "--", "touch", marker)
	p.waitFor(t, "Run it?")
	p.send(t, "d")
	if code := p.exitCode(t); code != exitDeclined {
		t.Fatalf("exit %d, want 2:\n%s", code, p.out.String())
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Errorf("denied, but the marker exists")
	}
}

func TestRunPromptAlwaysAllowExact(t *testing.T) {
	s := newCLISandbox(t, runRules)
	marker := filepath.Join(s.home, "always")
	p := startPTY(t, s, "run", "--", "touch", marker)
	p.waitFor(t, "Run it?")
	p.send(t, "e")
	p.waitFor(t, "in which list?")
	p.send(t, "g")
	if code := p.exitCode(t); code != exitOK {
		t.Fatalf("exit %d:\n%s", code, p.out.String())
	}
	rules, _ := os.ReadFile(s.paths.GlobalFile())
	if !strings.Contains(string(rules), "touch "+marker+"\n") {
		t.Errorf("rule not written; global list:\n%s", rules)
	}
	// Now allowed unattended.
	os.Remove(marker)
	if code, _, stderr := runCLI(t, s, "run", "--", "touch", marker); code != exitOK {
		t.Errorf("after always allow: exit %d (%s)", code, stderr)
	}
}

func TestRunPromptAlwaysAllowProgramLauncherWarning(t *testing.T) {
	s2 := newCLISandbox(t, runRules)
	q := startPTY(t, s2, "run", "--provider", "tester", "--", "env", "true")
	q.waitFor(t, "Run it?")
	q.send(t, "p")
	q.waitFor(t, "can run arbitrary code")
	q.send(t, "y")
	q.waitFor(t, "pro[v]ider tester")
	q.send(t, "v")
	if code := q.exitCode(t); code != exitOK {
		t.Fatalf("exit %d:\n%s", code, q.out.String())
	}
	file, _ := s2.paths.ProviderFile("tester")
	if rules, err := os.ReadFile(file); err != nil || string(rules) != "env\n" {
		t.Errorf("provider list %s: %q, %v", file, rules, err)
	}
}

func TestRunSignalKillsTree(t *testing.T) {
	s := newCLISandbox(t, runRules)
	pidFile := filepath.Join(s.home, "grandchild.pid")
	cmd := s.command(t, "run", "--", "sh", "-c", "sleep 300 & echo $! > "+pidFile+"; wait")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := waitForPIDFile(t, pidFile)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var exitErr *osexec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != exitFailed {
		t.Fatalf("after SIGINT: %v, want exit 1 (stderr %s)", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "cancelled") {
		t.Errorf("stderr %q does not say cancelled", stderr.String())
	}
	waitGone(t, pid)
}

func TestRunRecordedAndCancelledFromAnotherProcess(t *testing.T) {
	s := newCLISandbox(t, runRules)
	cmd := s.command(t, "run", "--", "sleep", "300")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var rec exec.Record
	deadline := time.Now().Add(eventually)
	for rec.ID == "" && time.Now().Before(deadline) {
		recs, _ := exec.ListRecords(s.paths.StateDir)
		for _, r := range recs {
			if r.State == exec.StateRunning && len(r.Argv) == 2 && r.Argv[0] == "sleep" {
				rec = r
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if rec.ID == "" {
		t.Fatalf("no running record for sleep 300 (stderr %s)", stderr.String())
	}
	if rec.HostKind != exec.HostCLI || rec.HostPID != cmd.Process.Pid {
		t.Errorf("record host %q pid %d, want cli and %d", rec.HostKind, rec.HostPID, cmd.Process.Pid)
	}
	// `agentgate ps` lists it; `agentgate cancel ID` from this process ends it.
	var out, errOut bytes.Buffer
	if code := dispatch([]string{"ps"}, s.env(&out, &errOut)); code != 0 || !strings.Contains(out.String(), rec.ID) || !strings.Contains(out.String(), "cli") {
		t.Errorf("ps: exit %d:\n%s%s", code, out.String(), errOut.String())
	}
	out.Reset()
	if code := dispatch([]string{"cancel", rec.ID}, s.env(&out, &errOut)); code != 0 || !strings.Contains(out.String(), "cancelled") {
		t.Errorf("cancel: exit %d: %s%s", code, out.String(), errOut.String())
	}
	err := cmd.Wait()
	var exitErr *osexec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != exitFailed {
		t.Errorf("run after cancel: %v, want exit 1 (stderr %s)", err, stderr.String())
	}
}

func waitForPIDFile(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(eventually)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err == nil {
				return pid
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no pid in %s", path)
	return 0
}

// waitGone waits until pid no longer runs (gone, or a zombie).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(eventually)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return
		}
		if f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:])); len(f) > 0 && f[0] == "Z" {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("process %d still runs %s after the signal", pid, eventually)
}

// TestRunConfinedToTheCurrentProject: the project of `agentgate run` is the
// current directory's, so --cwd cannot leave it — by "..", an absolute
// path, a symbolic link out or a path through the project and out again —
// and nothing runs; a --cwd inside it runs there.
func TestRunConfinedToTheCurrentProject(t *testing.T) {
	s := newCLISandbox(t, "pwd\ntouch\n")
	outside := t.TempDir()
	if err := os.MkdirAll(filepath.Join(s.project, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(s.project, "out")); err != nil {
		t.Fatal(err)
	}
	for _, cwd := range []string{"..", outside, "/tmp", "out", "sub/../../", "sub/../out", filepath.Join(s.project, "out")} {
		code, stdout, stderr := runCLI(t, s, "run", "--cwd", cwd, "--", "touch", "ran-here")
		if code != exitDeclined || !strings.Contains(stderr, "cwd_outside_project") {
			t.Errorf("--cwd %s: exit %d, stdout %q, stderr %q; want 2 and cwd_outside_project", cwd, code, stdout, stderr)
		}
	}
	for _, dir := range []string{outside, filepath.Dir(s.project), "/tmp"} {
		if _, err := os.Stat(filepath.Join(dir, "ran-here")); err == nil {
			t.Errorf("a refused run ran in %s", dir)
			os.Remove(filepath.Join(dir, "ran-here"))
		}
	}
	code, stdout, stderr := runCLI(t, s, "run", "--cwd", "sub", "--", "pwd")
	if code != exitOK || strings.TrimSpace(stdout) != filepath.Join(s.project, "sub") {
		t.Errorf("--cwd sub: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// TestRunTimeoutRange: --timeout ≤ 0 or above 10 minutes is refused with
// the range (exit 2), before anything runs.
func TestRunTimeoutRange(t *testing.T) {
	s := newCLISandbox(t, "touch\n")
	marker := filepath.Join(s.project, "ran")
	for _, d := range []string{"0s", "0", "-1s", "500us", "601s", "11m"} {
		code, _, stderr := runCLI(t, s, "run", "--timeout", d, "--", "touch", marker)
		if code != exitDeclined || !strings.Contains(stderr, "timeout_out_of_range") || !strings.Contains(stderr, "600000") {
			t.Errorf("--timeout %s: exit %d, stderr %q; want 2, timeout_out_of_range and the range", d, code, stderr)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a run with a refused timeout ran")
	}
	if code, _, stderr := runCLI(t, s, "run", "--timeout", "600s", "--", "touch", marker); code != exitOK {
		t.Errorf("--timeout 600s: exit %d, %s", code, stderr)
	}
}

// TestRunGuardRefusedWithoutTerminal: a rule-matched command with a
// dangerous argument is refused unattended, naming the rule and the
// argument, and nothing is written.
func TestRunGuardRefusedWithoutTerminal(t *testing.T) {
	s := newCLISandbox(t, runRules+"sort\n")
	os.WriteFile(filepath.Join(s.project, "in.txt"), []byte("b\na\n"), 0o600)
	outside := filepath.Join(s.home, "written")
	code, _, stderr := runCLI(t, s, "run", "--", "sort", "-o", outside, "in.txt")
	if code != exitDeclined {
		t.Fatalf("exit %d, want 2 (stderr %s)", code, stderr)
	}
	for _, want := range []string{"rule «sort»", "argument guard", "-o " + outside + " (argument 1): writes the sorted output", "Nothing was started"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if _, err := os.Stat(outside); !os.IsNotExist(err) {
		t.Fatal("sort -o wrote its file")
	}
	if code, stdout, stderr := runCLI(t, s, "run", "--", "sort", "-u", "in.txt"); code != exitOK || stdout != "a\nb\n" {
		t.Errorf("everyday sort -u: exit %d %q %s", code, stdout, stderr)
	}
}

// TestRunPromptGuardOffersOnlyTheExactCommand: at the terminal the person
// sees the rule and the finding; the program is not offered as a rule, the
// exact command is, with a warning; afterwards that exact command runs
// unattended and a different output file does not.
func TestRunPromptGuardOffersOnlyTheExactCommand(t *testing.T) {
	s := newCLISandbox(t, runRules+"sort\n")
	os.WriteFile(filepath.Join(s.project, "in.txt"), []byte("b\na\n"), 0o600)
	p := startPTY(t, s, "run", "--", "sort", "-o", "out.txt", "in.txt")
	p.waitFor(t, "the argument guard stopped it")
	p.waitFor(t, "writes the sorted output to a file anywhere")
	p.waitFor(t, "always allow the [e]xact command (these arguments only)")
	p.answerUntil(t, "p", "would not allow these arguments")
	p.answerUntil(t, "e", "Warning: this command writes the sorted output")
	p.answerUntil(t, "y", "in which list?")
	p.send(t, "g")
	if code := p.exitCode(t); code != exitOK {
		t.Fatalf("exit %d:\n%s", code, p.out.String())
	}
	if b, _ := os.ReadFile(filepath.Join(s.project, "out.txt")); string(b) != "a\nb\n" {
		t.Fatalf("out.txt = %q", b)
	}
	if code, _, stderr := runCLI(t, s, "run", "--", "sort", "-o", "out.txt", "in.txt"); code != exitOK {
		t.Errorf("the exact command after always allow: exit %d (%s)", code, stderr)
	}
	if code, _, _ := runCLI(t, s, "run", "--", "sort", "-o", "other.txt", "in.txt"); code != exitDeclined {
		t.Errorf("another output file ran unattended: exit %d", code)
	}
}

// TestRunSaysConfinementAndProtectedChanges: `agentgate run` says how the
// run is confined when it starts, and says loudly when it changed a file
// that steers agents and tools.
func TestRunSaysConfinementAndProtectedChanges(t *testing.T) {
	s := newCLISandbox(t, runRules)
	code, _, stderr := runCLI(t, s, "run", "--", "sh", "-c", "echo {} > .mcp.json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "started (sh -c 'echo {} > .mcp.json') — writes: ") {
		t.Errorf("the start line does not say how the run is confined:\n%s", stderr)
	}
	if !strings.Contains(stderr, "changed files that steer agents and tools; look at them before the next agent session: created .mcp.json") {
		t.Errorf("the created .mcp.json was not reported:\n%s", stderr)
	}
}
