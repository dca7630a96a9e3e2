package prefs

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agentgate/agentgate/exec/atomicfile"
)

// editDir is a directory in which editLoop replaces one file atomically.
// pathDir reaches its files by path (global and provider lists); a project
// list's directory is reached by descriptor, with no symbolic link followed
// (openProjectListDir), because whoever writes the project — an agent, a
// cloned repository — controls the names inside it.
type editDir interface {
	// read returns the file's content and permission bits; a missing file
	// gives nil content and 0600.
	read(name string) ([]byte, fs.FileMode, error)
	// writeTemp writes data to a new temporary file in the directory,
	// synced to disk, with mode perm, and returns a token for commit or
	// discard.
	writeTemp(name string, data []byte, perm fs.FileMode) (string, error)
	// commit renames the temporary file over name and syncs the directory;
	// on failure the temporary file is removed.
	commit(tmp, name string) error
	// discard removes an uncommitted temporary file.
	discard(tmp string)
	// lock takes the cross-process lock file name+".lock" (mode 0600) and
	// returns the function that releases it.
	lock(name string) (func(), error)
	// shown is the path of name, for messages.
	shown(name string) string
}

// editRetries bounds how often editLoop starts over because the file changed
// under it.
const editRetries = 50

// testHookBeforeCommit, when set by a test, runs after editLoop has written
// its temporary file and before it checks the file is unchanged.
var testHookBeforeCommit func(path string)

// editLoop changes the file name in dir by transform under a cross-process
// lock on name+".lock", so concurrent agentgate edits serialise. Editors do
// not take that lock, so just before replacing the file editLoop reads it
// again; when it changed since transform saw it, editLoop starts over from
// the new content, so a hand edit that lands meanwhile is kept (only a write
// in the few microseconds between that check and the rename can still be
// lost). A missing file is created with mode 0600; an existing file keeps
// its mode. transform returning its input unchanged writes nothing.
func editLoop(dir editDir, name string, transform func(content []byte) ([]byte, error)) error {
	unlock, err := dir.lock(name)
	if err != nil {
		return err
	}
	defer unlock()
	for range editRetries {
		before, perm, err := dir.read(name)
		if err != nil {
			return err
		}
		after, err := transform(before)
		if err != nil {
			return err
		}
		if before != nil && bytes.Equal(after, before) {
			return nil
		}
		tmp, err := dir.writeTemp(name, after, perm)
		if err != nil {
			return err
		}
		if testHookBeforeCommit != nil {
			testHookBeforeCommit(dir.shown(name))
		}
		now, _, err := dir.read(name)
		if err != nil || (now == nil) != (before == nil) || !bytes.Equal(now, before) {
			dir.discard(tmp)
			if err != nil {
				return err
			}
			continue // changed by someone else: redo on the new content
		}
		return dir.commit(tmp, name)
	}
	return fmt.Errorf("%s kept changing while agentgate tried to edit it (%d attempts): try again when nothing else is writing it", dir.shown(name), editRetries)
}

// editFile is editLoop for the file at path, reached by path (following
// symbolic links, as a person's dotfiles may use them); a missing directory
// is created with mode 0700. For the person's own configuration directory.
func editFile(path string, transform func(content []byte) ([]byte, error)) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating the directory for %s: %w", path, err)
	}
	return editLoop(pathDir(dir), filepath.Base(path), transform)
}

// editProjectList is editLoop for the allow-list of the project at root,
// reached by descriptor: the project directory is opened once, .agentgate
// is created (0700) or opened beneath it, and the list, its lock and the
// temporary file are opened, created and renamed beneath that, with no
// symbolic link followed at any step (openProjectListDir). A link there —
// planted by a repository or swapped in by an agent while the person
// answers — makes the edit fail; it can never make a rule land in another
// list.
func editProjectList(root string, transform func(content []byte) ([]byte, error)) error {
	dir, err := openProjectListDir(root)
	if err != nil {
		return err
	}
	defer dir.close()
	return editLoop(dir, allowListName, transform)
}

// linkRefusal is the error for a symbolic link (or another non-plain
// entry) met while editing a project list.
func linkRefusal(path string, err error) error {
	return fmt.Errorf("%s is a symbolic link or not a plain %s, so a project rule written there could land in another allow-list; agentgate does not edit project rules through links: replace it with a plain directory or file, or choose another scope (%w)",
		path, map[bool]string{true: "directory", false: "file"}[filepath.Base(path) == projectDirName], err)
}

// errNotBeneath marks an entry that is a link or not of the expected type.
var errNotBeneath = errors.New("not a plain entry beneath the project")

// pathDir is an editDir reached by path.
type pathDir string

func (d pathDir) shown(name string) string { return filepath.Join(string(d), name) }

func (d pathDir) read(name string) ([]byte, fs.FileMode, error) { return readForEdit(d.shown(name)) }

func (d pathDir) writeTemp(name string, data []byte, perm fs.FileMode) (string, error) {
	return atomicfile.WriteTemp(d.shown(name), data, perm, true)
}

func (d pathDir) commit(tmp, name string) error { return atomicfile.Commit(tmp, d.shown(name), true) }

func (d pathDir) discard(tmp string) { os.Remove(tmp) }

func (d pathDir) lock(name string) (func(), error) { return lockBeside(d.shown(name)) }

// readForEdit returns the content and permission bits of path; a missing file
// gives nil content and 0600.
func readForEdit(path string) ([]byte, os.FileMode, error) {
	f, err := atomicfile.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0o600, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("reading allow-list %s: %w", path, err)
	}
	return readOpened(f, path)
}

// readOpened reads the opened file f (named path in messages) whole,
// returning a non-nil content and its permission bits, and closes it.
func readOpened(f *os.File, path string) ([]byte, os.FileMode, error) {
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, 0, fmt.Errorf("reading allow-list %s: %w", path, err)
	}
	if !info.Mode().IsRegular() {
		return nil, 0, linkRefusal(path, errNotBeneath)
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(f); err != nil {
		return nil, 0, fmt.Errorf("reading allow-list %s: %w", path, err)
	}
	content := buf.Bytes()
	if content == nil {
		content = []byte{}
	}
	return content, info.Mode().Perm(), nil
}

// tempName is the name of a new temporary file beside name: hidden, and
// random so that two writers never share one.
func tempName(name string) string {
	var random [6]byte
	rand.Read(random[:])
	return "." + name + ".tmp-" + hex.EncodeToString(random[:])
}

// fillTemp writes data to the new temporary file f, syncs it to disk and
// closes it. On failure it says which step failed, for the error a person
// reads; f is closed either way.
func fillTemp(f *os.File, data []byte) (what string, err error) {
	if _, err := f.Write(data); err != nil {
		f.Close()
		return "writing the temporary file failed", err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return "syncing the temporary file to disk failed", err
	}
	if err := f.Close(); err != nil {
		return "closing the temporary file failed", err
	}
	return "", nil
}
