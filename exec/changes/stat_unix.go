//go:build unix

package changes

import (
	"crypto/sha256"
	"errors"
	"io"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// method names how this platform tells a file's content changed.
const method = "content-hash"

// lstatEntry returns the entry at abs without following a symlink there.
// It fails with fs.ErrNotExist when nothing is there.
func lstatEntry(abs string) (entry, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(unix.AT_FDCWD, abs, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return entry{}, &fs.PathError{Op: "lstat", Path: abs, Err: err}
	}
	return fromStat(&st), nil
}

// readDirEntries lists the directory at abs (which must not be a symlink)
// and stats each entry relative to it, without following symlinks. An
// entry that vanished between the listing and its stat is left out.
func readDirEntries(abs string) ([]rawEntry, error) {
	f, err := os.OpenFile(abs, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	fd := int(f.Fd())
	out := make([]rawEntry, 0, len(names))
	for _, name := range names {
		var st unix.Stat_t
		err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if errors.Is(err, unix.ENOENT) {
			continue
		}
		if err != nil {
			out = append(out, rawEntry{name: name, err: err})
			continue
		}
		out = append(out, rawEntry{name: name, e: fromStat(&st)})
	}
	return out, nil
}

// fromStat converts a stat result.
func fromStat(st *unix.Stat_t) entry {
	m := fs.FileMode(st.Mode & 0o777)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	case unix.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		m |= fs.ModeDevice
	}
	if st.Mode&unix.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if st.Mode&unix.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if st.Mode&unix.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	mt, ct := statTimes(st)
	return entry{mode: m, size: st.Size, mtime: mt, ctime: ct, ino: uint64(st.Ino)}
}

// hashEntry fills e's hash from the file or symlink at abs when it is still
// the entry e describes (every stat field the same, before and after the
// read) and a file no larger than max; it leaves e unhashed otherwise
// (unreadable, replaced, changed, too large).
func hashEntry(abs string, e *entry, max int64) {
	e.hashed = false
	switch {
	case e.mode&fs.ModeSymlink != 0:
		target, err := os.Readlink(abs)
		if err != nil {
			return
		}
		// The link read must be the one the stat describes (a link
		// replaced by another has a new inode and change time).
		if now, err := lstatEntry(abs); err != nil || !now.sameStat(e) {
			return
		}
		e.hash, e.hashed = sha256.Sum256([]byte(target)), true
	case e.mode.IsRegular() && e.size <= max:
		// O_NONBLOCK: should the name have become a FIFO, opening it must
		// not wait for a writer; O_NOFOLLOW: never through a symlink.
		f, err := os.OpenFile(abs, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
		if err != nil {
			return
		}
		defer f.Close()
		// The content read must be the one the stat describes: the same
		// file, not changed since.
		if !stillDescribes(f, e) {
			return
		}
		h := sha256.New()
		n, err := io.Copy(h, io.LimitReader(f, max+1))
		if err != nil || n > max {
			return
		}
		// And it must still be after the read: a rewrite during it (a run
		// writing a file the first walk left for hashInBackground) would
		// otherwise give the old stat the new content's hash, and the
		// change would compare equal.
		if !stillDescribes(f, e) {
			return
		}
		copy(e.hash[:], h.Sum(nil))
		e.hashed = true
	}
}

// stillDescribes reports whether the open file f is a regular file whose
// stat is the one e describes (every field sameStat compares).
func stillDescribes(f *os.File, e *entry) bool {
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return false
	}
	now := fromStat(&st)
	return now.sameStat(e)
}

// statTimes returns the modification and change times in Unix nanoseconds.
func statTimes(st *unix.Stat_t) (mtime, ctime int64) {
	return st.Mtim.Nano(), st.Ctim.Nano()
}
