package changes

import (
	"io/fs"
	"os"
)

// method names how this platform tells a file's content changed: Windows
// compares size and modification time only.
const method = "size-mtime"

// lstatEntry returns the entry at abs without following a link there.
func lstatEntry(abs string) (entry, error) {
	fi, err := os.Lstat(abs)
	if err != nil {
		return entry{}, err
	}
	return fromInfo(fi), nil
}

// readDirEntries lists the directory at abs with each entry's metadata
// from the directory listing itself.
func readDirEntries(abs string) ([]rawEntry, error) {
	des, err := os.ReadDir(abs)
	if err != nil {
		return nil, err
	}
	out := make([]rawEntry, 0, len(des))
	for _, d := range des {
		fi, err := d.Info()
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			out = append(out, rawEntry{name: d.Name(), err: err})
			continue
		}
		out = append(out, rawEntry{name: d.Name(), e: fromInfo(fi)})
	}
	return out, nil
}

// fromInfo converts file info. Windows has no change time that Go reports,
// so ctime repeats mtime: a program that sets a file's time back after
// changing it (same size) is not seen.
func fromInfo(fi fs.FileInfo) entry {
	t := fi.ModTime().UnixNano()
	return entry{mode: fi.Mode() &^ fs.ModeIrregular, size: fi.Size(), mtime: t, ctime: t}
}

// hashEntry leaves e unhashed: Windows compares size and time.
func hashEntry(string, *entry, int64) {}
