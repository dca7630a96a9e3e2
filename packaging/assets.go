// Package packaging holds what agentgate's packaging and the running app share:
// the app and tray icons, embedded, and the XDG autostart entry that
// Preferences ▸ "Start at login" installs and removes. The files themselves
// (.desktop, AppStream metainfo, SVG sources) live beside this file; see
// docs/packaging.md.
package packaging

import _ "embed"

// AppID is the application identifier, as in FyneApp.toml's [Details] ID; it
// also names the desktop entry, the metainfo and the icons.
const AppID = "dev.agentgate.agentgate"

// AppIconPNG is the 512×512 app icon, FyneApp.toml's [Details] Icon.
//
//go:embed icons/hicolor/512x512/apps/dev.agentgate.agentgate.png
var AppIconPNG []byte

// TrayIdlePNG is the 64×64 tray icon shown while nothing waits for the person.
//
//go:embed tray/tray-idle-64.png
var TrayIdlePNG []byte

// TrayPendingPNG is the 64×64 tray icon shown while at least one proposal
// waits for the person: the idle icon with a red badge.
//
//go:embed tray/tray-pending-64.png
var TrayPendingPNG []byte

// autostartTemplate is packaging/agentgate-autostart.desktop; AutostartEntry
// replaces its Exec and TryExec lines.
//
//go:embed agentgate-autostart.desktop
var autostartTemplate string
