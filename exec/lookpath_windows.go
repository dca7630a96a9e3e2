//go:build windows

package exec

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/agentgate/agentgate/winjob"
)

// pathSeparators are the characters that make argv[0] a path instead of a
// name looked up on PATH.
const pathSeparators = `/\:`

// executableAt reports whether p, or p with one of the PATHEXT extensions
// appended, is a regular file with an executable extension, and returns the
// name found.
func executableAt(p string) (string, bool) {
	exts := pathExts()
	if hasExt(p, exts) {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, true
		}
	}
	for _, e := range exts {
		if fi, err := os.Stat(p + e); err == nil && fi.Mode().IsRegular() {
			return p + e, true
		}
	}
	return "", false
}

// pathExts returns the executable extensions from PATHEXT, lower-cased, or
// the Windows defaults when it is unset.
func pathExts() []string {
	v := os.Getenv("PATHEXT")
	if v == "" {
		v = ".com;.exe;.bat;.cmd"
	}
	var exts []string
	for _, e := range strings.Split(strings.ToLower(v), ";") {
		if strings.HasPrefix(e, ".") {
			exts = append(exts, e)
		}
	}
	return exts
}

// hasExt reports whether p ends in one of exts (case-insensitively).
func hasExt(p string, exts []string) bool {
	ext := strings.ToLower(filepath.Ext(p))
	for _, e := range exts {
		if ext == e {
			return true
		}
	}
	return false
}

// checkPlatformArgs refuses cmd.exe metacharacters in argv (argv[0]
// included) of a .bat or .cmd target ("BatBadBut"), which Windows runs
// through cmd.exe; the error names the argument's index and the character.
func checkPlatformArgs(exe string, argv []string) error {
	return winjob.CheckBatchArgs(exe, argv)
}
