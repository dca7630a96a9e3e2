//go:build linux

package userscope

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/agentgate/agentgate/unixpg"
)

// property is one entry of StartTransientUnit's properties, a(sv).
type property struct {
	// Name is the unit property's name.
	Name string
	// Value is its value.
	Value dbus.Variant
}

// auxUnit is one entry of StartTransientUnit's auxiliary units, a(sa(sv)).
type auxUnit struct {
	// Name is the unit's name.
	Name string
	// Props are its properties.
	Props []property
}

// scopeWait bounds how long Delegate waits for the process to be moved.
const scopeWait = 5 * time.Second

// Delegate moves this process into a new transient scope of the session's
// systemd user manager, "agentgate-<pid>.scope", with Delegate=yes, and
// returns the scope's cgroup directory (under the cgroup2 mount) once this
// process is in it. It fails with ErrNoSession without a session bus, and
// with the manager's error otherwise (no systemd user session, a manager
// that refuses); the process then stays where it was.
func Delegate(ctx context.Context) (string, error) {
	addr := sessionBusAddress()
	if addr == "" {
		return "", ErrNoSession
	}
	conn, err := dbus.Dial(addr)
	if err != nil {
		return "", fmt.Errorf("connecting to the session bus %s: %w", addr, err)
	}
	defer conn.Close()
	if err := conn.Auth(nil); err != nil {
		return "", fmt.Errorf("authenticating to the session bus: %w", err)
	}
	if err := conn.Hello(); err != nil {
		return "", fmt.Errorf("greeting the session bus: %w", err)
	}
	before, _ := unixpg.OwnCgroupDir()
	name := fmt.Sprintf("agentgate-%d.scope", os.Getpid())
	props := []property{
		{"Description", dbus.MakeVariant("agentgate: commands approved for AI agents")},
		{"PIDs", dbus.MakeVariant([]uint32{uint32(os.Getpid())})},
		{"Delegate", dbus.MakeVariant(true)},
		{"CollectMode", dbus.MakeVariant("inactive-or-failed")},
	}
	manager := conn.Object("org.freedesktop.systemd1", "/org/freedesktop/systemd1")
	var job dbus.ObjectPath
	call := manager.CallWithContext(ctx, "org.freedesktop.systemd1.Manager.StartTransientUnit", 0,
		name, "fail", props, []auxUnit{})
	if err := call.Store(&job); err != nil {
		return "", fmt.Errorf("asking the systemd user manager for a delegated scope: %w", err)
	}
	deadline := time.Now().Add(scopeWait)
	for {
		dir, err := unixpg.OwnCgroupDir()
		if err == nil && dir != before && filepath.Base(dir) == name {
			return dir, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return "", errors.New("the systemd user manager did not move agentgate into its scope " + name)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// sessionBusAddress returns the session bus's address, or "" when there is
// none (never "autolaunch:").
func sessionBusAddress() string {
	if a := os.Getenv("DBUS_SESSION_BUS_ADDRESS"); a != "" {
		if strings.HasPrefix(a, "unix:") {
			return a
		}
		return ""
	}
	if rt := os.Getenv("XDG_RUNTIME_DIR"); rt != "" {
		sock := filepath.Join(rt, "bus")
		if fi, err := os.Stat(sock); err == nil && fi.Mode()&os.ModeSocket != 0 {
			return "unix:path=" + dbus.EscapeBusAddressValue(sock)
		}
	}
	return ""
}
