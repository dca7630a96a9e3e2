//go:build !windows

package prefs

import "path/filepath"

// defaultPlaces is DefaultPaths outside Windows: each XDG variable as xdg
// takes it (xdgEnvDir), else the place's layout under xdg's home directory
// (xdgHome).
func defaultPlaces() Paths {
	p, _ := homeLayout(xdgHome())
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
