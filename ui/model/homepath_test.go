package model_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/agentgate/agentgate/exec"
	"github.com/agentgate/agentgate/exec/platformtest"
	"github.com/agentgate/agentgate/ui/model"
)

// skipWindowsDisplayPaths skips a test of how Unix paths are shown: on
// Windows display.Word quotes every path (a backslash is a shell
// character), so DisplayPath never shows one home-relative there; how
// Windows paths should read is not decided yet.
func skipWindowsDisplayPaths(t *testing.T) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("checks the display form of Unix paths; on Windows display.Word quotes every path (backslashes)")
	}
}

func TestHomeRelative(t *testing.T) {
	for _, tc := range []struct{ path, home, want string }{
		{"/home/sam/src/webshop", "/home/sam", "~/src/webshop"},
		{"/home/sam", "/home/sam", "~"},
		{"/home/sam/", "/home/sam", "~"},
		{"/home/sam/src/", "/home/sam/", "~/src"},
		{"/home/sam2/src", "/home/sam", "/home/sam2/src"},
		{"/srv/data", "/home/sam", "/srv/data"},
		{"relative/path", "/home/sam", "relative/path"},
		{"/etc/passwd", "/", "/etc/passwd"},
		{"/home/sam/x", "", "/home/sam/x"},
		{"", "/home/sam", ""},
	} {
		want := platformtest.NativePath(tc.want)
		assert.Equal(t, want, model.HomeRelative(platformtest.NativePath(tc.path), platformtest.NativePath(tc.home)), "%q in %q", tc.path, tc.home)
	}
}

func TestDisplayPath(t *testing.T) {
	skipWindowsDisplayPaths(t)
	t.Setenv("HOME", "/home/sam")
	assert.Equal(t, "~/.config/agentgate/allow.list", model.DisplayPath("/home/sam/.config/agentgate/allow.list"))
	assert.Equal(t, "/usr/bin/npm", model.DisplayPath("/usr/bin/npm"))
	assert.Equal(t, `$'/home/sam/a\u202eb'`, model.DisplayPath("/home/sam/a\u202eb"), "a quoted path is shown in full")
}

func TestRunSummary(t *testing.T) {
	skipWindowsDisplayPaths(t)
	t.Setenv("HOME", "/home/sam")
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	one, zero := 1, 0
	for _, tc := range []struct {
		rec  exec.Record
		want string
	}{
		{exec.Record{State: exec.StateExited, ExitCode: &one, StartedAt: start, EndedAt: start.Add(2400 * time.Millisecond),
			HostKind: exec.HostApp, HostPID: 4242, Provider: "claude-code", Dir: "/home/sam/src/webshop"},
			"exited 1 · 2.4 s · app, pid 4242 · claude-code · in ~/src/webshop"},
		{exec.Record{State: exec.StateRunning, StartedAt: start, HostKind: exec.HostCLI, HostPID: 7, Dir: "/srv/x"},
			"running · 2 min · cli, pid 7 · in /srv/x"},
		{exec.Record{State: exec.StateTimedOut, Signal: "SIGKILL", StartedAt: start, EndedAt: start.Add(30 * time.Second), HostKind: exec.HostApp},
			"timed out SIGKILL · 30 s · app"},
		{exec.Record{State: exec.StateExited, ExitCode: &zero}, "exited 0"},
		{exec.Record{State: exec.StateCancelled, Signal: "SIGTERM", CancelledBy: "the agent's connection closed", StartedAt: start, EndedAt: start.Add(4 * time.Second)},
			"cancelled SIGTERM (the agent's connection closed) · 4.0 s"},
	} {
		assert.Equal(t, tc.want, model.RunSummary(&tc.rec, start.Add(2*time.Minute)))
	}
	assert.Equal(t, "cli", model.CellText(&exec.Record{HostKind: exec.HostCLI, HostPID: 9}, 4, start), "the Host column has no pid")
}
