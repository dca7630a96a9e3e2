//go:build unix

package exec

import "os"

// pathSeparators are the characters that make argv[0] a path instead of a
// name looked up on PATH.
const pathSeparators = "/"

// executableAt reports whether p is a regular file with an execute bit set
// and returns p unchanged (absolute, symlinks not resolved).
func executableAt(p string) (string, bool) {
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return "", false
	}
	return p, true
}

// checkPlatformArgs has nothing to check on Unix: no program is run through
// an implicit interpreter.
func checkPlatformArgs(string, []string) error { return nil }
