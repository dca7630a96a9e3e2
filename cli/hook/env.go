package hook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"

	"github.com/agentgate/agentgate/agentbridge/audit"
	"github.com/agentgate/agentgate/agentbridge/client"
	"github.com/agentgate/agentgate/agentbridge/wire"
	"github.com/agentgate/agentgate/exec/procspec"
	"github.com/agentgate/agentgate/prefs"
	"github.com/agentgate/agentgate/prefs/agents"
)

// Env is what the hook needs from the world.
type Env struct {
	// Stdin carries the agent's hook JSON; Stdout receives the answer;
	// Stderr receives diagnostics the agent may show or log.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Paths are the config and state directories: the allow-lists and trust
	// state are read from Paths.ConfigDir / StateDir, the audit log is
	// appended under Paths.StateDir.
	Paths prefs.Paths
	// Socket is the bridge socket path; "" means the default (the
	// AGENTGATE_SOCKET override, else the per-user socket).
	Socket string
	// Home is the person's home directory: the project the desktop card
	// names when the agent gave no absolute working directory.
	Home string
}

// DefaultEnv is the hook's Env for this process: the standard streams, the
// person's XDG directories and home, and the default bridge socket.
func DefaultEnv() Env {
	home, _ := os.UserHomeDir()
	return Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Paths: prefs.DefaultPaths(), Home: home}
}

// Main is the agentgate-hook executable: args are its arguments (one agent
// name: claude-code, gemini or codex) and the result is the exit code, as
// Run with DefaultEnv.
func Main(args []string) int {
	return Run(args, DefaultEnv())
}

// Run is `agentgate hook AGENT` with args = [AGENT]: it reads the agent's
// hook JSON from e.Stdin, decides (allow-lists, then the desktop card), writes
// the answer in the agent's format to e.Stdout and returns 0. It returns 0
// for every input once the agent is known — unreadable input is answered
// like an unreachable app (ask, or no decision for Gemini), never allow —
// because several agents run the tool anyway when a hook exits non-zero. It
// returns 2, printing usage on e.Stderr, when args is not exactly one known
// agent name.
//
// Nothing is opened before it is needed: a tool call that is not a shell
// command touches no file and no socket, and an allowed one reads only the
// global list, the agent's provider list, the project's list and the trust
// state, then appends its two audit entries (proposal and decision) with
// one write and one fsync.
func Run(args []string, e Env) int {
	deps, closeDeps := realDeps(e)
	defer closeDeps()
	return runHook(args, e.Stdin, e.Stdout, e.Stderr, deps)
}

// realDeps connects the hook to the person's allow-lists, audit log and
// desktop app, each opened on first use, and returns the function that
// closes the audit log if it was opened (so that a caller running the hook
// in-process, as the tests do, leaves no handle open: on Windows an open
// file cannot be deleted).
func realDeps(e Env) (hookDeps, func()) {
	var store *prefs.Store
	var storeErr error
	var log *audit.Log
	closeLog := func() {
		if log != nil {
			log.Close()
		}
	}
	return hookDeps{
		decide: func(q prefs.Query) prefs.Decision {
			if store == nil && storeErr == nil {
				store, storeErr = prefs.Open(e.Paths)
				if storeErr != nil {
					fmt.Fprintf(e.Stderr, "agentgate hook: reading the allow-lists: %v\n", storeErr)
				}
			}
			if store == nil {
				return prefs.Decision{}
			}
			return store.Decide(q)
		},
		audit: func(entries ...audit.Entry) error {
			if log == nil {
				var err error
				if log, err = audit.Open(audit.Path(e.Paths.StateDir), audit.Options{Host: "hook"}); err != nil {
					return err
				}
			}
			return log.Append(entries...)
		},
		grant: func(argv []string, dir, provider, projectRoot string) (prefs.GrantMatch, bool, error) {
			return prefs.OpenGrants(e.Paths).Match(prefs.GrantQuery{Argv: argv, Provider: provider, Project: projectRoot,
				Resolve: func(argv0 string) (string, procspec.FileID, bool) { return ResolveProgram(argv0, dir) }})
		},
		ask:         func(ctx context.Context, q hookQuestion) (bool, string, error) { return askBridge(ctx, e, q) },
		projectRoot: prefs.ProjectRoot,
		claudeAsk:   func() bool { return agents.ClaudeAskShowsPrompt(e.Paths.StateDir) },
		checkDirs: func(projects ...string) error {
			return prefs.CheckDirs(e.Paths, wire.SocketPlace(e.Socket), projects...)
		},
	}, closeLog
}

// ResolveProgram returns the absolute path the agent's shell would run for
// argv0 in dir, as far as the hook can tell, and the identity of that file
// (symlinks followed): a name is looked up on the hook's PATH (the
// agent's, which the hook inherits), a path is taken relative to dir. ok is
// false when no executable file is found, or the first one found is in a
// relative PATH entry (such as "."): then no grant can match.
func ResolveProgram(argv0, dir string) (string, procspec.FileID, bool) {
	if strings.ContainsRune(argv0, filepath.Separator) || strings.ContainsRune(argv0, '/') {
		if !filepath.IsAbs(argv0) {
			if !filepath.IsAbs(dir) {
				return "", procspec.FileID{}, false
			}
			argv0 = filepath.Join(dir, argv0)
		}
		argv0 = filepath.Clean(argv0)
	}
	path, err := osexec.LookPath(argv0)
	if err != nil || !filepath.IsAbs(path) {
		return "", procspec.FileID{}, false
	}
	id, err := procspec.StatFileID(path)
	if err != nil {
		return "", procspec.FileID{}, false
	}
	return path, id, true
}

// askBridge asks the person through the running app's bridge.
func askBridge(ctx context.Context, e Env, q hookQuestion) (bool, string, error) {
	c, err := client.Dial(e.Socket)
	if err != nil {
		return false, "", fmt.Errorf("%w: %v", errAppUnreachable, err)
	}
	defer c.Close()
	root := q.ProjectRoot
	if root == "" {
		root = q.Cwd
	}
	if root == "" || !filepath.IsAbs(root) {
		root = e.Home
	}
	if _, err := c.Hello(ctx, wire.HelloParams{Provider: q.Provider, ProjectRoot: root, Client: q.Client}); err != nil {
		if !client.IsRemote(err) {
			return false, "", fmt.Errorf("%w: %v", errAppUnreachable, err)
		}
		return false, "", fmt.Errorf("the agentgate app refused the hook's session: %v", err)
	}
	res, err := c.HookAsk(ctx, wire.HookAskParams{CommandLine: q.CommandLine, Cwd: q.Cwd, Reason: q.Reason, AgentTool: q.AgentTool})
	if err != nil {
		var remote *client.Error
		switch {
		case !client.IsRemote(err):
			return false, "", fmt.Errorf("%w: %v", errAppUnreachable, err)
		case client.Code(err) == wire.RefuseDenied && errors.As(err, &remote):
			return false, remote.Message, nil
		case client.Code(err) == wire.RefuseStopped && errors.As(err, &remote):
			// The person chose "Stop everything": their refusal.
			return false, remote.Message, nil
		}
		return false, "", fmt.Errorf("the agentgate app could not get a person's answer: %v", err)
	}
	return res.Decision == "allow", res.Message, nil
}
