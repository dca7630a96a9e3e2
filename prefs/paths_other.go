//go:build !windows

package prefs

import (
	"os"
	"path/filepath"
)

// defaultPlaces is DefaultPaths outside Windows: each XDG variable as xdg
// takes it (xdgEnvDir), else the place's layout under the home directory
// ($HOME, or / when unset) that xdg uses.
func defaultPlaces() Paths {
	home := os.Getenv("HOME")
	if home == "" {
		home = "/"
	}
	layout, _ := homeLayout(home)
	p := layout
	if v := xdgEnvDir("XDG_CONFIG_HOME"); v != "" {
		p.ConfigDir = filepath.Join(v, "agentgate")
	}
	if v := xdgEnvDir("XDG_STATE_HOME"); v != "" {
		p.StateDir = filepath.Join(v, "agentgate")
	}
	return p
}

// knownFolderPlaces is Windows' (paths_windows.go); elsewhere there are no
// known folders.
func knownFolderPlaces() Paths { return Paths{} }
