package model

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/agentgate/agentgate/exec/display"
)

// HomeRelative returns path written relative to the person's home
// directory home when it lies inside it: "~" for home itself and
// "~/src/webshop" (with the platform's separator) for a path below it. A
// path outside home, a relative path, or an empty or root home ("" or "/",
// where every path would start with "~") returns path unchanged. A path
// that merely shares a prefix with home ("/home/sam2" for home "/home/sam")
// is outside it. Both are compared as given, after filepath.Clean; no
// symlinks are resolved. It is for display only: "~" is not a path a
// program can open.
func HomeRelative(path, home string) string {
	if home == "" || path == "" || !filepath.IsAbs(path) {
		return path
	}
	home = filepath.Clean(home)
	if home == string(filepath.Separator) || home == "." {
		return path
	}
	clean := filepath.Clean(path)
	if clean == home {
		return "~"
	}
	if rest, ok := strings.CutPrefix(clean, home+string(filepath.Separator)); ok {
		return "~" + string(filepath.Separator) + rest
	}
	return path
}

// userHome returns the person's home directory ($HOME on Unix), or "" when
// it is not known.
func userHome() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return home
}

// DisplayPath is a path as a person reads it: relative to their home
// (HomeRelative) and in exec/display form, so invisible characters are
// escaped. A path that display.Word has to quote is shown quoted and in
// full, since "~" inside quotes would not read as the home directory.
func DisplayPath(path string) string {
	w := display.Word(path)
	if w != path {
		return w
	}
	return HomeRelative(path, userHome())
}
