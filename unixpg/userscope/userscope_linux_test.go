//go:build linux

package userscope

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestSessionBusAddress(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		bus, runtime, want string
	}{
		{"unix:path=/run/user/1000/bus", "", "unix:path=/run/user/1000/bus"},
		{"autolaunch:", "", ""},
		{"disabled:", "", ""},
		{"", dir, ""}, // no bus socket there
		{"", "", ""},
	}
	for _, c := range cases {
		t.Setenv("DBUS_SESSION_BUS_ADDRESS", c.bus)
		t.Setenv("XDG_RUNTIME_DIR", c.runtime)
		if c.bus == "" {
			os.Unsetenv("DBUS_SESSION_BUS_ADDRESS")
		}
		if got := sessionBusAddress(); got != c.want {
			t.Errorf("bus %q runtime %q: got %q, want %q", c.bus, c.runtime, got, c.want)
		}
	}
}

// TestDelegateInUserSession asks the session's systemd user manager for a
// delegated scope, in a helper process (it moves the process), and checks
// that a cgroup can be made below it. It skips where there is no systemd
// user session (no session bus, or no user manager on it).
func TestDelegateInUserSession(t *testing.T) {
	if os.Getenv("USERSCOPE_TEST_HELPER") == "1" {
		dir, err := Delegate(context.Background())
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(0)
		}
		probe := filepath.Join(dir, "probe")
		if err := os.Mkdir(probe, 0o755); err != nil {
			fmt.Println("mkdir:", err)
			os.Exit(0)
		}
		os.Remove(probe)
		fmt.Println("scope:", dir)
		os.Exit(0)
	}
	if sessionBusAddress() == "" {
		t.Skip(ErrNoSession)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestDelegateInUserSession$")
	cmd.Env = append(os.Environ(), "USERSCOPE_TEST_HELPER=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helper: %v", err)
	}
	line := strings.TrimSpace(string(out))
	switch {
	case strings.HasPrefix(line, "scope: ") && strings.HasSuffix(line, ".scope"):
	case strings.HasPrefix(line, "error:"):
		t.Skip("no systemd user manager on the session bus:", line)
	default:
		t.Fatalf("helper said %q", line)
	}
}
