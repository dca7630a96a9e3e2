//go:build unix

package prefs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// fdDir is an editDir held by a directory descriptor: every name inside it
// is opened, created, renamed and locked relative to the descriptor with
// openBeneath, which follows no symbolic link and never leaves the
// directory.
type fdDir struct {
	// fd is the directory's descriptor (O_DIRECTORY).
	fd int
	// path is the directory's path when it was opened, for messages only.
	path string
}

// openProjectListDir opens the project directory root once and, beneath it
// with no symbolic link followed, the list directory .agentgate (creating
// it, mode 0700, when missing). root itself is the person's project root,
// already resolved; it is opened by path.
func openProjectListDir(root string) (*fdDir, error) {
	rootFD, err := openDirFD(root)
	if err != nil {
		return nil, fmt.Errorf("opening the project directory %s: %w", root, err)
	}
	defer unix.Close(rootFD)
	shown := filepath.Join(root, projectDirName)
	if err := unix.Mkdirat(rootFD, projectDirName, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
		return nil, fmt.Errorf("creating %s: %w", shown, err)
	}
	fd, err := openBeneath(rootFD, projectDirName, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.EXDEV) {
			return nil, linkRefusal(shown, err)
		}
		return nil, fmt.Errorf("opening %s: %w", shown, err)
	}
	return &fdDir{fd: fd, path: shown}, nil
}

// openDirFD opens the directory at path (following links in the path).
func openDirFD(path string) (int, error) {
	for {
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// close closes the descriptor.
func (d *fdDir) close() { unix.Close(d.fd) }

func (d *fdDir) shown(name string) string { return filepath.Join(d.path, name) }

// open opens name beneath the directory with openBeneath, mapping a link or
// an entry that tries to leave the directory to linkRefusal.
func (d *fdDir) open(name string, flags int, perm uint32) (*os.File, error) {
	fd, err := openBeneath(d.fd, name, flags, perm)
	if err != nil {
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EXDEV) {
			return nil, linkRefusal(d.shown(name), err)
		}
		return nil, &fs.PathError{Op: "open", Path: d.shown(name), Err: err}
	}
	return os.NewFile(uintptr(fd), d.shown(name)), nil
}

func (d *fdDir) read(name string) ([]byte, fs.FileMode, error) {
	f, err := d.open(name, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0o600, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("reading allow-list: %w", err)
	}
	return readOpened(f, d.shown(name))
}

func (d *fdDir) writeTemp(name string, data []byte, perm fs.FileMode) (string, error) {
	tmp := tempName(name)
	f, err := d.open(tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, uint32(perm))
	if err != nil {
		return "", fmt.Errorf("writing %s: cannot create a temporary file beside it: %w", d.shown(name), err)
	}
	fail := func(what string, err error) (string, error) {
		f.Close()
		d.discard(tmp)
		return "", fmt.Errorf("writing %s: %s: %w", d.shown(name), what, err)
	}
	if err := f.Chmod(perm); err != nil {
		return fail(fmt.Sprintf("cannot set mode %v", perm), err)
	}
	if what, err := fillTemp(f, data); err != nil {
		return fail(what, err)
	}
	return tmp, nil
}

func (d *fdDir) commit(tmp, name string) error {
	if err := unix.Renameat(d.fd, tmp, d.fd, name); err != nil {
		d.discard(tmp)
		return fmt.Errorf("writing %s: cannot replace it: %w", d.shown(name), err)
	}
	if err := unix.Fsync(d.fd); err != nil {
		return fmt.Errorf("writing %s: the file was replaced but syncing its directory failed: %w", d.shown(name), err)
	}
	return nil
}

func (d *fdDir) discard(tmp string) { unix.Unlinkat(d.fd, tmp, 0) }

func (d *fdDir) lock(name string) (func(), error) {
	f, err := d.open(name+lockSuffix, unix.O_RDWR|unix.O_CREAT, 0o600)
	if err != nil {
		return nil, fmt.Errorf("locking %s for editing: %w", d.shown(name), err)
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s for editing: %w", d.shown(name+lockSuffix), err)
	}
	return func() { f.Close() }, nil
}

// singleComponent reports whether name is one path component other than
// "." and "..".
func singleComponent(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsRune(name, '/')
}

// openatNoFollow is openat(dirFD, name, flags|O_NOFOLLOW|O_CLOEXEC, perm),
// retried on EINTR.
func openatNoFollow(dirFD int, name string, flags int, perm uint32) (int, error) {
	for {
		fd, err := unix.Openat(dirFD, name, flags|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
		if err != unix.EINTR {
			return fd, err
		}
	}
}
