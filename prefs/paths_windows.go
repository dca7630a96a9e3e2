package prefs

import (
	"path/filepath"

	"github.com/adrg/xdg"
)

// defaultPlaces is DefaultPaths on Windows: the known folder the xdg
// package finds (%LOCALAPPDATA%), or the XDG variables where they are set.
func defaultPlaces() Paths {
	return Paths{
		ConfigDir: filepath.Join(xdg.ConfigHome, "agentgate"),
		StateDir:  filepath.Join(xdg.StateHome, "agentgate"),
	}
}

// knownFolderPlaces returns the places in the known folders, which no
// variable changes: the xdg package's values while the XDG variables are
// unset, and unknown ("") where they are set.
func knownFolderPlaces() Paths {
	var p Paths
	if xdgEnvDir("XDG_CONFIG_HOME") == "" {
		p.ConfigDir = filepath.Join(xdg.ConfigHome, "agentgate")
	}
	if xdgEnvDir("XDG_STATE_HOME") == "" {
		p.StateDir = filepath.Join(xdg.StateHome, "agentgate")
	}
	return p
}
