package ui

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBackgroundStartShowsNoWindow: `agentgate --background`, as the
// autostart entry starts it at login, serves the bridge without showing a
// window; starting agentgate again brings the Processes window forward.
func TestBackgroundStartShowsNoWindow(t *testing.T) {
	requireDisplay(t)
	bin := buildApp(t)
	e := startAppWith(t, bin, []string{BackgroundFlag})
	time.Sleep(time.Second) // a window would be mapped by now
	out, _ := exec.Command("xdotool", "search", "--onlyvisible", "--pid", strconv.Itoa(e.cmd.Process.Pid)).Output()
	assert.Empty(t, strings.TrimSpace(string(out)), "started with --background, the app shows a window")

	again := exec.Command(bin)
	again.Env = e.cmd.Env
	msg, err := again.CombinedOutput()
	require.NoError(t, err, "%s", msg)
	assert.Contains(t, string(msg), "already running")
	window(t, "agentgate — Processes") // shown by the running app
}
