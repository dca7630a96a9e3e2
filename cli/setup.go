package cli

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/agentgate/agentgate/cli/hook"
	"github.com/agentgate/agentgate/exec/display"
	"github.com/agentgate/agentgate/exec/shellword"
	"github.com/agentgate/agentgate/prefs"
	"github.com/agentgate/agentgate/prefs/agents"
)

// setupHookTimeout is the hook timeout `agentgate setup` writes, in seconds:
// long enough for a person to answer the desktop card (the hook itself gives
// up after hook.AskBudget and hands the decision back).
const setupHookTimeout = 600

// setupEnv is what `agentgate setup` needs from the world, replaced in tests.
type setupEnv struct {
	// stdin is where the y/N answer is read.
	stdin io.Reader
	// stdout shows the diff and messages; stderr shows errors.
	stdout, stderr io.Writer
	// isTerminal reports whether stdin is a terminal a person answers at.
	isTerminal func() bool
	// executable is the absolute path of the running agentgate binary.
	executable string
	// home is the person's home directory.
	home string
	// cwd is the working directory (the default project).
	cwd string
	// now stamps backups and records.
	now func() time.Time
	// getenv reads the environment (CLAUDE_CONFIG_DIR, GEMINI_CLI_HOME,
	// CODEX_HOME move the agents' settings); nil reads nothing.
	getenv func(string) string
	// stateDir is where the agent records are kept (prefs/agents).
	stateDir string
	// version asks an agent's program for its version
	// (agents.InstalledVersion); nil means that.
	version func(ctx context.Context, program string) (path, version string, err error)
}

// env returns the environment variable name, "" when unset or without a
// getenv.
func (e setupEnv) env(name string) string {
	if e.getenv == nil {
		return ""
	}
	return e.getenv(name)
}

// setupTarget is one settings file and the edit it needs.
type setupTarget struct {
	// file is the settings file's path.
	file string
	// edit returns the new content, or done=true when agentgate is already
	// set up (content unchanged).
	edit func(old []byte) (updated []byte, done bool, err error)
}

// runSetup is `agentgate setup AGENT [flags]` and `agentgate setup --check
// AGENT [flags]`. Exit codes: 0 written, already set up, or (--check)
// nothing to report; 1 declined or failed, or (--check) something needs the
// person's attention; 2 usage, or no terminal to confirm at (the file is
// left unchanged).
func runSetup(args []string, env setupEnv) int {
	check := len(args) > 0 && args[0] == "--check"
	if check {
		args = args[1:]
	}
	if len(args) == 0 {
		setupUsage(env.stderr)
		return 2
	}
	agent := args[0]
	flags := flag.NewFlagSet("setup "+agent, flag.ContinueOnError)
	flags.SetOutput(env.stderr)
	scope := flags.String("scope", "user", "which settings: user, project or local (Claude Code only: .claude/settings.local.json)")
	project := flags.String("project", "", "project directory for --scope project/local and mcp-json (default: the current directory's project)")
	file := flags.String("file", "", "edit this settings file instead of the agent's default")
	if err := flags.Parse(args[1:]); err != nil || flags.NArg() != 0 {
		setupUsage(env.stderr)
		return 2
	}
	projectRoot := func() (string, error) {
		dir := *project
		if dir == "" {
			dir = env.cwd
		}
		return prefs.ProjectRoot(dir)
	}
	explicit := false
	flags.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "scope" || f.Name == "file" })
	if check && agent == "mcp-json" {
		fmt.Fprintln(env.stderr, "agentgate setup --check: checks an agent's hook (claude-code, gemini or codex)")
		return 2
	}
	if check && !explicit {
		// The file setup wired, when it recorded one.
		if recs, err := agents.LoadRecords(env.stateDir); err == nil && recs[agent].SettingsFile != "" {
			*file = recs[agent].SettingsFile
		}
	}
	target, err := setupTargetFor(agent, *scope, *file, env, projectRoot)
	if err != nil {
		fmt.Fprintf(env.stderr, "agentgate setup: %v\n", err)
		return 2
	}
	if check {
		return runSetupCheck(agent, target.file, *scope, env)
	}
	code := applySetup(target, env)
	if code == 0 && agent != "mcp-json" {
		reportWired(agent, target.file, *scope, env)
	}
	return code
}

func setupUsage(w io.Writer) {
	fmt.Fprint(w, `usage: agentgate setup claude-code|gemini|codex|mcp-json [--scope user|project|local] [--project DIR] [--file PATH]
       agentgate setup --check claude-code|gemini|codex [--scope …] [--file PATH]

  claude-code  adds a PreToolUse hook for Bash to ~/.claude/settings.json
               (--scope project: <project>/.claude/settings.json, local: .claude/settings.local.json)
  gemini       adds a BeforeTool hook for run_shell_command to ~/.gemini/settings.json
               (--scope project: <project>/.gemini/settings.json)
  codex        adds a PreToolUse hook for Bash to ~/.codex/config.toml
               (--scope project: <project>/.codex/config.toml)
  mcp-json     adds the agentgate MCP server to <project>/.mcp.json
               (--file for another file of the same shape, e.g. ~/.cursor/mcp.json)

The diff is shown and you confirm at the terminal; the old file is kept as
<file>.agentgate-backup-<time>. Setup records the agent's version (AGENT
--version) and reports what the agent needs for the hook to run.

--check asks the installed agent for its version, warns when it is newer than
the versions agentgate was tested with, and checks that the hook is wired and
active (the file setup wrote, unless --scope or --file names another). Exit
status 1 when something needs your attention. The app runs the version check
at start too.
`)
}

// setupTargetFor picks the settings file and edit for agent and scope.
func setupTargetFor(agent, scope, file string, env setupEnv, projectRoot func() (string, error)) (setupTarget, error) {
	hookCommand := hookCommandFor(env.executable, agent)
	var user, project, local string
	switch agent {
	case hook.ClaudeCode:
		user, project, local = userSettingsFile(agent, env), filepath.Join(".claude", "settings.json"), filepath.Join(".claude", "settings.local.json")
	case hook.Gemini:
		user, project = userSettingsFile(agent, env), filepath.Join(".gemini", "settings.json")
	case hook.Codex:
		user, project = userSettingsFile(agent, env), filepath.Join(".codex", "config.toml")
	case "mcp-json":
		project = ".mcp.json"
		scope = "project"
	default:
		return setupTarget{}, fmt.Errorf("unknown agent %q: choose claude-code, gemini, codex or mcp-json", agent)
	}
	if file == "" {
		switch {
		case scope == "user" && user != "":
			file = user
		case scope == "project" && project != "", scope == "local" && local != "":
			root, err := projectRoot()
			if err != nil {
				return setupTarget{}, fmt.Errorf("finding the project: %v", err)
			}
			rel := project
			if scope == "local" {
				rel = local
			}
			file = filepath.Join(root, rel)
		default:
			return setupTarget{}, fmt.Errorf("%s has no %q settings: use --scope user or project", agent, scope)
		}
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return setupTarget{}, err
	}
	t := setupTarget{file: abs}
	switch agent {
	case hook.ClaudeCode:
		t.edit = jsonHookEdit([]string{"hooks", "PreToolUse"}, agent, hookCommand, jsonHookGroup{
			Matcher: "Bash", Hooks: []jsonHook{{Type: "command", Command: hookCommand, Timeout: setupHookTimeout}},
		})
	case hook.Gemini:
		addHook := jsonHookEdit([]string{"hooks", "BeforeTool"}, agent, hookCommand, jsonHookGroup{
			Matcher: "run_shell_command", Hooks: []jsonHook{{Type: "command", Command: hookCommand, Timeout: setupHookTimeout * 1000}},
		})
		t.edit = func(old []byte) ([]byte, bool, error) {
			updated, done, err := addHook(old)
			if err != nil {
				return nil, false, err
			}
			// Gemini CLI runs no hooks with hooksConfig.enabled false, and
			// none listed in hooksConfig.disabled.
			enabled, nothing, err := geminiEnableEdit(updated, hookCommand)
			return enabled, done && nothing, err
		}
	case hook.Codex:
		t.edit = func(old []byte) ([]byte, bool, error) { return codexHookEdit(old, abs, hookCommand) }
	case "mcp-json":
		t.edit = func(old []byte) ([]byte, bool, error) { return mcpJSONEdit(old, env.executable) }
	}
	return t, nil
}

// userSettingsFile returns the agent's user settings file as the agent
// finds it: Claude Code's $CLAUDE_CONFIG_DIR/settings.json (default
// ~/.claude), Gemini CLI's $GEMINI_CLI_HOME/.gemini/settings.json (default
// home ~), Codex's $CODEX_HOME/config.toml with CODEX_HOME's symlinks
// resolved as Codex resolves them (default ~/.codex, as is) — the path is
// part of Codex's hook trust keys.
func userSettingsFile(agent string, env setupEnv) string {
	switch agent {
	case hook.ClaudeCode:
		if dir := env.env("CLAUDE_CONFIG_DIR"); dir != "" {
			return filepath.Join(dir, "settings.json")
		}
		return filepath.Join(env.home, ".claude", "settings.json")
	case hook.Gemini:
		home := env.home
		if dir := env.env("GEMINI_CLI_HOME"); dir != "" {
			home = dir
		}
		return filepath.Join(home, ".gemini", "settings.json")
	case hook.Codex:
		if dir := env.env("CODEX_HOME"); dir != "" {
			if resolved, err := filepath.EvalSymlinks(dir); err == nil {
				dir = resolved
			}
			return filepath.Join(dir, "config.toml")
		}
		return filepath.Join(env.home, ".codex", "config.toml")
	}
	return ""
}

// jsonHookGroup is one matcher group in Claude Code's or Gemini's "hooks"
// settings; field order is the order written.
type jsonHookGroup struct {
	// Matcher selects the tool.
	Matcher string `json:"matcher"`
	// Hooks are the commands run for it.
	Hooks []jsonHook `json:"hooks"`
}

// jsonHook is one command hook.
type jsonHook struct {
	// Type is always "command".
	Type string `json:"type"`
	// Command is the shell command the agent runs.
	Command string `json:"command"`
	// Timeout is in seconds (Claude Code) or milliseconds (Gemini).
	Timeout int `json:"timeout"`
}

// jsonHookEdit returns an edit that appends group to the list at path unless
// a hook running `agentgate hook AGENT` or `agentgate-hook AGENT` is already
// there; one with another command (a moved binary, or the other of the two
// forms) has its command replaced in place.
func jsonHookEdit(path []string, agent, command string, group jsonHookGroup) func([]byte) ([]byte, bool, error) {
	return func(old []byte) ([]byte, bool, error) {
		if len(old) > 0 && !gjson.ValidBytes(old) {
			return nil, false, errors.New("the file is not plain JSON (comments or a syntax error?); add the hook by hand")
		}
		list := gjson.GetBytes(old, jsonPath(path...))
		var found string
		list.ForEach(func(gi, g gjson.Result) bool {
			g.Get("hooks").ForEach(func(hi, h gjson.Result) bool {
				if isAgentgateHook(h.Get("command").String(), agent) {
					found = jsonPath(path...) + "." + gi.String() + ".hooks." + hi.String() + ".command"
					return false
				}
				return true
			})
			return found == ""
		})
		if found != "" {
			if gjson.GetBytes(old, found).String() == command {
				return old, true, nil
			}
			updated, err := sjson.SetBytes(old, found, command)
			return updated, false, err
		}
		updated, err := jsonInsert(old, path, group, true)
		return updated, false, err
	}
}

// hookExecutableName is the lean hook executable's file name on this system
// (cmd/agentgate-hook).
func hookExecutableName() string { return executableFileName("agentgate-hook") }

// executableFileName returns base as an executable's file name on this
// system: with ".exe" on Windows.
func executableFileName(base string) string {
	if runtime.GOOS == "windows" {
		return base + ".exe"
	}
	return base
}

// leanBeside returns the path of the executable named name in the
// directory of executable, when a regular file of that name sits there —
// executable by someone, on Unix.
func leanBeside(executable, name string) (string, bool) {
	lean := filepath.Join(filepath.Dir(executable), name)
	fi, err := os.Stat(lean)
	return lean, err == nil && fi.Mode().IsRegular() && (runtime.GOOS == "windows" || fi.Mode().Perm()&0o111 != 0)
}

// hookCommandFor returns the hook command `agentgate setup` writes for
// agent, given the absolute path of the running agentgate executable:
//
//   - `<dir>/agentgate-hook AGENT` when a regular file named agentgate-hook
//     (agentgate-hook.exe on Windows) sits in the same directory as
//     agentgate — executable by someone, on Unix —, since it starts faster
//     than agentgate, which links the desktop UI (ARCHITECTURE.md);
//   - `<agentgate> hook AGENT` otherwise.
//
// The path is quoted for the agent's shell when it needs quoting.
func hookCommandFor(executable, agent string) string {
	if lean, ok := leanBeside(executable, hookExecutableName()); ok {
		return display.Word(lean) + " " + agent
	}
	return display.Word(executable) + " hook " + agent
}

// isAgentgateHook reports whether a hook command runs `agentgate hook
// agent` or `agentgate-hook agent` (any path to a program of that name,
// with or without .exe).
func isAgentgateHook(command, agent string) bool {
	argv, _ := shellword.AgentCommand(command)
	if len(argv) == 0 {
		return false
	}
	base := strings.TrimSuffix(filepath.Base(strings.ReplaceAll(argv[0], `\`, "/")), ".exe")
	switch {
	case base == "agentgate":
		return len(argv) == 3 && argv[1] == "hook" && argv[2] == agent
	case base == "agentgate-hook":
		return len(argv) == 2 && argv[1] == agent
	}
	return false
}

// mcpCommandFor returns the MCP server command `agentgate setup` writes,
// given the absolute path of the running agentgate executable: the lean
// agentgate-mcp beside it (no arguments) when there is one, since it starts
// in milliseconds where agentgate, which links the desktop UI, takes about
// a tenth of a second (BENCHMARKS.md); `<agentgate> mcp` otherwise.
func mcpCommandFor(executable string) (string, []string) {
	if lean, ok := leanBeside(executable, executableFileName("agentgate-mcp")); ok {
		return lean, []string{}
	}
	return executable, []string{"mcp"}
}

// mcpJSONEdit adds {"command": …, "args": […]} (mcpCommandFor) under
// mcpServers.agentgate, or updates command and args of an existing entry.
func mcpJSONEdit(old []byte, exe string) ([]byte, bool, error) {
	command, cmdArgs := mcpCommandFor(exe)
	entry := gjson.GetBytes(old, jsonPath("mcpServers", "agentgate"))
	if !entry.Exists() {
		updated, err := jsonInsert(old, []string{"mcpServers", "agentgate"}, struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		}{command, cmdArgs}, false)
		return updated, false, err
	}
	var args []string
	for _, a := range entry.Get("args").Array() {
		args = append(args, a.String())
	}
	if entry.Get("command").String() == command && slices.Equal(args, cmdArgs) {
		return old, true, nil
	}
	updated, err := sjson.SetBytes(old, jsonPath("mcpServers", "agentgate", "command"), command)
	if err == nil {
		updated, err = sjson.SetBytes(updated, jsonPath("mcpServers", "agentgate", "args"), cmdArgs)
	}
	return updated, false, err
}

// tomlString returns s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// parseTOMLString reads v, the value of a TOML key/value line (a trailing
// comment allowed), as a string with the TOML decoder; ok is false when it
// is not one string.
func parseTOMLString(v string) (string, bool) {
	var doc struct {
		V string `toml:"v"`
	}
	if _, err := toml.Decode("v = "+v, &doc); err != nil {
		return "", false
	}
	return doc.V, true
}

// applySetup shows the diff, asks, backs up and writes.
func applySetup(t setupTarget, env setupEnv) int {
	old, err := os.ReadFile(t.file)
	existed := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(env.stderr, "agentgate setup: reading %s: %v\n", t.file, err)
		return 1
	}
	updated, done, err := t.edit(old)
	if err != nil {
		fmt.Fprintf(env.stderr, "agentgate setup: editing %s: %v\n", t.file, err)
		return 1
	}
	if done {
		fmt.Fprintf(env.stdout, "agentgate is already set up in %s; nothing changed.\n", t.file)
		return 0
	}
	oldName := t.file
	if !existed {
		oldName = "/dev/null"
	}
	fmt.Fprint(env.stdout, unifiedDiff(oldName, t.file, old, updated))
	if !env.isTerminal() {
		fmt.Fprintf(env.stderr, "agentgate setup: not changing %s: confirming needs a terminal. Run this command in a terminal, or make the change above by hand.\n", t.file)
		return 2
	}
	fmt.Fprintf(env.stdout, "Write this change to %s? [y/N] ", t.file)
	answer, _ := bufio.NewReader(env.stdin).ReadString('\n')
	answer = strings.ToLower(strings.TrimSpace(answer))
	if answer != "y" && answer != "yes" {
		fmt.Fprintf(env.stdout, "Nothing changed.\n")
		return 1
	}
	perm := fs.FileMode(0o600)
	if existed {
		info, err := os.Stat(t.file)
		if err != nil {
			fmt.Fprintf(env.stderr, "agentgate setup: %v\n", err)
			return 1
		}
		perm = info.Mode().Perm()
		backup := t.file + ".agentgate-backup-" + env.now().Format("20060102-150405")
		if err := prefs.WriteFileAtomic(backup, old, perm); err != nil {
			fmt.Fprintf(env.stderr, "agentgate setup: keeping a backup at %s failed, so nothing was changed: %v\n", backup, err)
			return 1
		}
		fmt.Fprintf(env.stdout, "Backup: %s\n", backup)
	} else if err := os.MkdirAll(filepath.Dir(t.file), 0o755); err != nil {
		fmt.Fprintf(env.stderr, "agentgate setup: creating %s: %v\n", filepath.Dir(t.file), err)
		return 1
	}
	if err := prefs.WriteFileAtomic(t.file, updated, perm); err != nil {
		fmt.Fprintf(env.stderr, "agentgate setup: writing %s: %v\n", t.file, err)
		return 1
	}
	fmt.Fprintf(env.stdout, "Wrote %s.\n", t.file)
	return 0
}
