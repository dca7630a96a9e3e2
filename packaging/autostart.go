package packaging

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/agentgate/agentgate/prefs"
)

// AutostartFileName is the name of the autostart entry inside
// $XDG_CONFIG_HOME/autostart: the app ID, like the app's own desktop entry.
const AutostartFileName = AppID + ".desktop"

// AutostartSupported reports whether EnableAutostart starts agentgate at
// login on this OS: true on Linux and the BSDs (XDG autostart), false on
// macOS and Windows, where docs/packaging.md describes the LaunchAgent and
// the Run key instead.
func AutostartSupported() bool {
	return runtime.GOOS != "darwin" && runtime.GOOS != "windows" && runtime.GOOS != "ios" &&
		runtime.GOOS != "android"
}

// AutostartPath returns the path of the autostart entry under configHome (the
// XDG config directory, normally $XDG_CONFIG_HOME or ~/.config):
// configHome/autostart/dev.agentgate.agentgate.desktop.
func AutostartPath(configHome string) string {
	return filepath.Join(configHome, "autostart", AutostartFileName)
}

// BackgroundFlag is the argument that starts the desktop app without
// showing its window; the autostart entry passes it, so that logging in
// shows nothing until an agent asks for something.
const BackgroundFlag = "--background"

// AutostartEntry returns packaging/agentgate-autostart.desktop with its Exec
// key set to executable followed by BackgroundFlag and its TryExec key to
// executable, which must be an absolute path (the
// running binary, so the entry works when its directory is not on the login
// session's PATH). Exec quotes the path as the Desktop Entry specification
// requires (see execArg); TryExec carries it with string escapes only. A
// relative path, or one with control characters (which no desktop entry can
// hold), is an error.
func AutostartEntry(executable string) ([]byte, error) {
	if !filepath.IsAbs(executable) {
		return nil, fmt.Errorf("autostart entry: the program path %q is not absolute; pass the running binary's absolute path (os.Executable)", executable)
	}
	execValue, err := execArg(executable)
	if err != nil {
		return nil, err
	}
	lines := strings.SplitAfter(autostartTemplate, "\n")
	for i, line := range lines {
		switch {
		case strings.HasPrefix(line, "Exec="):
			lines[i] = "Exec=" + execValue + " " + BackgroundFlag + "\n"
		case strings.HasPrefix(line, "TryExec="):
			lines[i] = "TryExec=" + escapeString(executable) + "\n"
		}
	}
	return []byte(strings.Join(lines, "")), nil
}

// EnableAutostart writes the autostart entry for executable (see
// AutostartEntry) to AutostartPath(configHome), creating the autostart
// directory (mode 0755, like desktop environments do) when it is missing and
// replacing an existing entry atomically. The file gets mode 0644.
func EnableAutostart(configHome, executable string) error {
	entry, err := AutostartEntry(executable)
	if err != nil {
		return err
	}
	path := AutostartPath(configHome)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("start at login: cannot create the autostart directory: %w", err)
	}
	if err := prefs.WriteFileAtomic(path, entry, 0o644); err != nil {
		return fmt.Errorf("start at login: %w", err)
	}
	return nil
}

// DisableAutostart removes AutostartPath(configHome). An entry that is
// already missing is not an error.
func DisableAutostart(configHome string) error {
	err := os.Remove(AutostartPath(configHome))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("start at login: cannot remove the autostart entry: %w", err)
	}
	return nil
}

// AutostartEnabled reports whether AutostartPath(configHome) exists and is
// not switched off in the file itself (Hidden=true or
// X-GNOME-Autostart-enabled=false, which desktop environments' own
// start-up settings write). A missing file is false with no error; an
// unreadable one is an error.
func AutostartEnabled(configHome string) (bool, error) {
	data, err := os.ReadFile(AutostartPath(configHome))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("start at login: cannot read the autostart entry: %w", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		switch strings.TrimSpace(line) {
		case "Hidden=true", "X-GNOME-Autostart-enabled=false":
			return false, nil
		}
	}
	return true, nil
}

// execReserved holds the characters after which an Exec argument must be
// quoted (Desktop Entry specification 1.4, "The Exec key").
const execReserved = " \t\n\"'\\><~|&;$*?#()`"

// execArg returns arg as one argument of an Exec value: a literal % doubled
// (field codes); the whole argument in double quotes when it holds a
// reserved character, with ", `, $ and \ backslash-escaped inside; and then
// every backslash doubled, because the string escapes of the value are undone
// before the quoting. Control characters are an error.
func execArg(arg string) (string, error) {
	if err := checkNoControl(arg); err != nil {
		return "", err
	}
	arg = strings.ReplaceAll(arg, "%", "%%")
	if strings.ContainsAny(arg, execReserved) {
		var b strings.Builder
		b.WriteByte('"')
		for _, r := range arg {
			if strings.ContainsRune("\"`$\\", r) {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		}
		b.WriteByte('"')
		arg = b.String()
	}
	return escapeString(arg), nil
}

// escapeString applies the string escapes of a desktop entry value to s: a
// backslash becomes two. (The other escapes, \s \n \t \r, stand for
// characters that checkNoControl refuses or that need no escape.)
func escapeString(s string) string {
	return strings.ReplaceAll(s, `\`, `\\`)
}

// checkNoControl refuses a path with ASCII control characters, which a
// desktop entry line cannot carry as a program path.
func checkNoControl(path string) error {
	for _, r := range path {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("autostart entry: the program path %q contains a control character; move agentgate to a path without one", path)
		}
	}
	return nil
}
