package exec

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/agentgate/agentgate/exec/procspec"
)

// Checks at the moment of use: the working directory and the
// program are bound by identity when a proposal is validated, and Start
// runs exactly those or refuses. This file holds the platform-neutral part;
// openDirBeneath and openRootDir are per OS.

// maxProgramHash bounds the program files whose content is hashed (those
// inside the project): larger ones are bound by identity alone.
const maxProgramHash = 64 << 20

// dirBinding is what Validate learns about a working directory.
type dirBinding struct {
	// rootID and dirID identify the project root and the directory.
	rootID, dirID procspec.FileID
}

// bindDir opens the resolved project root and, beneath it and without
// following any symlink, the directory rel (as resolveCwd computed it:
// physical, inside the root), and returns both identities. An error is a
// *Refusal: a component turned into a symlink or vanished while it was
// being checked.
func bindDir(root, rel string) (dirBinding, error) {
	rootF, err := openRootDir(root)
	if err != nil {
		return dirBinding{}, refusef(CodeCwdChanged, "the project root %s could not be opened (%v); check that it exists", root, err)
	}
	defer rootF.Close()
	dirF, err := openDirBeneath(rootF, rel)
	if err != nil {
		return dirBinding{}, refusef(CodeCwdChanged, "the directory %s changed while it was being checked (%v): it must be a real directory inside the project %s, reached without symlinks; try again", strconv.Quote(rel), err, root)
	}
	defer dirF.Close()
	var b dirBinding
	if b.rootID, err = procspec.FileIDOf(rootF); err == nil {
		b.dirID, err = procspec.FileIDOf(dirF)
	}
	if err != nil {
		return dirBinding{}, refusef(CodeCwdChanged, "the directory %s could not be identified: %v", strconv.Quote(rel), err)
	}
	return b, nil
}

// reopenDir opens cmd's working directory again, as bindDir did, and checks
// that the root and the directory are the very ones Validate bound. It
// returns the open directory, which the run starts in (procspec.Spec.DirFD),
// or a *Refusal with code cwd_changed saying what changed.
func reopenDir(cmd Command) (*os.File, *Refusal) {
	rootF, err := openRootDir(cmd.ProjectRoot)
	if err != nil {
		return nil, refusef(CodeCwdChanged, "the project root %s is gone since the command was checked (%v); nothing ran", cmd.ProjectRoot, err)
	}
	defer rootF.Close()
	if id, err := procspec.FileIDOf(rootF); err != nil || !id.SameFile(cmd.RootID) {
		return nil, refusef(CodeCwdChanged, "the project root %s is %s since the command was checked; nothing ran. Look at what replaced it", cmd.ProjectRoot, describeID(cmd.RootID, id, err))
	}
	dirF, err := openDirBeneath(rootF, cmd.DirRel)
	if err != nil {
		return nil, refusef(CodeCwdChanged, "the working directory %s (in %s) cannot be reached as checked any more (%v): it was removed or replaced by a symlink; nothing ran. Look at what changed it", strconv.Quote(cmd.DirRel), cmd.ProjectRoot, err)
	}
	if id, err := procspec.FileIDOf(dirF); err != nil || !id.SameFile(cmd.DirID) {
		dirF.Close()
		return nil, refusef(CodeCwdChanged, "the working directory %s (in %s) is %s since the command was checked; nothing ran. Look at what replaced it", strconv.Quote(cmd.DirRel), cmd.ProjectRoot, describeID(cmd.DirID, id, err))
	}
	return dirF, nil
}

// describeID says how found (or the error reading it) differs from want.
func describeID(want, found procspec.FileID, err error) string {
	if err != nil {
		return "unreadable (" + err.Error() + ")"
	}
	return want.Describe(found)
}

// programBinding is what Validate learns about the executable.
type programBinding struct {
	// resolved is the executable's path with symlinks resolved.
	resolved string
	// id identifies the file.
	id procspec.FileID
	// sha256 is its content hash when it lies inside the project root and
	// is at most maxProgramHash bytes, else "".
	sha256 string
}

// bindProgram identifies the executable exe (symlinks followed, as exec
// follows them) and, when it lies inside root, hashes its content.
func bindProgram(exe, root string) (programBinding, error) {
	resolved, err := filepath.EvalSymlinks(exe)
	if err != nil {
		return programBinding{}, refusef(CodeExecutableNotFound, "program %s cannot be resolved (%v); check the path", exe, err)
	}
	f, err := os.Open(resolved)
	if err != nil {
		return programBinding{}, refusef(CodeExecutableNotFound, "program %s cannot be opened (%v); check the path and its permissions", resolved, err)
	}
	defer f.Close()
	b := programBinding{resolved: resolved}
	if b.id, err = procspec.FileIDOf(f); err != nil {
		return programBinding{}, refusef(CodeExecutableNotFound, "program %s cannot be identified: %v", resolved, err)
	}
	if _, inside := within(root, resolved); inside && b.id.Size <= maxProgramHash {
		if b.sha256, err = hashFile(f); err != nil {
			return programBinding{}, refusef(CodeExecutableNotFound, "program %s cannot be read: %v", resolved, err)
		}
	}
	return b, nil
}

// verifyProgram checks, at Start, that the file at cmd.Executable is still
// the one Validate bound (identity, and content for a program inside the
// project), or returns a *Refusal with code program_changed.
func verifyProgram(cmd Command) *Refusal {
	f, err := os.Open(cmd.Executable)
	if err != nil {
		return refusef(CodeProgramChanged, "program %s is gone since the command was checked (%v); nothing ran", cmd.Executable, err)
	}
	defer f.Close()
	id, err := procspec.FileIDOf(f)
	if err != nil || id != cmd.ProgramID {
		return refusef(CodeProgramChanged, "program %s is %s since the command was checked; nothing ran. Look at what changed it before you approve it again", cmd.Executable, describeID(cmd.ProgramID, id, err))
	}
	if cmd.ProgramSHA256 != "" {
		sum, err := hashFile(f)
		if err != nil || sum != cmd.ProgramSHA256 {
			return refusef(CodeProgramChanged, "program %s has different content since the command was checked (SHA-256 %s, checked %s); nothing ran. Look at what changed it before you approve it again", cmd.Executable, sum, cmd.ProgramSHA256)
		}
	}
	return nil
}

// hashFile returns the hex SHA-256 of f's content from its start.
func hashFile(f *os.File) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, maxProgramHash+1)); err != nil {
		return "", fmt.Errorf("hashing %s: %w", f.Name(), err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
