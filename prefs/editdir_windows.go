package prefs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agentgate/agentgate/exec/atomicfile"
	"golang.org/x/sys/windows"
)

// rootDir is an editDir held open as an os.Root: every name is opened,
// created and renamed through handles relative to the directory, so no
// link can lead outside it, and an entry that is a link (a reparse point:
// symbolic link or junction) is refused rather than followed.
type rootDir struct {
	// root is the directory.
	root *os.Root
	// path is the directory's path when it was opened, for messages only.
	path string
}

// openProjectListDir opens the project directory root once and, beneath it,
// the list directory .agentgate (creating it when missing), refusing a
// link there.
func openProjectListDir(root string) (*rootDir, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("opening the project directory %s: %w", root, err)
	}
	defer r.Close()
	shown := filepath.Join(root, projectDirName)
	if err := r.Mkdir(projectDirName, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("creating %s: %w", shown, err)
	}
	if err := refuseLink(r, projectDirName, shown); err != nil {
		return nil, err
	}
	sub, err := r.OpenRoot(projectDirName)
	if err != nil {
		return nil, linkRefusal(shown, err)
	}
	return &rootDir{root: sub, path: shown}, nil
}

// refuseLink fails when name in r is a link (symbolic link, junction or
// another reparse point).
func refuseLink(r *os.Root, name, shown string) error {
	fi, err := r.Lstat(name)
	if err != nil {
		return nil // missing: nothing to follow
	}
	if fi.Mode()&(fs.ModeSymlink|fs.ModeIrregular) != 0 {
		return linkRefusal(shown, errNotBeneath)
	}
	return nil
}

// close closes the directory.
func (d *rootDir) close() { d.root.Close() }

func (d *rootDir) shown(name string) string { return filepath.Join(d.path, name) }

func (d *rootDir) read(name string) ([]byte, fs.FileMode, error) {
	if err := refuseLink(d.root, name, d.shown(name)); err != nil {
		return nil, 0, err
	}
	f, err := d.root.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0o600, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("reading allow-list %s: %w", d.shown(name), err)
	}
	return readOpened(f, d.shown(name))
}

func (d *rootDir) writeTemp(name string, data []byte, perm fs.FileMode) (string, error) {
	tmp := tempName(name)
	f, err := d.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return "", fmt.Errorf("writing %s: cannot create a temporary file beside it: %w", d.shown(name), err)
	}
	fail := func(what string, err error) (string, error) {
		f.Close()
		d.discard(tmp)
		return "", fmt.Errorf("writing %s: %s: %w", d.shown(name), what, err)
	}
	if what, err := fillTemp(f, data); err != nil {
		return fail(what, err)
	}
	return tmp, nil
}

func (d *rootDir) commit(tmp, name string) error {
	if err := refuseLink(d.root, name, d.shown(name)); err != nil {
		d.discard(tmp)
		return err
	}
	// os.Root renames with POSIX semantics where Windows has them; the
	// retry covers readers that do not share delete access (and Wine).
	if err := atomicfile.Retry(func() error { return d.root.Rename(tmp, name) }); err != nil {
		d.discard(tmp)
		return fmt.Errorf("writing %s: cannot replace it: %w", d.shown(name), err)
	}
	return nil
}

func (d *rootDir) discard(tmp string) { d.root.Remove(tmp) }

func (d *rootDir) lock(name string) (func(), error) {
	f, err := d.root.OpenFile(name+lockSuffix, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("locking %s for editing: %w", d.shown(name), err)
	}
	var ol windows.Overlapped
	if err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, &ol); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s for editing: %w", d.shown(name+lockSuffix), err)
	}
	return func() { f.Close() }, nil
}
