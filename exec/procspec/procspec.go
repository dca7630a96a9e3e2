// Package procspec declares, once, the shapes the per-OS containment
// packages share: what to start (Spec), how its leader ended (ExitStatus)
// and the error that means containment could not be set up
// (ErrContainment). unixpg (Linux, macOS) and winjob (Windows) take and
// return exactly these types, so package exec calls either without
// adapters. It imports only the standard library.
package procspec

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"
)

// ErrChanged is wrapped by the error of a Start that found the program
// (Spec.ProgramID) or the working directory no longer the one that was
// checked: nothing ran. The person should look at what changed them.
var ErrChanged = errors.New("changed since it was checked")

// ErrContainment is wrapped by every error that means the containment a
// run needs could not be set up or was lost. Such an error is not the
// command's fault, and retrying or running the command another way would
// bypass the bounds a person relies on; errors.Is(err, ErrContainment)
// identifies it.
var ErrContainment = errors.New("process containment unavailable: do not retry or run the command another way; " +
	"the person running agentgate must fix this")

// DefaultGrace is the time between SIGTERM and SIGKILL when Spec.Grace is
// zero or negative (Unix; Windows ends a job at once).
const DefaultGrace = 2 * time.Second

// Spec says what to run. The host keeps ownership of the files in it: Start
// neither closes them nor keeps references after it returns.
type Spec struct {
	// Path is the absolute path of the executable; it is not looked up in
	// PATH. Windows: a .bat or .cmd path runs through cmd.exe, with Path in
	// place of Args[0] on the command line (winjob.BatchCommandLine), and
	// it and its arguments must pass winjob.CheckBatchArgs.
	Path string
	// Args is the full argv including argv[0]; it must not be empty.
	// Windows turns it into a command line with Go's standard quoting
	// (syscall.EscapeArg).
	Args []string
	// Dir is the working directory; empty means the host's working
	// directory when Start is called (Unix: if that cannot be determined,
	// e.g. it was removed, the supervisor's).
	Dir string
	// Env is the complete environment of the target, in "KEY=value" form.
	// nil or empty gives the target an empty environment.
	Env []string
	// Stdin, Stdout and Stderr are the target's standard files; nil means
	// the null device. Descendants inherit them unless they redirect.
	Stdin, Stdout, Stderr *os.File
	// Grace is the time between SIGTERM and SIGKILL when the tree is ended;
	// zero or negative means DefaultGrace. Windows has no SIGTERM and does
	// not use it: a job is terminated at once.
	Grace time.Duration
	// DirFD, when set, is an open handle of Dir (on Linux an O_PATH
	// descriptor is enough). Linux: the target starts in exactly this
	// directory, whatever the path Dir names by then (the supervisor
	// enters it through the descriptor). Other systems change into Dir by
	// name: the caller checks the handle's identity before Start.
	DirFD *os.File
	// ProgramID, when set, is the identity the file at Path (symlinks
	// followed, as exec follows them) must still have right before it is
	// executed; if it has not, Start fails with an error wrapping
	// ErrChanged and nothing runs (Unix; Windows checks nothing here).
	ProgramID *FileID
	// Sandbox, when set, is the confinement the target enters between fork
	// and exec (Linux only; Start fails elsewhere).
	Sandbox *Sandbox
	// Timeout is the run's deadline, counted from the target's start: once
	// it has passed the tree is ended as by Terminate, and ExitStatus says
	// TimedOut. Zero or negative means none. Unix enforces it twice: in the
	// supervisor (so a stopped host does not stretch it) and in the host
	// (so a stopped supervisor does not either); Windows in the host.
	Timeout time.Duration
}

// ExitStatus says how the target (the leader of the tree or job) ended.
type ExitStatus struct {
	// Code is the exit code when Exited is true, and -1 otherwise.
	Code int
	// Signal is empty when the leader exited by itself. Otherwise it says
	// what ended it: on Unix the signal's name ("SIGTERM", "SIGKILL"), on
	// Windows "TerminateJobObject" (Terminate or Kill ended the job).
	Signal string
	// Exited is true when the leader ended by itself (any code), false when
	// a signal or the job's termination ended it.
	Exited bool
	// TimedOut is true when the tree was ended because Spec.Timeout passed
	// before anyone asked for its end (Terminate, Kill) and before the tree
	// ended by itself.
	TimedOut bool
}

// String returns "exit status N" or "signal: NAME".
func (s ExitStatus) String() string {
	if s.Exited {
		return "exit status " + strconv.Itoa(s.Code)
	}
	return "signal: " + s.Signal
}

// Sandbox is the confinement a Linux run's target enters between fork and
// exec. The confinement shim (cmd/agentgate-shim) applies it, in this
// order: it enters the run's directory (Spec.DirFD), creates the
// namespaces asked for, makes the mounts, enforces the Landlock ruleset,
// and executes the program (checked against Spec.ProgramID; an ELF
// program through the very descriptor it checked). Nothing of it applies
// to the supervisor or the host. The host keeps ownership of the files.
type Sandbox struct {
	// Shim is the shim executable, open for reading: it is executed
	// through this descriptor, so replacing the file on disk later changes
	// nothing.
	Shim *os.File
	// Ruleset is a Landlock ruleset (landlock_create_ruleset) the target
	// enforces on itself, with RulesetFlags; nil for none.
	Ruleset *os.File
	// RulesetFlags are landlock_restrict_self's flags.
	RulesetFlags uint32
	// UserNS asks for a new user namespace that maps only the caller's
	// uid and gid, which lets a non-root caller make the mounts below.
	UserNS bool
	// MountNS asks for a new mount namespace (every mount private), in
	// which ReadOnly and Hide apply.
	MountNS bool
	// ReadOnly lists absolute paths bound read-only over themselves; a
	// missing path or a symlink is skipped.
	ReadOnly []string
	// Hide lists absolute paths covered: an empty read-only tmpfs over a
	// directory, /dev/null over anything else (a socket cannot be
	// connected to then); a missing path is skipped.
	Hide []string
	// NetNS asks for a new network namespace with only the loopback
	// device: no network but lo.
	NetNS bool
}

// FileID identifies a file's content as it was checked: the same device and
// inode (Windows: volume serial and file index) and the same size,
// modification time and change time. The change time cannot be set by a
// user, so a file rewritten in place and given its old modification time
// back still differs. The zero FileID identifies nothing.
type FileID struct {
	// Dev is the device (Windows: the volume serial number).
	Dev uint64 `json:"dev"`
	// Ino is the inode number (Windows: the file index).
	Ino uint64 `json:"ino"`
	// Size is the size in bytes.
	Size int64 `json:"size"`
	// MtimeNS is the modification time in nanoseconds since the epoch.
	MtimeNS int64 `json:"mtime_ns"`
	// CtimeNS is the status change time in nanoseconds (Unix; 0 on
	// Windows, which has no such time in the data read here).
	CtimeNS int64 `json:"ctime_ns"`
}

// SameFile reports whether a and b name the same file (device and inode),
// whatever its content did since.
func (a FileID) SameFile(b FileID) bool { return a.Dev == b.Dev && a.Ino == b.Ino }

// Describe returns what differs between a, as checked, and b, as found,
// for a person ("a different file (device 2049, inode 7 → inode 9)", "its
// size (10 → 12 bytes)"); "" when they are equal.
func (a FileID) Describe(b FileID) string {
	switch {
	case !a.SameFile(b):
		return fmt.Sprintf("a different file now (device %d inode %d, checked: device %d inode %d)", b.Dev, b.Ino, a.Dev, a.Ino)
	case a.Size != b.Size:
		return fmt.Sprintf("its size changed (%d → %d bytes)", a.Size, b.Size)
	case a.MtimeNS != b.MtimeNS:
		return "its modification time changed"
	case a.CtimeNS != b.CtimeNS:
		return "it was changed (its status change time moved)"
	}
	return ""
}
