//go:build windows

package exec

import (
	"fmt"
	"os"
	"path/filepath"
)

// openRootDir opens the directory path.
func openRootDir(path string) (*os.File, error) { return os.Open(path) }

// openDirBeneath opens the directory rel beneath root by name, after
// checking with Lstat that no component of rel is a symlink, junction or
// other reparse point. Windows has no openat2; a component swapped between
// the check and the open is caught by the identity check that follows
// every use.
func openDirBeneath(root *os.File, rel string) (*os.File, error) {
	cur := root.Name()
	for _, c := range splitRel(rel) {
		if c == ".." {
			return nil, fmt.Errorf("%s leaves the project", rel)
		}
		cur = filepath.Join(cur, c)
		fi, err := os.Lstat(cur)
		if err != nil {
			return nil, err
		}
		if fi.Mode()&(os.ModeSymlink|os.ModeIrregular) != 0 {
			return nil, fmt.Errorf("%s is a link, not a directory", cur)
		}
	}
	return os.Open(cur)
}

// splitRel splits a relative path at separators, dropping empty and "."
// components.
func splitRel(rel string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(rel); i++ {
		if i == len(rel) || os.IsPathSeparator(rel[i]) {
			if c := rel[start:i]; c != "" && c != "." {
				out = append(out, c)
			}
			start = i + 1
		}
	}
	return out
}
