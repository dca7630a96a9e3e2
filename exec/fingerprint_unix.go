//go:build unix

package exec

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
)

// changeMethod names how this platform tells a file changed.
const changeMethod = "content-hash"

// fingerprint returns an entry's state for the change summary: kind, size
// and modification time from Lstat, plus the SHA-256 of a regular file's
// content when it is at most maxHash bytes, or of a symlink's target. It fails
// when the entry vanished (fs.ErrNotExist) or is unreadable.
func fingerprint(path string, d fs.DirEntry, maxHash int64) (fileState, error) {
	fi, err := d.Info()
	if err != nil {
		return fileState{}, err
	}
	st := fileState{Kind: fi.Mode().Type(), Size: fi.Size(), ModTime: fi.ModTime()}
	switch {
	case fi.Mode().IsRegular() && fi.Size() <= maxHash:
		f, err := os.Open(path)
		if err != nil {
			return fileState{}, err
		}
		defer f.Close()
		h := sha256.New()
		if _, err := io.Copy(h, io.LimitReader(f, maxHash+1)); err != nil {
			return fileState{}, err
		}
		st.Hash = hex.EncodeToString(h.Sum(nil))
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(path)
		if err != nil {
			return fileState{}, err
		}
		sum := sha256.Sum256([]byte(target))
		st.Hash = hex.EncodeToString(sum[:])
	}
	return st, nil
}
