package changes

import (
	"io/fs"
	"time"
)

// granularity is how far a file's change time may lag the moment of the
// change: kernels stamp files from a clock that advances once per tick (up
// to 10 ms). Changes made this long before a run started may be listed
// as the run's; an entry recorded less than this after its last change is
// "racy" (see entry.racy).
const granularity = 10 * time.Millisecond

// entry is what the index knows of one directory entry.
type entry struct {
	// mode is the type and permission bits (fs.FileMode).
	mode fs.FileMode
	// size is the length in bytes (Lstat).
	size int64
	// mtime and ctime are the modification and change times in Unix
	// nanoseconds; Windows has no change time and repeats mtime.
	mtime, ctime int64
	// ino is the inode number (0 on Windows).
	ino uint64
	// hash is the SHA-256 of a regular file's content or of a symlink's
	// target, valid when hashed is true.
	hash [32]byte
	// hashed says hash is valid: false for directories, files larger than
	// Limits.MaxHashSize, unreadable files and Windows.
	hashed bool
	// racy is true when the entry was recorded within granularity of its
	// last change, so a later change could leave every stat field equal
	// (git's "racily clean" entries): such an entry's content is hashed
	// again whenever it is looked at.
	racy bool
}

// isDir reports whether the entry is a directory.
func (e *entry) isDir() bool { return e.mode.IsDir() }

// sameStat reports whether e and o agree on every stat field.
func (e *entry) sameStat(o *entry) bool {
	return e.mode == o.mode && e.size == o.size && e.mtime == o.mtime && e.ctime == o.ctime && e.ino == o.ino
}

// differs reports whether an entry present before (b) and after (a) a
// window changed in a way a summary lists: its type changed, or (files and
// symlinks) both content hashes are known and differ, or, without both
// hashes, size or modification time differ. Directories never differ by
// themselves (their content is listed entry by entry), and neither does a
// file only touched or rewritten with the same content.
func differs(b, a *entry) bool {
	if b.mode.Type() != a.mode.Type() {
		return true
	}
	if a.isDir() {
		return false
	}
	if b.hashed && a.hashed {
		return b.hash != a.hash
	}
	return b.size != a.size || b.mtime != a.mtime
}

// rawEntry is one name read from a directory with its stat.
type rawEntry struct {
	// name is the entry's name in its directory.
	name string
	// e is its stat (hash not filled in).
	e entry
	// err is set when the entry could not be stat'ed (other than vanishing).
	err error
}
