// Package cli is agentgate's terminal host and the agents' adapters: run,
// allow, ps, cancel, log, mcp, hook and setup.
//
// Every subcommand is a thinner host than the desktop app, never a more
// privileged one: it goes through the same validation (package exec), the
// same allow-lists (package prefs), the same broker and audit log (package
// agentbridge). See docs/integrations.md for the agent adapters.
package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/term"

	"github.com/agentgate/agentgate/agentbridge/wire"
	"github.com/agentgate/agentgate/cli/hook"
	"github.com/agentgate/agentgate/prefs"
)

// Main runs the subcommand named by args[0] with the rest of args and returns
// the process exit code. args must not be empty.
func Main(args []string) int {
	return dispatch(args, defaultEnv())
}

// MainMCP is `agentgate mcp ARGS…` for the lean executable agentgate-mcp
// (cmd/agentgate-mcp): the app it starts when none runs is the agentgate
// executable beside it.
func MainMCP(args []string) int {
	e := defaultEnv()
	e.executable = filepath.Join(filepath.Dir(e.executable), executableFileName("agentgate"))
	return runMCP(args, e)
}

// env is what a subcommand needs from the world; tests build their own.
type env struct {
	// stdin, stdout and stderr are the process's streams; dispatch makes
	// stdout and stderr termWriters for every subcommand but the agents'
	// adapters (hook, mcp's protocol stream).
	stdin          io.Reader
	stdout, stderr io.Writer
	// rawStdout and rawStderr are the streams unescaped, for a run's own
	// output (`agentgate run`); nil means stdout and stderr as given.
	rawStdout, rawStderr io.Writer
	// stdinIsTerminal reports whether a person can answer at stdin.
	stdinIsTerminal func() bool
	// paths are the config and state directories.
	paths prefs.Paths
	// socket is the bridge socket path ("" means the per-user default).
	socket string
	// cwd is the working directory; home the person's home directory.
	cwd, home string
	// executable is the absolute path of the running agentgate binary.
	executable string
	// now is the clock.
	now func() time.Time
}

func defaultEnv() env {
	cwd, _ := os.Getwd()
	home, _ := os.UserHomeDir()
	exe, err := os.Executable()
	if err == nil {
		if resolved, err := filepath.EvalSymlinks(exe); err == nil {
			exe = resolved
		}
	}
	return env{
		stdin:           os.Stdin,
		stdout:          os.Stdout,
		stderr:          os.Stderr,
		stdinIsTerminal: func() bool { return term.IsTerminal(int(os.Stdin.Fd())) },
		paths:           prefs.DefaultPaths(),
		cwd:             cwd,
		home:            home,
		executable:      exe,
		now:             time.Now,
	}
}

func dispatch(args []string, e env) int {
	if e.rawStdout == nil {
		e.rawStdout, e.rawStderr = e.stdout, e.stderr
	}
	agent := e // the agents' adapters speak their protocols unescaped
	e.stdout, e.stderr = termWriter{e.stdout}, termWriter{e.stderr}
	switch args[0] {
	case "setup", "run", "allow", "ps", "cancel", "log":
		// Every command that reads or writes agentgate's places, before
		// it does. hook and mcp check them for the project they serve
		// (cli/hook, runMCP); help, version and socket-path read nothing.
		if err := e.checkDirs(); err != nil {
			fmt.Fprintf(e.stderr, "agentgate %s: %v\n", args[0], err)
			return exitDeclined
		}
	}
	switch args[0] {
	case "help", "-h", "--help":
		usage(e.stdout)
		return 0
	case "version", "--version":
		fmt.Fprintln(e.stdout, Version())
		return 0
	case "socket-path":
		return runSocketPath(args[1:], e.stdout, e.stderr)
	case "hook":
		return hook.Run(args[1:], hook.Env{Stdin: agent.stdin, Stdout: agent.stdout, Stderr: agent.stderr, Paths: e.paths, Socket: e.socket, Home: e.home})
	case "setup":
		return runSetup(args[1:], setupEnv{
			stdin: e.stdin, stdout: e.stdout, stderr: e.stderr, isTerminal: e.stdinIsTerminal,
			executable: e.executable, home: e.home, cwd: e.cwd, now: e.now,
			getenv: os.Getenv, stateDir: e.paths.StateDir,
		})
	case "run":
		return runRun(args[1:], e)
	case "allow":
		return runAllow(args[1:], e)
	case "ps":
		return runPs(args[1:], e)
	case "cancel":
		return runCancel(args[1:], e)
	case "log":
		return runLog(args[1:], e)
	case "mcp":
		mcp := e
		mcp.stdout = agent.stdout // the MCP protocol stream
		return runMCP(args[1:], mcp)
	default:
		fmt.Fprintf(e.stderr, "agentgate: unknown command %q\n", args[0])
		usage(e.stderr)
		return 2
	}
}

// checkDirs refuses e's configuration and state directories and bridge
// socket (prefs.CheckDirs) when a variable chose one inside the current
// directory's project, inside one of projects (real paths), or where the
// commands agentgate runs may write. A socket that cannot be placed is not
// checked (connecting then says why).
func (e env) checkDirs(projects ...string) error {
	if e.cwd != "" {
		if root, err := prefs.ProjectRoot(e.cwd); err == nil {
			projects = append(projects, root)
		}
	}
	return prefs.CheckDirs(e.paths, wire.SocketPlace(e.socket), projects...)
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage: agentgate [command]

With no command, agentgate starts the desktop app; with --background, the app
without showing its window (a card still shows when an agent asks; starting
agentgate again brings the window forward).

Commands:
  run [--cwd DIR] [--timeout DUR] [--provider NAME] -- ARGV...
                 run a command through the gate (asks at the terminal when no rule allows it)
                 in the current directory's project (--cwd must lie inside it; --timeout 1ms..10m)
  allow list|add|rm|check|trust [--provider NAME] [--project DIR] [-- ARGV...]
                 show and change the allow-lists (list --stats: uses per rule,
                 unused and redundant rules)
  allow grants [--project DIR]
                 the temporary grants in force, with their time left
  allow revoke ID | --all
                 end temporary grants now
  ps [--all]     list running runs of every host (--all: finished ones too)
  cancel ID      cancel a run, whichever process hosts it
  log [-f] [-n N] [--json]
                 show the audit log, the last N entries (default 50; 0: all),
                 across rotated and compressed files (-f: then follow)
  mcp [--provider NAME] [--project DIR]
                 stdio MCP server for agents (needs the desktop app)
  hook claude-code|gemini|codex
                 an agent's pre-tool hook: decide a shell command
                 (agentgate-hook AGENT, beside agentgate, is the same, faster to start)
  setup claude-code|gemini|codex|mcp-json
                 add agentgate to an agent's settings
  setup --check claude-code|gemini|codex
                 check the agent's version and that its hook is wired and active
  socket-path    print the bridge socket path the desktop app listens on
  version        print the version and commit (also --version)
  help           show this help

Exit codes: 0 success; 1 the command ran and did not succeed, or not allowed
(allow check); 2 agentgate declined, could not start it, or usage.
`)
}
