//go:build linux

package ui

import (
	"context"
	"net"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentgate/agentgate/agentbridge/audit"
	"github.com/agentgate/agentgate/agentbridge/client"
	"github.com/agentgate/agentgate/agentbridge/wire"
)

// privateEnv returns this process's environment with HOME, the XDG
// directories and the socket moved into dir, and without a display (unless
// display) or a D-Bus session bus address, plus extra.
func privateEnv(dir string, display bool, extra ...string) []string {
	drop := map[string]bool{"HOME": true, "XDG_CONFIG_HOME": true, "XDG_STATE_HOME": true, "XDG_DATA_HOME": true,
		"XDG_CACHE_HOME": true, "XDG_RUNTIME_DIR": true, "AGENTGATE_SOCKET": true, "DBUS_SESSION_BUS_ADDRESS": true,
		"WAYLAND_DISPLAY": true}
	if !display {
		drop["DISPLAY"] = true
	}
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !drop[k] {
			env = append(env, kv)
		}
	}
	env = append(env, "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, "config"), "XDG_STATE_HOME="+filepath.Join(dir, "state"),
		"XDG_DATA_HOME="+filepath.Join(dir, "data"), "XDG_CACHE_HOME="+filepath.Join(dir, "cache"),
		"XDG_RUNTIME_DIR="+filepath.Join(dir, "runtime"), "AGENTGATE_SOCKET="+filepath.Join(dir, "run", "bridge.sock"),
		"LANG=C.UTF-8", "SHELL=/bin/sh")
	return append(env, extra...)
}

// privateDirs makes the directories privateEnv points at and a project.
func privateDirs(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, sub := range []string{"config/agentgate", "state", "data", "cache", "runtime", "project"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, sub), 0o700))
	}
	return dir
}

// auditRefusals returns the no_approver refusals in the audit log under
// stateHome.
func auditRefusals(t *testing.T, stateHome string) []audit.Entry {
	t.Helper()
	var out []audit.Entry
	for e, err := range audit.Entries(audit.Path(filepath.Join(stateHome, "agentgate")), audit.OldestFirst) {
		require.NoError(t, err)
		if e.Kind == audit.KindRefusal && e.Code == wire.RefuseNoApprover {
			out = append(out, e)
		}
	}
	return out
}

// mcpSession runs `bin mcp --project project` with env under an MCP client.
func mcpSession(t *testing.T, bin, project string, env []string) *mcp.ClientSession {
	t.Helper()
	cmd := osexec.Command(bin, "mcp", "--project", project)
	cmd.Env = env
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "headless-test", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs
}

// runCommand calls the run_command tool and returns whether it failed and
// its text.
func runCommand(t *testing.T, cs *mcp.ClientSession, argv ...string) (isError bool, text string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_command", Arguments: map[string]any{"argv": argv}})
	require.NoError(t, err)
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return res.IsError, b.String()
}

// TestHeadless starts the real agentgate with no display. It serves the
// bridge without windows and says so: an allow-listed command runs, any
// other is refused at once with a reason naming the display — over the
// socket and through `agentgate mcp` — and the audit log records it. When
// the desktop app starts with a display it takes over and the headless one
// exits. Separately, `agentgate mcp` with no app running starts one, which
// serves without windows instead of crashing: the MCP client and the audit
// log learn why nothing ran.
func TestHeadless(t *testing.T) {
	requireDisplay(t) // for the hand-over to a desktop app
	bin := buildApp(t)

	t.Run("socket, mcp and hand-over", func(t *testing.T) {
		dir := privateDirs(t)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "config", "agentgate", "allow.list"), []byte("echo\n"), 0o600))
		e := &e2eApp{t: t, dir: dir, socket: filepath.Join(dir, "run", "bridge.sock"), project: filepath.Join(dir, "project")}
		e.cmd = osexec.Command(bin)
		e.cmd.Env = privateEnv(dir, false)
		logPath := filepath.Join(dir, "headless.log")
		e.launch(logPath, "e2e", "headless test")
		log, _ := os.ReadFile(logPath)
		assert.Contains(t, string(log), "without windows", "the log says it serves without windows")
		assert.Contains(t, string(log), "neither DISPLAY nor WAYLAND_DISPLAY is set")

		ok := e.propose("", "echo", "allowed")
		assert.Equal(t, "exited", e.waitDone(ok.RunID), "an allow-listed command runs")
		marker := filepath.Join(e.project, "marker")
		_, err := e.c.Propose(context.Background(), wire.ProposeParams{Argv: []string{"touch", marker}, Cwd: "."})
		require.Error(t, err, "a command no rule allows is refused at once, not left pending")
		assert.Equal(t, wire.RefuseNoApprover, client.Code(err))
		assert.Contains(t, err.Error(), "without a display")
		assert.Contains(t, err.Error(), "neither DISPLAY nor WAYLAND_DISPLAY is set")
		assert.Contains(t, err.Error(), "desktop session")
		assert.Contains(t, err.Error(), "agentgate run")
		assert.NoFileExists(t, marker)

		cs := mcpSession(t, bin, e.project, privateEnv(dir, false))
		isErr, text := runCommand(t, cs, "echo", "through mcp")
		assert.False(t, isErr, "an allow-listed command runs through mcp: %s", text)
		assert.Contains(t, text, "through mcp")
		isErr, text = runCommand(t, cs, "touch", marker)
		assert.True(t, isErr)
		assert.Contains(t, text, "no_approver")
		assert.Contains(t, text, "without a display", "the MCP client learns why nothing ran")
		assert.NoFileExists(t, marker)

		refusals := auditRefusals(t, filepath.Join(dir, "state"))
		require.Len(t, refusals, 2, "the socket's and mcp's refusals are in the audit log")
		for _, r := range refusals {
			assert.Equal(t, "headless", r.Host)
			assert.Contains(t, r.Message, "neither DISPLAY nor WAYLAND_DISPLAY is set")
		}

		// The desktop app starts with a display: the headless one hands over.
		exited := make(chan error, 1)
		go func() { exited <- e.cmd.Wait() }()
		desk := osexec.Command(bin)
		desk.Env = privateEnv(dir, true, "FYNE_THEME=light")
		deskLog, err := os.Create(filepath.Join(dir, "desk.log"))
		require.NoError(t, err)
		desk.Stdout, desk.Stderr = deskLog, deskLog
		require.NoError(t, desk.Start())
		t.Cleanup(func() {
			_ = desk.Process.Kill()
			_ = desk.Wait()
			deskLog.Close()
			if t.Failed() {
				data, _ := os.ReadFile(deskLog.Name())
				t.Logf("desktop app log:\n%s", data)
			}
		})
		select {
		case err := <-exited:
			assert.NoError(t, err, "the headless agentgate exits cleanly after handing over")
		case <-time.After(2 * time.Minute):
			t.Fatal("the headless agentgate did not hand over")
		}
		log, _ = os.ReadFile(logPath)
		assert.Contains(t, string(log), "handed over")
		require.Eventually(t, func() bool {
			c, err := client.Dial(e.socket)
			if err != nil {
				return false
			}
			defer c.Close()
			shown, err := c.Show()
			return err == nil && shown
		}, time.Minute, 100*time.Millisecond, "the desktop app never served the socket")
		window(t, "agentgate — Processes")
	})

	t.Run("mcp starts the app", func(t *testing.T) {
		dir := privateDirs(t)
		// A program no rule anywhere can name: a fresh absolute path.
		probe := filepath.Join(dir, "probe.sh")
		require.NoError(t, os.WriteFile(probe, []byte("#!/bin/sh\ntouch "+filepath.Join(dir, "ran")+"\n"), 0o755))
		env := privateEnv(dir, false)
		cs := mcpSession(t, bin, filepath.Join(dir, "project"), env)
		isErr, text := runCommand(t, cs, probe)
		socket := filepath.Join(dir, "run", "bridge.sock")
		if pid := bridgePID(t, socket); pid > 0 {
			t.Cleanup(func() { endProcess(t, pid) })
		}
		assert.True(t, isErr)
		assert.Contains(t, text, "no_approver")
		assert.Contains(t, text, "without a display", "the MCP client learns why nothing ran")
		assert.NoFileExists(t, filepath.Join(dir, "ran"))
		refusals := auditRefusals(t, filepath.Join(dir, "state"))
		require.Len(t, refusals, 1, "the audit log records the refusal")
		assert.Equal(t, "headless", refusals[0].Host)
		log, err := os.ReadFile(filepath.Join(dir, "state", "agentgate", "app.log"))
		require.NoError(t, err, "the app mcp started keeps a log")
		assert.Contains(t, string(log), "without windows")
	})
}

// bridgePID returns the pid of the process serving socket (from the peer
// credentials of a connection), or 0 when none answers.
func bridgePID(t *testing.T, socket string) int {
	t.Helper()
	conn, err := net.Dial("unix", socket)
	if err != nil {
		return 0
	}
	defer conn.Close()
	peer, err := wire.PeerOf(conn)
	require.NoError(t, err)
	return peer.PID
}

// endProcess sends SIGTERM to pid (a process this test caused to start) and
// waits until it is gone (or a zombie its new parent has yet to reap), then
// sends SIGKILL as a last resort.
func endProcess(t *testing.T, pid int) {
	_ = syscall.Kill(pid, syscall.SIGTERM)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
		if err != nil {
			return
		}
		if i := strings.LastIndexByte(string(stat), ')'); i > 0 && strings.HasPrefix(string(stat[i+1:]), " Z") {
			return
		}
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	t.Errorf("process %d did not end on SIGTERM", pid)
}

// TestNothingOutlivesTheApp starts the desktop app under the test's display
// with no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS unset, nothing at
// $XDG_RUNTIME_DIR/bus): it must not autolaunch one (dbus-launch leaves a
// dbus-daemon behind), and after it ends no process it caused to start is
// left. Every process carrying the app's marker variable is one it started.
func TestNothingOutlivesTheApp(t *testing.T) {
	requireDisplay(t)
	bin := buildApp(t)
	dir := privateDirs(t)
	mark := "AGENTGATE_TEST_MARK=" + filepath.Base(dir)
	e := &e2eApp{t: t, dir: dir, socket: filepath.Join(dir, "run", "bridge.sock"), project: filepath.Join(dir, "project")}
	e.cmd = osexec.Command(bin)
	e.cmd.Env = privateEnv(dir, true, mark, "FYNE_THEME=light")
	logPath := filepath.Join(dir, "app.log")
	e.launch(logPath, "e2e", "leak test")
	window(t, "agentgate — Processes")
	log, _ := os.ReadFile(logPath)
	assert.Contains(t, string(log), "no D-Bus session bus", "the log says the tray and notifications are off")
	assert.Empty(t, marked(t, mark, e.cmd.Process.Pid), "the app started processes of its own while idle")
	e.stop()
	assert.Empty(t, marked(t, mark, 0), "processes outlived the app")
}

// marked returns the pids and names of the processes other than skip whose
// environment holds mark.
func marked(t *testing.T, mark string, skip int) []string {
	t.Helper()
	procs, err := filepath.Glob("/proc/[0-9]*/environ")
	require.NoError(t, err)
	var out []string
	for _, p := range procs {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if pid == skip || !strings.Contains("\x00"+string(data)+"\x00", "\x00"+mark+"\x00") {
			continue
		}
		comm, _ := os.ReadFile(filepath.Join(filepath.Dir(p), "comm"))
		out = append(out, strconv.Itoa(pid)+" "+strings.TrimSpace(string(comm)))
	}
	return out
}
