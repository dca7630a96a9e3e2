//go:build windows

package exec

import "io/fs"

// changeMethod names how this platform tells a file changed.
const changeMethod = "size-mtime"

// fingerprint returns an entry's state for the change summary: kind, size
// and modification time, without following links (WalkDir's entries come
// from Lstat-like directory reads). Content is not hashed on Windows. It fails when the
// entry vanished (fs.ErrNotExist) or is unreadable.
func fingerprint(_ string, d fs.DirEntry, _ int64) (fileState, error) {
	fi, err := d.Info()
	if err != nil {
		return fileState{}, err
	}
	return fileState{Kind: fi.Mode().Type(), Size: fi.Size(), ModTime: fi.ModTime()}, nil
}
