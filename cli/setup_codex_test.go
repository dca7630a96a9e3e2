package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/prefs/agents"
)

// TestCodexTrustedHashMatchesCodex: the hash Codex 0.169.0 itself wrote
// into config.toml when a person chose "Trust all and continue" in its TUI
// for a PreToolUse handler {type = "command", command = "/usr/bin/agentgate-hook
// codex", timeout = 600} in a group with matcher = "Bash".
func TestCodexTrustedHashMatchesCodex(t *testing.T) {
	matcher := "Bash"
	h := codexHandler{Event: "PreToolUse", Label: "pre_tool_use", Matcher: &matcher,
		Command: "/usr/bin/agentgate-hook codex", Timeout: 600}
	if got, want := h.trustedHash(), "sha256:0c76a51c39e90aa5219ee369fa71692fae113604b790da4c3521602837474b37"; got != want {
		t.Errorf("trustedHash() = %s, want %s (as Codex 0.169.0 computed it)", got, want)
	}
	if got, want := h.trustKey("/home/ada/.codex/config.toml"), "/home/ada/.codex/config.toml:pre_tool_use:0:0"; got != want {
		t.Errorf("trustKey = %q, want %q", got, want)
	}
}

func TestSerdeJSONString(t *testing.T) {
	for in, want := range map[string]string{
		`plain`:           `"plain"`,
		"q\"b\\":          `"q\"b\\"`,
		"\b\t\n\f\r":      `"\b\t\n\f\r"`,
		"\x01\x1f\x7f":    `"\u0001\u001f` + "\x7f\"",
		"café <&> \u2028": "\"café <&> \u2028\"",
	} {
		if got := serdeJSONString(in); got != want {
			t.Errorf("serdeJSONString(%q) = %s, want %s", in, got, want)
		}
	}
}

// codexSetup runs `agentgate setup codex` with executable exe on home's
// config.toml and returns the file's content.
func codexSetup(t *testing.T, home, exe string) (string, *setupHarness) {
	t.Helper()
	h := newSetupHarness(t, true, "y\n")
	h.env.home, h.env.cwd, h.env.executable = home, filepath.Join(home, "project"), exe
	if err := os.MkdirAll(filepath.Dir(exe), 0o755); err != nil {
		t.Fatal(err)
	}
	writeExecutable(t, exe)
	if code := runSetup([]string{"codex"}, h.env); code != 0 {
		t.Fatalf("setup codex: exit %d: %s%s", code, h.stdout.String(), h.stderr.String())
	}
	data, err := os.ReadFile(filepath.Join(home, ".codex", "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data), h
}

// TestSetupCodexTrustsAndRenews: setup wires PreToolUse and
// PermissionRequest, records the person's trust as Codex stores it, and a
// second setup with a moved binary rewrites the command in place and
// renews the trust — one state table per hook, no duplicates.
func TestSetupCodexTrustsAndRenews(t *testing.T) {
	h0 := newSetupHarness(t, true, "")
	home := h0.home
	bin1, bin2 := filepath.Join(home, "opt", "agentgate"), filepath.Join(home, "usr", "bin", "agentgate")
	file := filepath.Join(home, ".codex", "config.toml")
	copySample(t, "codex-config.toml", file)
	data, h := codexSetup(t, home, bin1)
	cfg, err := readCodexConfig([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	handlers := cfg.agentgateHandlers()
	if len(handlers) != 2 || handlers[0].Event != "PreToolUse" || handlers[1].Event != "PermissionRequest" {
		t.Fatalf("handlers %+v\n%s", handlers, data)
	}
	for _, hd := range handlers {
		if hd.Command != hookCommand(bin1, "hook", "codex") || hd.Timeout != 600 || *hd.Matcher != "Bash" {
			t.Errorf("handler %+v", hd)
		}
		if got := cfg.state[hd.trustKey(file)]["trusted_hash"]; got != hd.trustedHash() {
			t.Errorf("%s: trusted_hash %v, want %s\n%s", hd.Event, got, hd.trustedHash(), data)
		}
	}
	if w := checkWiring("codex", file, "user", h.env); len(w.problems) != 0 {
		t.Errorf("check after setup: %q", w.problems)
	}
	recs, err := agents.LoadRecords(h.env.stateDir)
	if r := recs["codex"]; err != nil || r.WiredVersion != "0.169.0" || r.SettingsFile != file || r.Executable != "/usr/bin/codex" {
		t.Errorf("record %+v, %v", r, err)
	}
	if !strings.Contains(h.stdout.String(), "Codex 0.169.0 at /usr/bin/codex (tested with 0.169.0)") {
		t.Errorf("setup output does not name the wired version:\n%s", h.stdout.String())
	}

	// The binary moved: the commands are rewritten, the trust renewed.
	moved, _ := codexSetup(t, home, bin2)
	cfg, err = readCodexConfig([]byte(moved))
	if err != nil {
		t.Fatal(err)
	}
	handlers = cfg.agentgateHandlers()
	if len(handlers) != 2 {
		t.Fatalf("after the move: handlers %+v\n%s", handlers, moved)
	}
	for _, hd := range handlers {
		if hd.Command != hookCommand(bin2, "hook", "codex") || cfg.state[hd.trustKey(file)]["trusted_hash"] != hd.trustedHash() {
			t.Errorf("after the move: %+v, trust %v", hd, cfg.state[hd.trustKey(file)])
		}
	}
	if n := strings.Count(moved, "[hooks.state."); n != 2 {
		t.Errorf("%d state tables, want 2:\n%s", n, moved)
	}
	if strings.Contains(moved, bin1) {
		t.Errorf("the old command survived:\n%s", moved)
	}
	// Unrelated settings are kept.
	for _, keep := range []string{`model = "gpt-5-codex"`, "[mcp_servers.docs]", `args = ["-y", "docs-mcp"]`} {
		if !strings.Contains(moved, keep) {
			t.Errorf("%q lost:\n%s", keep, moved)
		}
	}
	// A third run finds nothing to do.
	h3 := newSetupHarness(t, true, "y\n")
	h3.env.home, h3.env.cwd, h3.env.executable = home, filepath.Join(home, "project"), bin2
	if code := runSetup([]string{"codex"}, h3.env); code != 0 || !strings.Contains(h3.stdout.String(), "already set up") {
		t.Errorf("third run: exit %d, %s", code, h3.stdout.String())
	}
}

// TestSetupCodexRenewsTrustCodexWrote: Codex writes [hooks.state] and its
// sub-tables itself; a stale trusted_hash there is replaced in place and
// an `enabled = false` the person set in Codex is removed (setup leaves the
// gate active).
func TestSetupCodexRenewsTrustCodexWrote(t *testing.T) {
	h0 := newSetupHarness(t, true, "")
	home := h0.home
	bin1 := filepath.Join(home, "opt", "agentgate")
	file := filepath.Join(home, ".codex", "config.toml")
	old := `model = "m"

[[hooks.PreToolUse]]
matcher = "Bash"

[[hooks.PreToolUse.hooks]]
type = "command"
command = "/old/agentgate-hook codex"
timeout = 600

[hooks.state]

[hooks.state.` + tomlString(file+":pre_tool_use:0:0") + `]
enabled = false
trusted_hash = "sha256:0000"

[tui]
x = 1
`
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	data, h := codexSetup(t, home, bin1)
	cfg, err := readCodexConfig([]byte(data))
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	key := file + ":pre_tool_use:0:0"
	handlers := cfg.agentgateHandlers()
	if len(handlers) != 2 || cfg.state[key]["trusted_hash"] != handlers[0].trustedHash() || cfg.state[key]["enabled"] != nil {
		t.Errorf("state %v, handlers %+v\n%s", cfg.state, handlers, data)
	}
	if strings.Count(data, "[hooks.state."+tomlString(key)+"]") != 1 {
		t.Errorf("state table duplicated:\n%s", data)
	}
	if !strings.Contains(data, "[tui]\nx = 1\n") {
		t.Errorf("[tui] lost:\n%s", data)
	}
	if w := checkWiring("codex", file, "user", h.env); len(w.problems) != 0 {
		t.Errorf("check: %q", w.problems)
	}
}

// TestSetupCheckCodexProblems: --check reports what keeps Codex from
// running the hook.
func TestSetupCheckCodexProblems(t *testing.T) {
	h := newSetupHarness(t, true, "")
	file := filepath.Join(h.home, ".codex", "config.toml")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(h.home, "agentgate")
	writeExecutable(t, exe)
	for _, tc := range []struct{ name, config, want string }{
		{"missing", "", "no agentgate PreToolUse hook"},
		{"untrusted", "[[hooks.PreToolUse]]\nmatcher = \"Bash\"\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = " + tomlString(hookCommand(exe, "hook", "codex")) + "\n", "has not trusted"},
		{"changed", "[[hooks.PreToolUse]]\nmatcher = \"Bash\"\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = " + tomlString(hookCommand(exe, "hook", "codex")) + "\n[hooks.state." + tomlString(file+":pre_tool_use:0:0") + "]\ntrusted_hash = \"sha256:00\"\n", "changed since Codex trusted it"},
		{"short timeout", "[[hooks.PreToolUse]]\nmatcher = \"Bash\"\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = " + tomlString(hookCommand(exe, "hook", "codex")) + "\ntimeout = 30\n", "times out after 30s"},
		{"feature off", "[features]\ncodex_hooks = false\n", "features.codex_hooks = false"},
		{"feature off, new name", "features.hooks = false\n", "features.hooks = false"},
		{"program gone", "[[hooks.PreToolUse]]\nmatcher = \"Bash\"\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"/nonexistent/agentgate hook codex\"\n", "does not exist"},
	} {
		if err := os.WriteFile(file, []byte(tc.config), 0o600); err != nil {
			t.Fatal(err)
		}
		h.stdout.Reset()
		if code := runSetup([]string{"--check", "codex"}, h.env); code != 1 || !strings.Contains(h.stdout.String(), tc.want) {
			t.Errorf("%s: exit %d, output:\n%s\nwant a problem saying %q", tc.name, code, h.stdout.String(), tc.want)
		}
	}
}

// TestSetupCheckVersions: --check asks the agent's version, records it
// for the hook, and warns about a version newer than the tested ones.
func TestSetupCheckVersions(t *testing.T) {
	h := newSetupHarness(t, true, "y\n")
	h.env.executable = filepath.Join(h.home, "agentgate")
	writeExecutable(t, h.env.executable)
	if code := runSetup([]string{"claude-code"}, h.env); code != 0 {
		t.Fatalf("setup: %d %s", code, h.stderr.String())
	}
	h.stdout.Reset()
	if code := runSetup([]string{"--check", "claude-code"}, h.env); code != 0 {
		t.Errorf("tested version, wired: exit %d\n%s", code, h.stdout.String())
	}
	if !agents.ClaudeAskShowsPrompt(h.env.stateDir) {
		t.Error("the hook would not give Claude Code's prompt for a tested version")
	}
	h.env.version = func(_ context.Context, program string) (string, string, error) {
		return "/usr/bin/" + program, "2.2.0", nil
	}
	h.stdout.Reset()
	if code := runSetup([]string{"--check", "claude-code"}, h.env); code != 1 || !strings.Contains(h.stdout.String(), "Claude Code 2.2.0 is newer than the versions agentgate was tested with (2.1.328)") {
		t.Errorf("newer version: exit %d\n%s", code, h.stdout.String())
	}
	if agents.ClaudeAskShowsPrompt(h.env.stateDir) {
		t.Error("a newer Claude Code would still get \"ask\"")
	}
}

// TestSetupGeminiEnablesHooks: Gemini CLI runs no hooks with
// hooksConfig.enabled false or the hook in hooksConfig.disabled; setup
// undoes both in the file it edits, and --check reports a system settings
// file that switches hooks off.
func TestSetupGeminiEnablesHooks(t *testing.T) {
	h := newSetupHarness(t, true, "y\n")
	exe := filepath.Join(h.home, "agentgate")
	writeExecutable(t, exe)
	h.env.executable = exe
	file := filepath.Join(h.home, ".gemini", "settings.json")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	command, _ := json.Marshal(hookCommand(exe, "hook", "gemini"))
	if err := os.WriteFile(file, []byte(`{"hooksConfig": {"enabled": false, "disabled": ["x", `+string(command)+`]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	system := filepath.Join(h.home, "system-settings.json")
	h.env.getenv = func(name string) string {
		if name == "GEMINI_CLI_SYSTEM_SETTINGS_PATH" {
			return system
		}
		return ""
	}
	if code := runSetup([]string{"gemini"}, h.env); code != 0 {
		t.Fatalf("exit %d: %s", code, h.stderr.String())
	}
	h.stdout.Reset()
	if code := runSetup([]string{"--check", "gemini"}, h.env); code != 0 {
		t.Errorf("after setup: exit %d\n%s", code, h.stdout.String())
	}
	if err := os.WriteFile(system, []byte(`{"hooksConfig": {"enabled": false}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	h.stdout.Reset()
	if code := runSetup([]string{"--check", "gemini"}, h.env); code != 1 || !strings.Contains(h.stdout.String(), system+" sets hooksConfig.enabled to false") {
		t.Errorf("system settings switch hooks off: exit %d\n%s", code, h.stdout.String())
	}
}

// TestSetupCodexSwitchesHooksOn: features.hooks (or codex_hooks) = false
// switches every Codex hook off (seen with Codex 0.169.0: the command ran
// with the app down); setup sets it to true in the file it edits.
func TestSetupCodexSwitchesHooksOn(t *testing.T) {
	for _, config := range []string{
		"[features]\nhooks = false # off\nother = 1\n",
		"[features]\n  codex_hooks = false\n",
		"features.hooks = false\nmodel = \"m\"\n",
	} {
		h0 := newSetupHarness(t, true, "")
		file := filepath.Join(h0.home, ".codex", "config.toml")
		writeFileT(t, file, config)
		data, h := codexSetup(t, h0.home, filepath.Join(h0.home, "bin", "agentgate"))
		cfg, err := readCodexConfig([]byte(data))
		if err != nil || cfg.hooksOff != "" {
			t.Errorf("%q: hooks still off (%q, %v):\n%s", config, cfg.hooksOff, err, data)
		}
		if w := checkWiring("codex", file, "user", h.env); len(w.problems) != 0 {
			t.Errorf("%q: check: %q", config, w.problems)
		}
	}
}

// writeFileT writes data to path, creating its directory.
func writeFileT(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}
