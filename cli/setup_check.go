package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/agentgate/agentgate/cli/hook"
	"github.com/agentgate/agentgate/exec/shellword"
	"github.com/agentgate/agentgate/prefs/agents"
)

// hookTimeoutNeeded is the shortest agent-side hook timeout with which the
// hook always answers first: the hook gives up asking the person after
// hook.AskBudget, and needs a moment more to answer. An agent whose hook
// times out runs the tool anyway (Gemini CLI, Codex, Claude Code).
const hookTimeoutNeeded = hook.AskBudget + 30*time.Second

// wiring is what checking an agent's settings found.
type wiring struct {
	// ok are the things found in order, as sentences.
	ok []string
	// problems are the things that keep the hook from deciding, as
	// sentences saying what to do.
	problems []string
}

func (w *wiring) fine(format string, args ...any) { w.ok = append(w.ok, fmt.Sprintf(format, args...)) }
func (w *wiring) problem(format string, args ...any) {
	w.problems = append(w.problems, fmt.Sprintf(format, args...))
}

// checkWiring checks that agent's settings file (scope: the --scope it was
// written with) runs agentgate's hook and that the agent will really run
// it: the entry is there, its program exists, its timeout leaves the hook
// time to answer, and — per agent — nothing switches it off (Gemini CLI:
// hooksConfig.enabled, hooksConfig.disabled, folder trust for project
// settings; Codex: features.codex_hooks, the trust Codex requires, the
// PermissionRequest hook).
func checkWiring(agent, file, scope string, env setupEnv) wiring {
	var w wiring
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		w.problem("%s does not exist, so agentgate's hook is not wired: run `agentgate setup %s`", file, agent)
		return w
	}
	if err != nil {
		w.problem("reading %s: %v", file, err)
		return w
	}
	switch agent {
	case hook.ClaudeCode, hook.Gemini:
		checkJSONWiring(&w, agent, file, scope, data, env)
	case hook.Codex:
		checkCodexWiring(&w, file, data)
	}
	return w
}

// checkHookProgram checks that the hook command's program exists.
func checkHookProgram(w *wiring, agent, command string) {
	argv, _ := shellword.AgentCommand(command)
	if len(argv) == 0 {
		return
	}
	info, err := os.Stat(argv[0])
	switch {
	case err != nil:
		w.problem("the hook runs %s, which does not exist (moved or removed?); the agent then runs commands unchecked: run `agentgate setup %s` again", argv[0], agent)
	case runtime.GOOS != "windows" && info.Mode().Perm()&0o111 == 0:
		w.problem("the hook runs %s, which is not executable: run `agentgate setup %s` again", argv[0], agent)
	}
}

// checkJSONWiring checks Claude Code's or Gemini CLI's settings.json.
func checkJSONWiring(w *wiring, agent, file, scope string, data []byte, env setupEnv) {
	if !gjson.ValidBytes(data) {
		w.problem("%s is not plain JSON (comments?), so setup cannot check it; make sure hooks.%s runs agentgate", file, jsonHookEvent(agent))
		return
	}
	event := jsonHookEvent(agent)
	found := 0
	gjson.GetBytes(data, jsonPath("hooks", event)).ForEach(func(_, g gjson.Result) bool {
		g.Get("hooks").ForEach(func(_, h gjson.Result) bool {
			command := h.Get("command").String()
			if !isAgentgateHook(command, agent) {
				return true
			}
			found++
			checkHookProgram(w, agent, command)
			timeout := time.Duration(h.Get("timeout").Int())
			unit, def := time.Second, 600*time.Second
			if agent == hook.Gemini {
				unit, def = time.Millisecond, 60*time.Second
			}
			limit := timeout * unit
			if !h.Get("timeout").Exists() {
				limit = def
			}
			if limit < hookTimeoutNeeded {
				w.problem("the hook in %s times out after %v, before a person can answer on the card; when it times out the agent runs the command: set its timeout to %d (run `agentgate setup %s` on a file without it)",
					file, limit, int64(setupHookTimeout*time.Second/unit), agent)
			}
			if agent == hook.Gemini && gjsonContains(data, "hooksConfig.disabled", command) {
				w.problem("%s lists the hook in hooksConfig.disabled, so Gemini CLI never runs it: remove it there (or run `agentgate setup gemini`)", file)
			}
			w.fine("hooks.%s in %s runs %s", event, file, command)
			return true
		})
		return true
	})
	if found == 0 {
		w.problem("%s has no agentgate hook under hooks.%s: run `agentgate setup %s`", file, event, agent)
		return
	}
	if agent != hook.Gemini {
		return
	}
	// Gemini CLI: hooks are on unless a settings file switches them off;
	// the system settings win over the user's and the project's.
	for _, f := range geminiSettingsFiles(file, env) {
		other := data
		if f != file {
			var err error
			if other, err = os.ReadFile(f); err != nil || !gjson.ValidBytes(other) {
				continue
			}
		}
		if gjson.GetBytes(other, "hooksConfig.enabled").Type == gjson.False {
			w.problem("%s sets hooksConfig.enabled to false, so Gemini CLI runs no hooks and commands run unchecked: remove that setting", f)
		}
	}
	if scope == "project" || scope == "local" {
		w.fine("project settings: Gemini CLI runs project hooks only in folders it trusts (security.folderTrust), and asks about new project hooks once")
	}
}

// jsonHookEvent is the hook event setup wires in Claude Code's or Gemini
// CLI's settings.
func jsonHookEvent(agent string) string {
	if agent == hook.Gemini {
		return "BeforeTool"
	}
	return "PreToolUse"
}

// geminiSettingsFiles returns the Gemini CLI settings files that can switch
// hooks off, besides file: the system settings
// ($GEMINI_CLI_SYSTEM_SETTINGS_PATH, else /etc/gemini-cli/settings.json on
// Linux) and the system defaults beside them, and the user settings.
func geminiSettingsFiles(file string, env setupEnv) []string {
	sys := env.env("GEMINI_CLI_SYSTEM_SETTINGS_PATH")
	dir := "/etc/gemini-cli"
	switch runtime.GOOS {
	case "darwin":
		dir = "/Library/Application Support/GeminiCli"
	case "windows":
		dir = `C:\ProgramData\gemini-cli`
	}
	if sys == "" {
		sys = filepath.Join(dir, "settings.json")
	}
	files := []string{file, userSettingsFile(hook.Gemini, env), sys, filepath.Join(filepath.Dir(sys), "system-defaults.json")}
	out := files[:0]
	seen := map[string]bool{}
	for _, f := range files {
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
}

// gjsonContains reports whether the JSON array at path holds the string s.
func gjsonContains(data []byte, path, s string) bool {
	found := false
	gjson.GetBytes(data, path).ForEach(func(_, v gjson.Result) bool {
		found = v.String() == s
		return !found
	})
	return found
}

// geminiEnableEdit makes a Gemini CLI settings file run the hook command:
// hooksConfig.enabled false becomes true, and command leaves
// hooksConfig.disabled. done is true when nothing needed changing.
func geminiEnableEdit(data []byte, command string) ([]byte, bool, error) {
	out := data
	var err error
	if gjson.GetBytes(out, "hooksConfig.enabled").Type == gjson.False {
		if out, err = sjson.SetBytes(out, "hooksConfig.enabled", true); err != nil {
			return nil, false, err
		}
	}
	for {
		idx := -1
		gjson.GetBytes(out, "hooksConfig.disabled").ForEach(func(i, v gjson.Result) bool {
			if v.String() == command {
				idx = int(i.Int())
				return false
			}
			return true
		})
		if idx < 0 {
			break
		}
		if out, err = sjson.DeleteBytes(out, fmt.Sprintf("hooksConfig.disabled.%d", idx)); err != nil {
			return nil, false, err
		}
	}
	return out, string(out) == string(data), nil
}

// checkCodexWiring checks Codex's config.toml.
func checkCodexWiring(w *wiring, file string, data []byte) {
	cfg, err := readCodexConfig(data)
	if err != nil {
		w.problem("%s: %v", file, err)
		return
	}
	if cfg.hooksOff != "" {
		w.problem("%s sets %s = false, so Codex runs no hooks and commands run unchecked: run `agentgate setup codex` or remove that setting", file, cfg.hooksOff)
	}
	handlers := cfg.agentgateHandlers()
	wired := map[string]bool{}
	for _, h := range handlers {
		wired[h.Event] = true
		checkHookProgram(w, hook.Codex, h.Command)
		key := h.trustKey(file)
		state := cfg.state[key]
		switch {
		case state["enabled"] == false:
			w.problem("the %s hook is switched off in Codex ([hooks.state.%q] enabled = false): run `agentgate setup codex`", h.Event, key)
		case len(h.Unknown) > 0:
			w.problem("the %s hook carries settings setup cannot account for (%s); Codex asks to review it at start and `codex exec` skips it until then", h.Event, strings.Join(h.Unknown, ", "))
		case state["trusted_hash"] == nil:
			w.problem("Codex has not trusted the %s hook, so `codex exec` skips it silently (the TUI asks first): run `agentgate setup codex`", h.Event)
		case state["trusted_hash"] != h.trustedHash():
			w.problem("the %s hook changed since Codex trusted it, so `codex exec` skips it silently (the TUI asks first): run `agentgate setup codex`", h.Event)
		default:
			w.fine("hooks.%s in %s runs %s (trusted in Codex)", h.Event, file, h.Command)
		}
		if time.Duration(h.Timeout)*time.Second < hookTimeoutNeeded {
			w.problem("the %s hook times out after %ds, before a person can answer on the card; when it times out Codex runs the command: set timeout = %d", h.Event, h.Timeout, setupHookTimeout)
		}
	}
	if !wired["PreToolUse"] {
		w.problem("%s has no agentgate PreToolUse hook, so Codex runs commands unchecked: run `agentgate setup codex`", file)
	}
	if wired["PreToolUse"] && !wired["PermissionRequest"] {
		w.fine("no PermissionRequest hook: where Codex itself asks, it asks about allow-listed commands too (run `agentgate setup codex` to add it)")
	}
}

// reportWired records, after setup wrote (or found) the hook, which
// version of the agent it wired, and prints that with what checking the
// wiring found.
func reportWired(agent, file, scope string, env setupEnv) {
	a, _ := agents.Lookup(agent)
	f := askVersion(a, env)
	now := env.now().UTC()
	if err := agents.UpdateRecord(env.stateDir, agent, func(r *agents.Record) {
		r.SettingsFile, r.WiredVersion, r.WiredAt = file, f.Version, now
		recordInstalled(r, f, now)
	}); err != nil {
		fmt.Fprintf(env.stderr, "agentgate setup: recording the wired version: %v\n", err)
	}
	printVersion(f, env)
	w := checkWiring(agent, file, scope, env)
	for _, p := range w.problems {
		fmt.Fprintf(env.stdout, "problem: %s\n", p)
	}
}

// askVersion asks agent's program for its version.
func askVersion(a agents.Agent, env setupEnv) agents.VersionFinding {
	version := env.version
	if version == nil {
		version = agents.InstalledVersion
	}
	path, v, err := version(context.Background(), a.Program)
	return agents.VersionFinding{Agent: a, Executable: path, Version: v, Support: a.SupportOf(v), Err: err}
}

// recordInstalled notes in r the installed version f found at now (and
// where, when the finding names an executable).
func recordInstalled(r *agents.Record, f agents.VersionFinding, now time.Time) {
	r.InstalledVersion, r.CheckedAt = f.Version, now
	if f.Executable != "" {
		r.Executable = f.Executable
	}
}

// printVersion prints a version finding: the version with the tested ones,
// or the warning.
func printVersion(f agents.VersionFinding, env setupEnv) {
	if w := f.Warning(); w != "" {
		fmt.Fprintf(env.stdout, "warning: %s\n", w)
		return
	}
	fmt.Fprintf(env.stdout, "%s %s at %s (tested with %s).\n", f.Agent.Display, f.Version, f.Executable, strings.Join(f.Agent.Tested, ", "))
}

// runSetupCheck is `agentgate setup --check AGENT`: it asks the installed
// agent for its version (recording it, for the hook), warns when it is
// newer than the tested versions or unknown, and checks the wiring in file.
// Exit status 0 when there is nothing to report, 1 otherwise.
func runSetupCheck(agent, file, scope string, env setupEnv) int {
	a, _ := agents.Lookup(agent)
	f := askVersion(a, env)
	if err := agents.UpdateRecord(env.stateDir, agent, func(r *agents.Record) {
		recordInstalled(r, f, env.now().UTC())
	}); err != nil {
		fmt.Fprintf(env.stderr, "agentgate setup --check: recording the version: %v\n", err)
	}
	printVersion(f, env)
	w := checkWiring(agent, file, scope, env)
	for _, s := range w.ok {
		fmt.Fprintf(env.stdout, "ok: %s\n", s)
	}
	for _, p := range w.problems {
		fmt.Fprintf(env.stdout, "problem: %s\n", p)
	}
	if f.Warning() != "" || len(w.problems) > 0 {
		return 1
	}
	return 0
}
