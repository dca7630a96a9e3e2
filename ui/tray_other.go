//go:build !linux

package ui

// trayHostPresent reports whether a system tray can show Fyne's tray icon:
// macOS (menu bar extras), Windows (notification area) and the BSDs' desktop
// sessions are assumed to have one.
func trayHostPresent() bool { return true }

// sessionBusPresent reports true: only Linux desktops reach the tray and
// notifications through a D-Bus session bus.
func sessionBusPresent() bool { return true }
