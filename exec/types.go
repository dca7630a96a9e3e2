// Package exec validates and runs approved commands with a bounded lifetime.
//
// It is the only place in agentgate that starts a program on behalf of an
// agent. A command reaches it in two steps: Validate turns an agent's
// Proposal into an immutable Command (or refuses it with a *Refusal before
// anything is spent), and an Executor starts a Command that a person or an
// allow-list rule allowed. What runs is exactly the Command that was shown.
//
// Containment is per platform: on Unix each run lives in its own process
// group under a small supervising process (package unixpg); on Windows in a
// Job Object (package winjob). See docs/lifetime.md.
package exec

import (
	"time"

	"github.com/agentgate/agentgate/exec/procspec"
	"github.com/agentgate/agentgate/exec/runinfo"
)

// Limits that are part of the contract with agents (SPEC §2).
const (
	// DefaultTimeout is used when a proposal names no timeout.
	DefaultTimeout = 120 * time.Second
	// MaxTimeout is the largest timeout a proposal may ask for; there is no
	// unlimited setting.
	MaxTimeout = 600 * time.Second
	// MaxStdin is the largest stdin a proposal may carry, in bytes: 512 KiB,
	// so that it fits, even base64-encoded, in one 1 MiB bridge frame.
	MaxStdin = 512 << 10
)

// State is where a run is in its life. The zero value is not a valid state.
type State string

// The states of a run. Every state but StateRunning is final.
const (
	// StateRunning: the process was started and has not ended yet.
	StateRunning State = "running"
	// StateExited: the process ended by itself; Record.ExitCode holds its
	// code. A non-zero code is still a successful run: the code is data.
	StateExited State = "exited"
	// StateTimedOut: the timeout elapsed and the whole tree was ended.
	StateTimedOut State = "timed_out"
	// StateCancelled: someone cancelled the run and the whole tree was ended.
	StateCancelled State = "cancelled"
	// StateFailedToStart: the process could not be started or contained;
	// Record.Error says why. Nothing ran.
	StateFailedToStart State = "failed_to_start"
	// StateLost: the host that ran it died before recording its end. Set at
	// start-up by MarkLost on records left running by a dead host.
	StateLost State = "lost"
)

// Final reports whether s is a state a run never leaves.
func (s State) Final() bool { return s != StateRunning && s != "" }

// HostKind names the kind of process that hosts a run.
type HostKind string

// Host kinds recorded in run records.
const (
	HostApp HostKind = "app" // the desktop app
	HostCLI HostKind = "cli" // `agentgate run` in a terminal
	HostMCP HostKind = "mcp" // `agentgate mcp` (reserved; mcp runs go through the app's bridge)
)

// Stream names one of a run's two retained outputs.
type Stream string

// The retained streams.
const (
	// Stdout is the process's standard output.
	Stdout Stream = "stdout"
	// Stderr is the process's standard error.
	Stderr Stream = "stderr"
)

// Proposal is what an agent asks to run, before validation. Nothing in it is
// trusted.
type Proposal struct {
	// Argv is the program and its arguments; argv[0] is looked up on the
	// host's own PATH unless it is a path. No shell ever sees it.
	Argv []string
	// Cwd is the working directory: empty (the project root), relative to
	// ProjectRoot, or absolute inside it.
	Cwd string
	// ProjectRoot is the absolute project directory the session declared;
	// the working directory must resolve inside it.
	ProjectRoot string
	// Stdin is fed to the process and then closed; at most MaxStdin bytes.
	Stdin []byte
	// Timeout bounds the run's life; 0 means the default timeout.
	Timeout time.Duration
}

// Command is a validated proposal: immutable, and exactly what will run and
// what a person is shown. Only Validate makes one.
type Command struct {
	// Argv is the proposal's argv, unchanged (argv[0] as the agent wrote it).
	Argv []string
	// Executable is the absolute path argv[0] resolved to, shown to the person.
	Executable string
	// Dir is the absolute working directory after resolving `..` and symlinks.
	Dir string
	// DirRel is Dir relative to ProjectRoot ("." for the root itself).
	DirRel string
	// ProjectRoot is the absolute project root, symlinks resolved.
	ProjectRoot string
	// Stdin is the bytes fed to the process.
	Stdin []byte
	// StdinSHA256 is the hex SHA-256 of Stdin, binding an approval to it.
	StdinSHA256 string
	// Timeout is the run's bound, between 1 ms and MaxTimeout.
	Timeout time.Duration
	// RootID and DirID identify ProjectRoot and Dir as validated (device
	// and inode): Executor.Start runs in exactly that directory or refuses
	// with cwd_changed.
	RootID, DirID procspec.FileID
	// ExecutableResolved is Executable with every symlink resolved: the
	// file that runs, which a person should see when it differs.
	ExecutableResolved string
	// ProgramID identifies that file as validated (device, inode, size,
	// modification and change time): Executor.Start refuses with
	// program_changed when the file at Executable is no longer it.
	ProgramID procspec.FileID
	// ProgramSHA256 is the hex SHA-256 of the program's content when it
	// lies inside the project (at most 64 MiB), checked again at start;
	// "" otherwise.
	ProgramSHA256 string
}

// Refusal is the error Validate returns: a stable machine-readable Code and a
// sentence a person understands.
type Refusal struct {
	// Code is stable: one of the Code* constants (docs/executor.md), e.g.
	// "redirection_token", "cwd_outside_project", "timeout_out_of_range",
	// "executable_not_found".
	Code string
	// Message says what was wrong, what it concerned and what to do.
	Message string
}

// Error returns the message.
func (r *Refusal) Error() string { return r.Message }

// Chunk is a piece of retained output read from a cursor.
type Chunk struct {
	// Data holds the bytes from the cursor (or from the oldest retained byte,
	// when Dropped) up to the requested maximum.
	Data []byte
	// Next is the cursor to pass to read what follows.
	Next int64
	// Dropped is true when bytes between the requested cursor and the first
	// byte of Data are no longer retained.
	Dropped bool
	// EOF is true when the stream has ended and Next is its total length.
	EOF bool
}

// ChangeSummary lists what a run changed under its working directory; it is
// declared in package runinfo so that the audit log and the hook can name it
// without linking the executor.
type ChangeSummary = runinfo.ChangeSummary
