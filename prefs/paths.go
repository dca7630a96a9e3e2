package prefs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Scope says which allow-list file a rule lives in.
type Scope string

// The three scopes. A command is allowed when any active scope allows it.
const (
	// ScopeGlobal is the person's own list, active for every proposal.
	ScopeGlobal Scope = "global"
	// ScopeProvider is a list for one provider (agent), active only while that
	// provider proposes.
	ScopeProvider Scope = "provider"
	// ScopeProject is the list inside a project, active for proposals in that
	// project and only for the rules a person confirmed (see Store.Trust).
	ScopeProject Scope = "project"
)

// File and directory names, relative to Paths.ConfigDir or a project root.
const (
	// allowListName is the file name of the global and project lists.
	allowListName = "allow.list"
	// providersDirName is the directory under ConfigDir holding provider lists.
	providersDirName = "providers"
	// providerSuffix ends every provider list's file name.
	providerSuffix = ".allow.list"
	// projectDirName is the directory under a project root holding its list.
	projectDirName = ".agentgate"
	// lockSuffix ends the name of the lock file beside each list.
	lockSuffix = ".lock"
)

// Paths says where agentgate keeps what people decided. Every function in
// this package takes its places from a Paths value, so tests and tools can
// point it anywhere.
type Paths struct {
	// ConfigDir holds allow.list, providers/<name>.allow.list and
	// settings.json: <XDG config home>/agentgate by default.
	ConfigDir string
	// StateDir holds trust.json: <XDG state home>/agentgate by default.
	StateDir string
}

// DefaultPaths returns the person's native places, laid out as
// github.com/adrg/xdg lays them out: on Linux and other Unix systems
// $XDG_CONFIG_HOME/agentgate (~/.config/agentgate) and
// $XDG_STATE_HOME/agentgate (~/.local/state/agentgate); on macOS both are
// ~/Library/Application Support/agentgate unless those variables say
// otherwise; on Windows both are %LOCALAPPDATA%\agentgate (the known folder,
// from the xdg package). The environment is read on every call. A variable
// that is unset, or whose value is not absolute once a leading ~ or $HOME is
// expanded, is ignored, as xdg ignores it; home is $HOME, or / when it is
// unset. Where home is relative (a broken $HOME) the place is "" rather than
// a path relative to whatever directory the process runs in.
//
// On Unix this does not initialise the xdg package: its initialisation
// reads the user-dirs.dirs file and works out a dozen places agentgate
// never uses, at the start of every process that links it — the hook,
// started before every tool call, among them. TestDefaultPathsAgreeWithXDG
// holds the two to the same answers.
func DefaultPaths() Paths { return defaultPlaces() }

// ValidateProviderName returns nil when name can name a provider list: it
// must be non-empty, at most 64 bytes, contain no "..", hold only ASCII
// letters, digits, '-', '_' and '.', and not be a Windows device name (con,
// prn, aux, nul, com1-com9, lpt1-lpt9, in any case), so it can never reach
// outside the providers directory on any system.
func ValidateProviderName(name string) error {
	switch {
	case isWindowsDeviceName(name):
		return fmt.Errorf("provider name %q is a reserved device name on Windows: choose another name", name)
	case name == "":
		return errors.New("provider name is empty: name the agent, e.g. claude-code")
	case len(name) > 64:
		return fmt.Errorf("provider name %q is longer than 64 bytes: choose a shorter name", name)
	case name == "." || name == ".." || strings.Contains(name, ".."):
		return fmt.Errorf("provider name %q contains \"..\": use letters, digits, '-', '_' and single dots", name)
	}
	for _, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.'
		if !ok {
			return fmt.Errorf("provider name %q contains %q: use only letters, digits, '-', '_' and '.'", name, r)
		}
	}
	return nil
}

// ProjectRoot returns the project root for dir: the nearest directory at or
// above dir that holds a .git entry (a directory, or the file a worktree or
// submodule has), else dir itself. The result is absolute, cleaned and has its
// symlinks resolved. It fails when dir does not exist or is not a directory.
func ProjectRoot(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("project directory %q: %w", dir, err)
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("project directory %q cannot be resolved: %w", dir, err)
	}
	info, err := os.Stat(resolved)
	if err != nil {
		return "", fmt.Errorf("project directory %q: %w", dir, err)
	}
	if !info.IsDir() {
		return "", fmt.Errorf("project directory %q is not a directory", dir)
	}
	for candidate := resolved; ; {
		if _, err := os.Lstat(filepath.Join(candidate, ".git")); err == nil {
			return candidate, nil
		}
		parent := filepath.Dir(candidate)
		if parent == candidate {
			return resolved, nil
		}
		candidate = parent
	}
}

// GlobalFile returns the path of the global allow-list.
func (p Paths) GlobalFile() string {
	return filepath.Join(p.ConfigDir, allowListName)
}

// ProviderFile returns the path of the named provider's allow-list, or the
// error of ValidateProviderName.
func (p Paths) ProviderFile(name string) (string, error) {
	if err := ValidateProviderName(name); err != nil {
		return "", err
	}
	return filepath.Join(p.ConfigDir, providersDirName, name+providerSuffix), nil
}

// ProjectFile returns the path of the allow-list of the project at root:
// <root>/.agentgate/allow.list.
func ProjectFile(root string) string {
	return filepath.Join(root, projectDirName, allowListName)
}

// settingsFile returns the path of settings.json.
func (p Paths) settingsFile() string {
	return filepath.Join(p.ConfigDir, settingsName)
}

// trustFile returns the path of trust.json.
func (p Paths) trustFile() string {
	return filepath.Join(p.StateDir, trustName)
}

// isWindowsDeviceName reports whether name (before any dot) is one of the
// names Windows reserves for devices in every directory.
func isWindowsDeviceName(name string) bool {
	stem, _, _ := strings.Cut(strings.ToLower(name), ".")
	switch stem {
	case "con", "prn", "aux", "nul":
		return true
	}
	return len(stem) == 4 && (strings.HasPrefix(stem, "com") || strings.HasPrefix(stem, "lpt")) && stem[3] >= '1' && stem[3] <= '9'
}
