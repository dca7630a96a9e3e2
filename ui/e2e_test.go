package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentgate/agentgate/agentbridge/client"
	"github.com/agentgate/agentgate/agentbridge/wire"
)

// e2eApp is the real agentgate binary running under the test's display.
type e2eApp struct {
	t       *testing.T
	dir     string
	socket  string
	layout  string
	project string
	cmd     *osexec.Cmd
	c       *client.Client
}

// requireDisplay skips unless a display and xdotool are available (make
// test-ui runs the package under a private Xvfb).
func requireDisplay(t *testing.T) {
	t.Helper()
	if os.Getenv("DISPLAY") == "" {
		t.Skip("no DISPLAY: the end-to-end test runs under `make test-ui` (scripts/with-xvfb.sh)")
	}
	for _, tool := range []string{"xdotool", "import"} {
		if _, err := osexec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (Debian packages xdotool, imagemagick)", tool)
		}
	}
}

// buildApp builds agentgate once per test binary.
func buildApp(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "agentgate")
	build := osexec.Command("go", "build", "-tags", "migrated_fynedo", "-o", bin, "..")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	require.NoError(t, build.Run(), "building agentgate")
	return bin
}

// startApp starts the app with private XDG directories and socket.
func startApp(t *testing.T, bin string, extraEnv ...string) *e2eApp {
	t.Helper()
	return startAppWith(t, bin, nil, extraEnv...)
}

// startAppWith is startApp with the app's arguments.
func startAppWith(t *testing.T, bin string, args []string, extraEnv ...string) *e2eApp {
	t.Helper()
	dir := t.TempDir()
	e := &e2eApp{t: t, dir: dir, socket: filepath.Join(dir, "run", "bridge.sock"), layout: filepath.Join(dir, "layout.json"),
		project: filepath.Join(dir, "project")}
	require.NoError(t, os.MkdirAll(e.project, 0o755))
	for _, sub := range []string{"config", "state", "data", "cache", "runtime"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, sub), 0o700))
	}
	e.cmd = osexec.Command(bin, args...)
	e.cmd.Env = append(os.Environ(),
		"HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, "config"), "XDG_STATE_HOME="+filepath.Join(dir, "state"),
		"XDG_DATA_HOME="+filepath.Join(dir, "data"), "XDG_RUNTIME_DIR="+filepath.Join(dir, "runtime"), "XDG_CACHE_HOME="+filepath.Join(dir, "cache"),
		"AGENTGATE_SOCKET="+e.socket, "AGENTGATE_UI_LAYOUT_FILE="+e.layout, "LANG=C.UTF-8", "SHELL=/bin/sh",
		"DBUS_SESSION_BUS_ADDRESS=disabled:")
	e.cmd.Env = append(e.cmd.Env, extraEnv...)
	e.launch(filepath.Join(dir, "app.log"), "e2e", "xdotool test")
	return e
}

// launch starts e.cmd (its environment already set) with its output in
// logPath, ends it when the test ends (showing the log if the test failed),
// waits for its bridge and says hello as provider and clientName.
func (e *e2eApp) launch(logPath, provider, clientName string) {
	t := e.t
	logf, err := os.Create(logPath)
	require.NoError(t, err)
	e.cmd.Stdout, e.cmd.Stderr = logf, logf
	require.NoError(t, e.cmd.Start())
	t.Cleanup(func() {
		if e.c != nil {
			e.c.Close()
		}
		if e.cmd.ProcessState == nil {
			_ = e.cmd.Process.Kill()
			_ = e.cmd.Wait()
		}
		logf.Close()
		if t.Failed() {
			data, _ := os.ReadFile(logf.Name())
			t.Logf("app log:\n%s", data)
		}
	})
	require.Eventually(t, func() bool {
		c, err := client.Dial(e.socket)
		if err != nil {
			return false
		}
		e.c = c
		return true
	}, 30*time.Second, 100*time.Millisecond, "the app's bridge never answered")
	_, err = e.c.Hello(context.Background(), wire.HelloParams{Provider: provider, ProjectRoot: e.project, Client: clientName})
	require.NoError(t, err)
}

// stop ends the app (before another instance opens windows of the same names).
func (e *e2eApp) stop() {
	e.c.Close()
	e.c = nil
	_ = e.cmd.Process.Kill()
	_ = e.cmd.Wait()
}

// propose proposes argv in the project and returns the result.
func (e *e2eApp) propose(reason string, argv ...string) wire.ProposeResult {
	e.t.Helper()
	r, err := e.c.Propose(context.Background(), wire.ProposeParams{Argv: argv, Cwd: ".", Reason: reason})
	require.NoError(e.t, err)
	return r
}

// cardLayout is what the app writes to AGENTGATE_UI_LAYOUT_FILE.
type cardLayout struct {
	ID      string `json:"id"`
	Deny    [2]int `json:"deny"`
	Allow   [2]int `json:"allow"`
	Approve [2]int `json:"approve"`
	Confirm [2]int `json:"confirm"`
	Program [2]int `json:"program"`
	// How are the "how long" options: Always, 15 minutes, 1 hour, Until quit.
	How [][2]int `json:"how"`
	// UseExact is "Allow the exact command instead" (zero when hidden).
	UseExact  [2]int `json:"use_exact"`
	PanelOpen bool   `json:"panel_open"`
}

// armedCard waits until the card shows run id with live buttons (panel
// open or not) and returns its layout.
func (e *e2eApp) armedCard(id string, panelOpen bool) cardLayout {
	e.t.Helper()
	var l cardLayout
	require.Eventually(e.t, func() bool {
		data, err := os.ReadFile(e.layout)
		return err == nil && json.Unmarshal(data, &l) == nil && l.ID == id && l.PanelOpen == panelOpen
	}, 20*time.Second, 50*time.Millisecond, "the card for %s never armed", id)
	return l
}

// cardLayoutWhere waits until the card's layout for run id satisfies ok
// and returns it.
func (e *e2eApp) cardLayoutWhere(id string, ok func(cardLayout) bool) cardLayout {
	e.t.Helper()
	var l cardLayout
	require.Eventually(e.t, func() bool {
		l = cardLayout{}
		data, err := os.ReadFile(e.layout)
		return err == nil && json.Unmarshal(data, &l) == nil && l.ID == id && ok(l)
	}, 20*time.Second, 50*time.Millisecond, "the card for %s never reached the expected layout", id)
	return l
}

// window returns the X window id of the window titled name.
func window(t *testing.T, name string) string {
	t.Helper()
	out, err := osexec.Command("timeout", "20", "xdotool", "search", "--sync", "--onlyvisible", "--name", name).Output()
	require.NoError(t, err, "no visible window %q", name)
	return strings.Fields(string(out))[0]
}

// xdo runs xdotool.
func xdo(t *testing.T, args ...string) {
	t.Helper()
	out, err := osexec.Command("xdotool", args...).CombinedOutput()
	require.NoError(t, err, "xdotool %v: %s", args, out)
}

// click clicks at window coordinates p of window wid.
func click(t *testing.T, wid string, p [2]int) {
	t.Helper()
	xdo(t, "mousemove", "--window", wid, strconv.Itoa(p[0]), strconv.Itoa(p[1]))
	time.Sleep(100 * time.Millisecond)
	xdo(t, "click", "1")
}

// state asks the bridge for run id's state without waiting.
func (e *e2eApp) state(id string) (string, error) {
	zero := int64(0)
	r, err := e.c.Wait(context.Background(), wire.WaitParams{RunID: id, WaitMS: &zero})
	return r.State, err
}

// waitDone waits for run id to end and returns its state or refusal code.
func (e *e2eApp) waitDone(id string) string {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, _, err := e.c.WaitDone(ctx, id)
	if err != nil {
		require.True(e.t, client.IsRemote(err), "waiting for %s: %v", id, err)
		return client.Code(err)
	}
	return r.State
}

// TestEndToEnd drives the real app in a real window with xdotool: keys
// pressed at once approve nothing; Deny gives the agent "denied" and runs
// nothing; Approve runs; Always allow ▾ → program → Global writes the rule
// and an identical second proposal runs without a card. (The screenshots
// in docs/ come from TestScreenshots.)
func TestEndToEnd(t *testing.T) {
	requireDisplay(t)
	bin := buildApp(t)
	theme := "FYNE_THEME=light"
	e := startApp(t, bin, theme)
	marker := func(n int) string { return filepath.Join(e.project, fmt.Sprintf("marker%d", n)) }

	// 1. Keys pressed at once approve nothing.
	p1 := e.propose("create a marker file", "touch", marker(1))
	require.Equal(t, "pending", p1.State)
	card := window(t, "approve a command")
	xdo(t, "windowfocus", "--sync", card)
	xdo(t, "key", "Return", "space", "KP_Enter", "y", "a", "Return")
	time.Sleep(300 * time.Millisecond)
	st, err := e.state(p1.RunID)
	require.NoError(t, err)
	assert.Equal(t, "pending", st, "keys pressed as the card appears approve nothing")

	// 2. A click on Deny: the agent gets denied and nothing runs.
	l := e.armedCard(p1.RunID, false)
	click(t, card, l.Deny)
	assert.Equal(t, "denied", e.waitDone(p1.RunID))
	assert.NoFileExists(t, marker(1))

	// 3. A click on Approve runs it.
	p2 := e.propose("", "touch", marker(2))
	l = e.armedCard(p2.RunID, false)
	card = window(t, "approve a command")
	click(t, card, l.Approve)
	assert.Equal(t, "exited", e.waitDone(p2.RunID))
	assert.FileExists(t, marker(2))

	// 4. Always allow ▾ → program → Global (the defaults) writes the rule.
	p3 := e.propose("", "touch", marker(3))
	l = e.armedCard(p3.RunID, false)
	card = window(t, "approve a command")
	click(t, card, l.Allow)
	l = e.armedCard(p3.RunID, true)
	click(t, card, l.Confirm)
	assert.Equal(t, "exited", e.waitDone(p3.RunID))
	data, err := os.ReadFile(filepath.Join(e.dir, "config", "agentgate", "allow.list"))
	require.NoError(t, err)
	assert.Equal(t, "touch\n", string(data))

	// 5. A second identical proposal runs without a card.
	p4 := e.propose("", "touch", marker(3))
	assert.NotEqual(t, "pending", p4.State, "allowed by the new rule")
	require.NotNil(t, p4.Rule)
	assert.Equal(t, "global", p4.Rule.Scope)
	assert.Equal(t, "exited", e.waitDone(p4.RunID))

}
