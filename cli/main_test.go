package cli

import (
	"bytes"
	"errors"
	"os"
	osexec "os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/exec/changes"
	"github.com/agentgate/agentgate/prefs"
	"github.com/agentgate/agentgate/unixpg"
)

// asCLIEnv makes the test binary act as the agentgate binary (Main on its
// arguments), so tests run `agentgate run` as a real process, in a pty.
const asCLIEnv = "AGENTGATE_TEST_AS_CLI"

// trueStandIn is the name under which the test binary acts as `true` (exit
// 0 at once): Windows has no true (see trueProgram).
const trueStandIn = "true.exe"

func TestMain(m *testing.M) {
	if self, err := os.Executable(); err == nil && strings.EqualFold(filepath.Base(self), trueStandIn) {
		os.Exit(0)
	}
	unixpg.MaybeSupervise()
	if os.Getenv(asCLIEnv) == "1" {
		os.Exit(Main(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// cliSandbox is a home with its own XDG directories, a project (a git work
// tree) and a global allow-list.
type cliSandbox struct {
	home, project string
	paths         prefs.Paths
	environ       []string
}

func newCLISandbox(t *testing.T, globalRules string) *cliSandbox {
	t.Helper()
	home := t.TempDir()
	s := &cliSandbox{home: home, project: filepath.Join(home, "project")}
	if err := os.MkdirAll(filepath.Join(s.project, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	s.project, _ = filepath.EvalSymlinks(s.project)
	s.paths = prefs.Paths{ConfigDir: filepath.Join(home, "config", "agentgate"), StateDir: filepath.Join(home, "state", "agentgate")}
	// Hosts of this sandbox share a change keeper process; it ends before
	// the home is removed.
	t.Cleanup(func() { changes.StopKeeper(s.paths.StateDir) })
	if err := os.MkdirAll(s.paths.ConfigDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.paths.GlobalFile(), []byte(globalRules), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "XDG_") || strings.HasPrefix(kv, "AGENTGATE_") || strings.HasPrefix(kv, "HOME=") {
			continue
		}
		s.environ = append(s.environ, kv)
	}
	s.environ = append(s.environ, "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, "config"),
		"XDG_STATE_HOME="+filepath.Join(home, "state"), "XDG_RUNTIME_DIR="+filepath.Join(home, "run"),
		"AGENTGATE_SOCKET="+filepath.Join(home, "no-app.sock"), asCLIEnv+"=1")
	return s
}

// trueProgram returns argv[0] of a program that exits 0 at once and adds
// the rule allowing it to the sandbox's global list. On Unix that is
// `true`. Windows has no true: there it is a copy of the test binary named
// true.exe (see TestMain), by its absolute path, since runs get the
// person's login PATH, not the sandbox's.
func (s *cliSandbox) trueProgram(t *testing.T) string {
	t.Helper()
	prog := "true"
	if runtime.GOOS == "windows" {
		self, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(self)
		if err != nil {
			t.Fatal(err)
		}
		prog = filepath.Join(s.home, trueStandIn)
		if err := os.WriteFile(prog, data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.OpenFile(s.paths.GlobalFile(), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(prefs.FormatList([]string{prog}) + "\n"); err != nil {
		t.Fatal(err)
	}
	return prog
}

// command returns the test binary as `agentgate args…`, in the project.
func (s *cliSandbox) command(t *testing.T, args ...string) *osexec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := osexec.Command(exe, args...)
	cmd.Env = s.environ
	cmd.Dir = s.project
	return cmd
}

// env is an in-process env over the sandbox, with no terminal.
func (s *cliSandbox) env(stdout, stderr *bytes.Buffer) env {
	e := defaultEnv()
	e.stdin = strings.NewReader("")
	e.stdout, e.stderr = stdout, stderr
	e.stdinIsTerminal = func() bool { return false }
	e.paths = s.paths
	e.cwd = s.project
	e.home = s.home
	e.socket = filepath.Join(s.home, "no-app.sock")
	return e
}

// runCLI runs the test binary as agentgate with stdin on /dev/null and
// returns the exit code, stdout and stderr.
func runCLI(t *testing.T, s *cliSandbox, args ...string) (int, string, string) {
	t.Helper()
	cmd := s.command(t, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exitErr *osexec.ExitError
	switch {
	case err == nil:
		return 0, stdout.String(), stderr.String()
	case errors.As(err, &exitErr):
		return exitErr.ExitCode(), stdout.String(), stderr.String()
	}
	t.Fatalf("agentgate %q: %v", args, err)
	return 0, "", ""
}
