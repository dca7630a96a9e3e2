package ui

import (
	"os"
	"path/filepath"
	"strconv"

	"github.com/godbus/dbus/v5"
)

// busOff is the session bus address that makes every D-Bus connection of
// this process fail at once: godbus knows no transport "disabled".
const busOff = "disabled:"

// sessionBusPresent reports whether a D-Bus session bus is there, and makes
// sure nothing in this process starts one. With DBUS_SESSION_BUS_ADDRESS
// set (other than "autolaunch:") the bus is there. Otherwise the per-user
// bus socket $XDG_RUNTIME_DIR/bus, else /run/user/<uid>/bus, is the bus
// when it exists (its address is then set, as godbus would find it).
// Otherwise there is none: DBUS_SESSION_BUS_ADDRESS is set to busOff, so
// that godbus — used by Fyne for notifications, the theme portal and the
// tray — never autolaunches one through dbus-launch (a dbus-daemon that
// outlives agentgate). Call it after the runs' environment was taken.
func sessionBusPresent() bool {
	if a := os.Getenv("DBUS_SESSION_BUS_ADDRESS"); a != "" && a != "autolaunch:" {
		return a != busOff
	}
	for _, dir := range []string{os.Getenv("XDG_RUNTIME_DIR"), "/run/user/" + strconv.Itoa(os.Getuid())} {
		if dir == "" {
			continue
		}
		sock := filepath.Join(dir, "bus")
		if fi, err := os.Stat(sock); err == nil && fi.Mode()&os.ModeSocket != 0 {
			os.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path="+dbus.EscapeBusAddressValue(sock))
			return true
		}
	}
	os.Setenv("DBUS_SESSION_BUS_ADDRESS", busOff)
	return false
}

// trayHostPresent reports whether a system tray can show Fyne's tray icon:
// on Linux the icon is a StatusNotifierItem, shown only when a
// StatusNotifierWatcher owns its name on the session bus (GNOME without the
// AppIndicator extension, Xvfb and many tiling window managers have none).
func trayHostPresent() bool {
	conn, err := dbus.SessionBusPrivateNoAutoStartup()
	if err != nil {
		return false
	}
	defer conn.Close()
	if conn.Auth(nil) != nil || conn.Hello() != nil {
		return false
	}
	var owned bool
	err = conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, "org.kde.StatusNotifierWatcher").Store(&owned)
	return err == nil && owned
}
