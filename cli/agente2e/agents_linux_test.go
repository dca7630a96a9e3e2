//go:build linux

package agente2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/prefs/agents"
)

// claudeKey is the fake API key Claude Code sends to the fake model.
const claudeKey = "sk-ant-agente2e-0123456789abcdefghij"

// claudeEnv is Claude Code's environment: the fake model, and no update
// checks, telemetry, error reports or other traffic. IS_SANDBOX lets
// bypassPermissions run as root (CI runs as root).
func claudeEnv(s *sandbox) []string {
	return s.env("ANTHROPIC_BASE_URL="+s.model.URL, "ANTHROPIC_API_KEY="+claudeKey,
		"DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "IS_SANDBOX=1", "ENABLE_TOOL_SEARCH=false")
}

var claude = driver{
	agent: agents.ClaudeCode,
	configure: func(s *sandbox) []string {
		env := claudeEnv(s)
		s.runSetup(env)
		return env
	},
	modes: []mode{
		{"`claude -p`", []string{"-p", prompt}},
		{"`claude -p --permission-mode bypassPermissions`", []string{"-p", prompt, "--permission-mode", "bypassPermissions"}},
	},
}

// geminiEnv is Gemini CLI's environment: the fake model with an API key
// and a trusted workspace, in one process.
func geminiEnv(s *sandbox) []string {
	return s.env("GEMINI_API_KEY=agente2e-key", "GOOGLE_GEMINI_BASE_URL="+s.model.URL, "GEMINI_CLI_TRUST_WORKSPACE=true",
		// One process: the relaunch only raises the heap limit, and loads
		// the whole bundle twice.
		"GEMINI_CLI_NO_RELAUNCH=true")
}

// writeFile writes data to path, creating its directory.
func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

var gemini = driver{
	agent: agents.Gemini,
	configure: func(s *sandbox) []string {
		// API-key auth against the fake model; no telemetry, usage
		// statistics or update checks.
		writeFile(s.t, filepath.Join(s.home, ".gemini", "settings.json"), `{
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false},
  "general": {"disableAutoUpdate": true, "disableUpdateNag": true}
}
`)
		env := geminiEnv(s)
		s.runSetup(env)
		return env
	},
	modes: []mode{
		{"`gemini -p --yolo`", []string{"-p", prompt, "--yolo", "-m", "gemini-2.5-flash"}},
		{"`gemini -p --allowed-tools run_shell_command`", []string{"-p", prompt, "--allowed-tools", "run_shell_command", "-m", "gemini-2.5-flash"}},
	},
}

// codexConfig is Codex's config.toml before setup: the fake model as a
// Responses API provider, no update checks, no analytics, the project
// trusted.
func codexConfig(s *sandbox) string {
	return `model = "fake-model"
model_provider = "fake"
check_for_update_on_startup = false

[model_providers.fake]
name = "agente2e fake model"
base_url = "` + s.model.URL + `/v1"
wire_api = "responses"
env_key = "AGENTE2E_API_KEY"

[analytics]
enabled = false

[projects."` + s.project + `"]
trust_level = "trusted"
`
}

func codexEnv(s *sandbox) []string {
	return s.env("CODEX_HOME="+filepath.Join(s.home, ".codex"), "AGENTE2E_API_KEY=agente2e-key")
}

var codex = driver{
	agent: agents.Codex,
	configure: func(s *sandbox) []string {
		writeFile(s.t, filepath.Join(s.home, ".codex", "config.toml"), codexConfig(s))
		env := codexEnv(s)
		s.runSetup(env)
		return env
	},
	modes: []mode{
		{"`codex exec --sandbox workspace-write` (approval: never)", []string{"exec", "--sandbox", "workspace-write", prompt}},
		{"`codex exec --dangerously-bypass-approvals-and-sandbox`", []string{"exec", "--dangerously-bypass-approvals-and-sandbox", prompt}},
	},
}

func TestClaudeCode(t *testing.T) { runCases(t, claude) }
func TestGemini(t *testing.T)     { runCases(t, gemini) }
func TestCodex(t *testing.T)      { runCases(t, codex) }

// TestCodexHookUntrustedIsSkipped shows why setup records trust: the same
// config without the [hooks.state] tables setup wrote lets `codex exec`
// run a command no rule allows, with the app down — Codex skips a hook
// nobody trusted, silently.
func TestCodexHookUntrustedIsSkipped(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, agents.Codex, Script{Command: "touch untrusted-hook"})
	codex.configure(s)
	file := filepath.Join(s.home, ".codex", "config.toml")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	cut := strings.Index(string(data), "# Trusted by the person")
	if cut < 0 {
		t.Fatalf("setup recorded no trust:\n%s", data)
	}
	writeFile(t, file, string(data[:cut]))
	s.runAgent(codexEnv(s), codex.modes[0].args, nil)
	if !s.exists("untrusted-hook") {
		t.Errorf("without the trust setup records, Codex still ran the hook (the test's premise is gone)")
	}
	record(agents.Codex, 5, codex.modes[0].name, "setup's trust removed from config.toml, no rule, app not running", s.observe("untrusted-hook")+" (Codex skips an untrusted hook silently)")
}

// TestClaudeCodeMCP: Claude Code with agentgate as its MCP server (and
// tool search off, which hides MCP tools otherwise): an allow-listed
// command runs through agentgate's executor and the model reads its
// output.
func TestClaudeCodeMCP(t *testing.T) {
	t.Parallel()
	if os.Getenv("DISPLAY") == "" {
		skipCase(t, "no DISPLAY: MCP mode needs the app, which runs under `make test-agents`")
	}
	s := newSandbox(t, agents.ClaudeCode, Script{Tool: "mcp__agentgate__run_command",
		Args: map[string]any{"argv": []string{"echo", "agentgate-mcp-ok"}, "reason": "the test asked for it"}})
	s.allow("echo agentgate-mcp-ok")
	env := claudeEnv(s)
	config := filepath.Join(s.dir, "mcp.json")
	writeFile(t, config, `{"mcpServers": {"agentgate": {"command": "`+filepath.Join(harness.binDir, "agentgate")+`", "args": ["mcp"],
		"env": {"AGENTGATE_SOCKET": "`+s.socket+`", "XDG_CONFIG_HOME": "`+s.config+`", "XDG_STATE_HOME": "`+s.state+`"}}}}`)
	cardMu.Lock()
	defer cardMu.Unlock()
	s.startApp()
	args := []string{"-p", prompt, "--mcp-config", config, "--strict-mcp-config", "--allowedTools", "mcp__agentgate__run_command"}
	r := s.runAgent(env, args, nil)
	res := s.lastResult()
	if !strings.Contains(res, "agentgate-mcp-ok") {
		t.Errorf("the model did not read the command's output: %q\nstdout:\n%s\nstderr:\n%s", res, r.out, r.errOut)
	}
	observed := "did not run"
	if strings.Contains(res, "agentgate-mcp-ok") {
		observed = "ran in agentgate's executor; the model read its output"
	}
	record(agents.ClaudeCode, 3, "`claude -p --mcp-config` (agentgate mcp, ENABLE_TOOL_SEARCH=false)", "allow-listed command", observed)
}
