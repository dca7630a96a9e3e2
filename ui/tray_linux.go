package ui

import "github.com/godbus/dbus/v5"

// trayHostPresent reports whether a system tray can show Fyne's tray icon:
// on Linux the icon is a StatusNotifierItem, shown only when a
// StatusNotifierWatcher owns its name on the session bus (GNOME without the
// AppIndicator extension, Xvfb and many tiling window managers have none).
func trayHostPresent() bool {
	conn, err := dbus.SessionBusPrivate()
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
