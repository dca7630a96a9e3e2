package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentgate/agentgate/agentbridge/bridgetest"
)

// TestMCPStartsTheAppWhenNotRunning: with no app on the socket, the first
// tool call starts it (startApp) and waits for its socket, then runs the
// command through it.
func TestMCPStartsTheAppWhenNotRunning(t *testing.T) {
	dir := t.TempDir()
	socket := filepath.Join(dir, "app.sock")
	var b *bridgetest.Bridge
	starts := 0
	m := &mcpServer{e: env{socket: socket, cwd: dir}, startApp: func() error {
		starts++
		// The "app": a real bridge, reachable at the socket path the mcp
		// server dials, a moment after it was started.
		b = bridgetest.Start(t, bridgetest.Options{})
		b.Allow(t, "echo")
		go func() {
			time.Sleep(300 * time.Millisecond)
			_ = os.Symlink(b.Socket, socket)
		}()
		return nil
	}}
	cs := connectMCP(t, m, "test-client")
	res, out, text := callTool(t, cs, "run_command", map[string]any{"argv": []string{"echo", "started"}})
	if starts != 1 {
		t.Fatalf("the app was started %d times, want 1", starts)
	}
	if res.IsError || out.Stdout != "started\n" {
		t.Fatalf("run_command after starting the app: error %v, %s %+v", res.IsError, text, out)
	}
}

// TestStartAppDetached starts a stand-in app the way `agentgate mcp` starts
// the desktop app: it runs, in a session of its own (setsid), with stdio on
// the null device, and is not waited for.
func TestStartAppDetached(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "started")
	script := filepath.Join(dir, "app")
	// The stand-in records its pid, session id and stdin, then exits.
	body := "#!/bin/sh\ncut -d' ' -f1,6 /proc/$$/stat > " + marker + ".tmp\nreadlink /proc/$$/fd/0 >> " + marker + ".tmp\nmv " + marker + ".tmp " + marker + "\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := startAppDetached(script, dir); err != nil {
		t.Fatal(err)
	}
	var data []byte
	deadline := time.Now().Add(10 * time.Second)
	for {
		var err error
		if data, err = os.ReadFile(marker); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the detached app never ran")
		}
		time.Sleep(20 * time.Millisecond)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2 {
		t.Fatalf("stand-in wrote %q", data)
	}
	ids := strings.Fields(lines[0])
	if len(ids) != 2 || ids[0] != ids[1] {
		t.Errorf("the app is not the leader of a session of its own: pid, sid = %v", ids)
	}
	if sid, _ := strconv.Atoi(ids[1]); sid == mustGetsid(t) {
		t.Errorf("the app shares this process's session")
	}
	if lines[1] != os.DevNull {
		t.Errorf("the app's stdin is %q, want %s", lines[1], os.DevNull)
	}
}

// mustGetsid returns this process's session id.
func mustGetsid(t *testing.T) int {
	sid, err := unix.Getsid(0)
	if err != nil {
		t.Fatal(err)
	}
	return sid
}
