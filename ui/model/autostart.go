package model

import "github.com/agentgate/agentgate/packaging"

// Autostart switches "Start at login"; packaging's functions implement it.
type Autostart struct {
	// ConfigHome is the XDG config home ($XDG_CONFIG_HOME or ~/.config).
	ConfigHome string
	// Executable is the running binary's absolute path.
	Executable string
}

// Supported reports whether this OS starts agentgate at login through an
// autostart entry (see packaging.AutostartSupported).
func (a Autostart) Supported() bool { return packaging.AutostartSupported() && a.ConfigHome != "" }

// Enabled reports whether the entry is installed and switched on.
func (a Autostart) Enabled() (bool, error) { return packaging.AutostartEnabled(a.ConfigHome) }

// Set installs (on) or removes (off) the autostart entry.
func (a Autostart) Set(on bool) error {
	if on {
		return packaging.EnableAutostart(a.ConfigHome, a.Executable)
	}
	return packaging.DisableAutostart(a.ConfigHome)
}
