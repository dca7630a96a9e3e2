//go:build linux

package agente2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/agentgate/agentgate/agentbridge/client"
	"github.com/agentgate/agentgate/prefs/agents"
)

// The end-to-end tests need npm (to install the pinned agent CLIs once,
// into a cache outside the clone) and loopback; the card cases need a
// display and xdotool (make test-agents runs them under a private Xvfb),
// the TUI cases tmux.

// runTimeout bounds one agent run: the agents are Node.js or Rust programs
// that take seconds, more on a loaded two-core machine.
const runTimeout = 4 * time.Minute

// harness is what TestMain prepared for every test.
var harness struct {
	// binDir holds agentgate and agentgate-hook, built from this tree.
	binDir string
	// cliBin maps an agent to the directory holding its installed program.
	cliBin map[string]string
	// cliErr maps an agent to why it could not be installed.
	cliErr map[string]error
	// nodeDir is the directory holding node, for the agents' PATH.
	nodeDir string
	// buildErr says why agentgate could not be built.
	buildErr error
}

var writeTable = flag.Bool("write-table", false, "rewrite the table in docs/integrations.md from this run")

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		// -short: no npm installs, no builds; every case skips.
		os.Exit(m.Run())
	}
	code := func() int {
		tmp, err := os.MkdirTemp("", "agente2e-bin-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(tmp)
		harness.binDir = tmp
		harness.buildErr = buildAgentgate(tmp)
		harness.cliBin, harness.cliErr = map[string]string{}, map[string]error{}
		if node, err := osexec.LookPath("node"); err == nil {
			harness.nodeDir = filepath.Dir(node)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		for _, a := range agents.Known {
			wg.Add(1)
			go func() {
				defer wg.Done()
				dir, err := installCLI(a)
				mu.Lock()
				defer mu.Unlock()
				harness.cliBin[a.Name], harness.cliErr[a.Name] = dir, err
			}()
		}
		wg.Wait()
		code := m.Run()
		fmt.Printf("What the agents did in this run:\n%s", renderTable())
		if code == 0 {
			if err := checkTable(*writeTable); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
		}
		return code
	}()
	os.Exit(code)
}

// buildAgentgate builds agentgate (with the desktop app) and the lean
// agentgate-hook into dir.
func buildAgentgate(dir string) error {
	for _, b := range []struct {
		out  string
		args []string
		env  []string
	}{
		{"agentgate", []string{"build", "-tags", "migrated_fynedo", "-o", filepath.Join(dir, "agentgate"), "../.."}, nil},
		{"agentgate-hook", []string{"build", "-o", filepath.Join(dir, "agentgate-hook"), "../../cmd/agentgate-hook"}, []string{"CGO_ENABLED=0"}},
	} {
		cmd := osexec.Command("go", b.args...)
		cmd.Env = append(os.Environ(), b.env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("building %s: %v\n%s", b.out, err, out)
		}
	}
	return nil
}

// cacheDir is where the pinned agent CLIs are installed, outside the clone
// and kept between runs: ${XDG_CACHE_HOME:-$HOME/.cache}/agentgate-test/npm.
func cacheDir() (string, error) {
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "agentgate-test", "npm"), nil
}

// installCLI installs agent a's newest tested version from npm into the
// cache (once: a later run finds it there), under a lock so that parallel
// test runs do not install over each other, and returns the directory
// holding its program.
func installCLI(a agents.Agent) (string, error) {
	root, err := cacheDir()
	if err != nil {
		return "", err
	}
	version := a.NewestTested()
	dir := filepath.Join(root, a.Name+"-"+version)
	bin := filepath.Join(dir, "node_modules", ".bin")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", err
	}
	lock := flock.New(dir + ".lock")
	if err := lock.Lock(); err != nil {
		return "", fmt.Errorf("locking %s: %w", dir, err)
	}
	defer lock.Close()
	if installedVersion(filepath.Join(bin, a.Program)) == version {
		return bin, nil
	}
	npm, err := osexec.LookPath("npm")
	if err != nil {
		return "", fmt.Errorf("npm is not installed (make test installs node and npm): %w", err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := osexec.CommandContext(ctx, npm, "install", "--no-audit", "--no-fund", "--no-save", "--loglevel=error",
		"--prefix", dir, a.Package+"@"+version)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("npm install %s@%s: %v\n%s", a.Package, version, err, out)
	}
	if got := installedVersion(filepath.Join(bin, a.Program)); got != version {
		return "", fmt.Errorf("npm installed %s@%s, but %s --version says %q", a.Package, version, a.Program, got)
	}
	return bin, nil
}

// installedVersion returns the version program prints ("" when it cannot
// be run).
func installedVersion(program string) string {
	ctx, cancel := context.WithTimeout(context.Background(), agents.VersionTimeout)
	defer cancel()
	cmd := osexec.CommandContext(ctx, program, "--version")
	cmd.Env = append(os.Environ(), "DISABLE_AUTOUPDATER=1")
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return agents.ParseVersion(string(out))
}

// requireAgent fails the test when the agent could not be installed or
// agentgate could not be built, since `make test` promises these cases
// run; only -short skips them.
func requireAgent(t *testing.T, agent string) {
	t.Helper()
	if testing.Short() {
		skipCase(t, "-short: the real agent CLIs run in `make test-agents`")
	}
	if harness.buildErr != nil {
		t.Fatal(harness.buildErr)
	}
	if err := harness.cliErr[agent]; err != nil {
		t.Fatalf("installing %s: %v", agent, err)
	}
}

// requireDisplay skips a card case unless a display and xdotool are there
// (make test-agents runs the package under a private Xvfb).
func requireDisplay(t *testing.T) {
	t.Helper()
	if os.Getenv("DISPLAY") == "" {
		t.Skip("no DISPLAY: the card cases run under `make test-agents` (scripts/with-xvfb.sh)")
	}
	if _, err := osexec.LookPath("xdotool"); err != nil {
		t.Skip("xdotool is not installed (Debian package xdotool)")
	}
}

// sandbox is one test's private world: home, XDG directories, socket,
// project (a git work tree), allow-list, and fake model.
type sandbox struct {
	t *testing.T
	// agent is the agent under test.
	agent string
	// dir holds everything.
	dir string
	// home is $HOME.
	home string
	// config, state, runtime and cache are the XDG directories.
	config, state, runtime, cache string
	// project is the agent's working directory.
	project string
	// socket is AGENTGATE_SOCKET.
	socket string
	// model is the fake model server.
	model *FakeModel
	// layout is AGENTGATE_UI_LAYOUT_FILE for the app.
	layout string
}

// newSandbox makes a sandbox for agent whose fake model asks for script.
func newSandbox(t *testing.T, agent string, script Script) *sandbox {
	t.Helper()
	requireAgent(t, agent)
	dir := t.TempDir()
	s := &sandbox{t: t, agent: agent, dir: dir, home: filepath.Join(dir, "home"),
		config: filepath.Join(dir, "config"), state: filepath.Join(dir, "state"), runtime: filepath.Join(dir, "run"),
		cache: filepath.Join(dir, "cache"), project: filepath.Join(dir, "project"),
		socket: filepath.Join(dir, "run", "bridge.sock"), layout: filepath.Join(dir, "layout.json")}
	for _, d := range []string{s.home, s.config, s.state, s.runtime, s.cache, s.project} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := osexec.Command("git", "-C", s.project, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	m, err := StartFakeModel(script)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = m.Close()
		if t.Failed() {
			for _, e := range m.Exchanges() {
				t.Logf("model exchange: %s %s tools=%d called=%q result=%q", e.API, e.Path, len(e.Tools), e.Called, firstLine(e.Result))
			}
			if u := m.Unhandled(); len(u) > 0 {
				t.Logf("requests the fake model did not serve: %q", u)
			}
		}
	})
	s.model = m
	return s
}

// allow writes the global allow-list: one rule per line.
func (s *sandbox) allow(rules ...string) {
	s.t.Helper()
	dir := filepath.Join(s.config, "agentgate")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "allow.list"), []byte(strings.Join(rules, "\n")+"\n"), 0o600); err != nil {
		s.t.Fatal(err)
	}
}

// env is the environment every process in the sandbox gets: private home,
// XDG directories and socket, the agents' programs and node on PATH, and
// no way out but loopback (an HTTP(S) proxy that refuses, loopback
// excepted), so that nothing waits on the network.
func (s *sandbox) env(extra ...string) []string {
	path := []string{harness.cliBin[s.agent]}
	if harness.nodeDir != "" {
		path = append(path, harness.nodeDir)
	}
	path = append(path, "/usr/local/bin", "/usr/bin", "/bin")
	env := []string{
		"PATH=" + strings.Join(path, ":"), "HOME=" + s.home, "USER=" + os.Getenv("USER"), "LANG=C.UTF-8", "TERM=xterm-256color",
		"SHELL=/bin/bash", "TMPDIR=" + os.TempDir(),
		"XDG_CONFIG_HOME=" + s.config, "XDG_STATE_HOME=" + s.state, "XDG_RUNTIME_DIR=" + s.runtime,
		"XDG_CACHE_HOME=" + s.cache, "XDG_DATA_HOME=" + filepath.Join(s.dir, "data"),
		"AGENTGATE_SOCKET=" + s.socket,
		"HTTP_PROXY=http://127.0.0.1:9", "HTTPS_PROXY=http://127.0.0.1:9", "http_proxy=http://127.0.0.1:9",
		"https_proxy=http://127.0.0.1:9", "NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost",
		"DBUS_SESSION_BUS_ADDRESS=disabled:",
	}
	if d := os.Getenv("DISPLAY"); d != "" {
		env = append(env, "DISPLAY="+d)
	}
	return append(env, extra...)
}

// runSetup runs the real `agentgate setup AGENT` (answering y at its
// prompt, on a terminal that `script` provides) with env, and fails the
// test unless it wrote the settings.
func (s *sandbox) runSetup(env []string) string {
	s.t.Helper()
	agentgate := filepath.Join(harness.binDir, "agentgate")
	cmd := osexec.Command("script", "-qec", agentgate+" setup "+s.agent, "/dev/null")
	cmd.Env, cmd.Dir = env, s.project
	cmd.Stdin = strings.NewReader("y\n")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Wrote ") {
		s.t.Fatalf("agentgate setup %s: %v\n%s", s.agent, err, out)
	}
	return string(out)
}

// app is the real agentgate desktop app running in the sandbox.
type app struct {
	cmd *osexec.Cmd
	log string
}

// startApp starts the desktop app with the sandbox's directories and
// socket under the test's display, and waits for its bridge.
func (s *sandbox) startApp() *app {
	s.t.Helper()
	requireDisplay(s.t)
	a := &app{log: filepath.Join(s.dir, "app.log")}
	logf, err := os.Create(a.log)
	if err != nil {
		s.t.Fatal(err)
	}
	a.cmd = osexec.Command(filepath.Join(harness.binDir, "agentgate"))
	a.cmd.Env = s.env("AGENTGATE_UI_LAYOUT_FILE="+s.layout, "FYNE_THEME=light")
	a.cmd.Stdout, a.cmd.Stderr = logf, logf
	if err := a.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() {
		_ = a.cmd.Process.Kill()
		_ = a.cmd.Wait()
		logf.Close()
		if s.t.Failed() {
			data, _ := os.ReadFile(a.log)
			s.t.Logf("app log:\n%s", data)
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		c, err := client.Dial(s.socket)
		if err == nil {
			c.Close()
			return a
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("the app's bridge never answered: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// cardLayout is what the app writes to AGENTGATE_UI_LAYOUT_FILE when a card
// is armed (ui/cardview.go).
type cardLayout struct {
	ID      string `json:"id"`
	Deny    [2]int `json:"deny"`
	Approve [2]int `json:"approve"`
	Message [2]int `json:"message"`
}

// answerCard waits for an armed card, then approves it, or types message
// and denies it.
func (s *sandbox) answerCard(approve bool, message string, done <-chan struct{}) {
	s.t.Helper()
	var l cardLayout
	deadline := time.Now().Add(runTimeout)
	for {
		data, err := os.ReadFile(s.layout)
		if err == nil && json.Unmarshal(data, &l) == nil && l.ID != "" {
			break
		}
		select {
		case <-done:
			s.t.Fatalf("the agent ended before a card was shown")
		default:
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("no card was shown")
		}
		time.Sleep(100 * time.Millisecond)
	}
	out, err := osexec.Command("timeout", "20", "xdotool", "search", "--sync", "--onlyvisible", "--name", "approve a command").Output()
	if err != nil {
		s.t.Fatalf("no visible card window: %v", err)
	}
	wid := strings.Fields(string(out))[0]
	click := func(p [2]int) {
		xdo(s.t, "mousemove", "--window", wid, strconv.Itoa(p[0]), strconv.Itoa(p[1]))
		time.Sleep(100 * time.Millisecond)
		xdo(s.t, "click", "1")
	}
	if approve {
		click(l.Approve)
		return
	}
	if message != "" {
		click(l.Message)
		xdo(s.t, "type", "--delay", "20", message)
	}
	click(l.Deny)
}

// xdo runs xdotool.
func xdo(t *testing.T, args ...string) {
	t.Helper()
	if out, err := osexec.Command("xdotool", args...).CombinedOutput(); err != nil {
		t.Fatalf("xdotool %v: %v %s", args, err, out)
	}
}

// run is one finished agent run.
type run struct {
	// out and errOut are the agent's stdout and stderr.
	out, errOut string
	// err is how it ended.
	err error
}

// runAgent runs the agent's program with args in the project with env,
// bounded by runTimeout, while during (if any) acts on the side (answering
// a card); it returns when both are done.
func (s *sandbox) runAgent(env []string, args []string, during func(done <-chan struct{})) run {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	agent, _ := agents.Lookup(s.agent)
	cmd := osexec.CommandContext(ctx, filepath.Join(harness.cliBin[s.agent], agent.Program), args...)
	cmd.Env, cmd.Dir = env, s.project
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	// Its own process group, ended after the run: nothing the agent started
	// outlives the test.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	defer endGroup(cmd.Process.Pid)
	done := make(chan struct{})
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait(); close(done) }()
	if during != nil {
		during(done)
	}
	r := run{err: <-waited}
	r.out, r.errOut = stdout.String(), stderr.String()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		s.t.Fatalf("%s %q did not finish within %v\nstdout:\n%s\nstderr:\n%s", agent.Program, args, runTimeout, r.out, r.errOut)
	}
	return r
}

// endGroup ends the process group pgid, which a test started: SIGTERM,
// then SIGKILL to whatever is left after up to five seconds.
func endGroup(pgid int) {
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	for i := 0; i < 50 && groupAlive(pgid); i++ {
		time.Sleep(100 * time.Millisecond)
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	for i := 0; i < 50 && groupAlive(pgid); i++ {
		time.Sleep(100 * time.Millisecond)
	}
}

// endProcessesFrom SIGKILLs every process whose executable lies under dir
// (a test's own sandbox): what an agent left running after it detached
// from its process group — Codex starts an app-server daemon that does —
// was started by the test and must not outlive it.
func endProcessesFrom(dir string) {
	prefix := filepath.Clean(dir) + string(filepath.Separator)
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe")); err == nil && strings.HasPrefix(exe, prefix) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// groupAlive reports whether a process of group pgid is alive (a zombie,
// which may wait long for a reaper, is not).
func groupAlive(pgid int) bool {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp …; comm may hold spaces and parens.
		rest := string(data[strings.LastIndexByte(string(data), ')')+1:])
		f := strings.Fields(rest)
		if len(f) >= 3 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) {
			return true
		}
	}
	return false
}

// exists reports whether the project holds a file named name (the
// commands the fake model asks for create marker files).
func (s *sandbox) exists(name string) bool {
	_, err := os.Stat(filepath.Join(s.project, name))
	return err == nil
}

// lastResult returns the last tool result the model read ("" when none).
func (s *sandbox) lastResult() string {
	results := s.model.ToolResults()
	if len(results) == 0 {
		return ""
	}
	return results[len(results)-1]
}
