//go:build linux

package agente2e

import (
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/prefs/agents"
)

// tui is an agent's interactive terminal UI running in a private tmux
// server (its own socket in the sandbox), 200×50.
type tui struct {
	t *testing.T
	// socket is the tmux server's socket.
	socket string
}

// startTUI starts the agent's program with args and exactly env in tmux.
func (s *sandbox) startTUI(env, args []string) *tui {
	s.t.Helper()
	if _, err := osexec.LookPath("tmux"); err != nil {
		skipCase(s.t, "tmux is not installed (Debian package tmux)")
	}
	a, _ := agents.Lookup(s.agent)
	u := &tui{t: s.t, socket: filepath.Join(s.dir, "tmux.sock")}
	cmd := append([]string{"-S", u.socket, "-f", "/dev/null", "new-session", "-d", "-s", "agent", "-x", "200", "-y", "50",
		"-c", s.project, "--", "env", "-i"}, env...)
	cmd = append(cmd, filepath.Join(harness.cliBin[s.agent], a.Program))
	cmd = append(cmd, args...)
	if out, err := osexec.Command("tmux", cmd...).CombinedOutput(); err != nil {
		s.t.Fatalf("starting %s in tmux: %v %s", a.Program, err, out)
	}
	if os.Getenv("AGENTE2E_DEBUG") != "" {
		s.t.Logf("tmux %q", cmd)
	}
	out, err := osexec.Command("tmux", "-S", u.socket, "display-message", "-p", "-t", "agent", "#{pane_pid}").Output()
	pid, perr := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil || perr != nil {
		s.t.Fatalf("finding the agent's pid in tmux: %v %v %q", err, perr, out)
	}
	s.t.Cleanup(func() {
		if s.t.Failed() {
			s.t.Logf("screen at the end:\n%s", u.screen())
		}
		_ = osexec.Command("tmux", "-S", u.socket, "kill-server").Run()
		// The agent leads its own process group in the pane: make sure it
		// and its children are gone before the sandbox is removed, and
		// whatever it started that left the group.
		endGroup(pid)
		endProcessesFrom(s.dir)
	})
	return u
}

// screen returns what the terminal shows, wrapped lines joined.
func (u *tui) screen() string {
	out, _ := osexec.Command("tmux", "-S", u.socket, "capture-pane", "-p", "-J", "-t", "agent").Output()
	return string(out)
}

// send sends tmux keys (literal text with -l).
func (u *tui) send(keys ...string) {
	u.t.Helper()
	if out, err := osexec.Command("tmux", append([]string{"-S", u.socket, "send-keys", "-t", "agent"}, keys...)...).CombinedOutput(); err != nil {
		u.t.Fatalf("tmux send-keys %q: %v %s", keys, err, out)
	}
}

// submit types text and presses Enter. When the model has heard nothing
// after a while and the text still sits in the input line (a TUI may take
// the first Enter to dismiss a notice), it presses Enter again.
func (u *tui) submit(s *sandbox, text string) {
	u.t.Helper()
	time.Sleep(2 * time.Second)
	u.send("-l", text)
	time.Sleep(time.Second)
	for try := 0; try < 4; try++ {
		u.send("Enter")
		for wait := 0; wait < 120; wait++ {
			if len(s.model.Exchanges()) > 0 {
				return
			}
			time.Sleep(250 * time.Millisecond)
		}
		if !inInputLine(u.screen(), text) {
			return
		}
	}
	u.t.Fatalf("the agent never sent the prompt to the model\nscreen:\n%s", u.screen())
}

// inInputLine reports whether a screen line is an input prompt (❯, > or ›)
// holding text.
func inInputLine(screen, text string) bool {
	for _, line := range strings.Split(screen, "\n") {
		l := strings.TrimSpace(strings.Trim(line, "│ "))
		for _, glyph := range []string{"❯", ">", "›"} {
			if strings.HasPrefix(l, glyph) && strings.Contains(l, text) {
				return true
			}
		}
	}
	return false
}

// waitFor polls the screen until one of wants shows (returning its index)
// or runTimeout passes (failing the test).
func (u *tui) waitFor(what string, wants ...string) int {
	u.t.Helper()
	deadline := time.Now().Add(runTimeout)
	for {
		sc := u.screen()
		for i, w := range wants {
			if strings.Contains(sc, w) {
				return i
			}
		}
		if time.Now().After(deadline) {
			u.t.Fatalf("waiting for %s (%q): not shown within %v\nscreen:\n%s", what, wants, runTimeout, sc)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// waitModelDone waits until the model has read a tool result, or the
// agent shows one of prompts (returning its index, or -1 for the result).
func (u *tui) waitModelDone(s *sandbox, prompts ...string) int {
	u.t.Helper()
	deadline := time.Now().Add(runTimeout)
	for {
		if len(s.model.ToolResults()) > 0 {
			return -1
		}
		sc := u.screen()
		if os.Getenv("AGENTE2E_DEBUG") != "" {
			u.t.Logf("%s screen:\n%s", time.Now().Format("15:04:05.000"), sc)
		}
		for i, p := range prompts {
			if strings.Contains(sc, p) {
				return i
			}
		}
		if time.Now().After(deadline) {
			u.t.Fatalf("the agent neither finished nor asked within %v\nscreen:\n%s", runTimeout, sc)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// codexApprovalPrompts are texts only Codex's own approval overlay shows.
// A bare "approve" is not one: agentgate's denial, which the TUI prints
// under the denied command before the model reads it, says "approve in
// agentgate", and under load the screen was read in between.
var codexApprovalPrompts = []string{"Would you like to run", "Yes, proceed", "Allow command"}

// TestCodexTUI: Codex's TUI with its default approval policy starts
// without "Hooks need review" (setup recorded the trust), runs an
// allow-listed command without a prompt, and does not run a command no
// rule allows while the app is down.
func TestCodexTUI(t *testing.T) {
	t.Parallel()
	const mode = "`codex` TUI (default approval)"
	for _, tc := range []struct {
		name, command, marker, rule string
	}{
		{"allow-listed command", "touch tui-allowed", "tui-allowed", "touch tui-allowed"},
		{"no rule, app not running", "touch tui-no-rule", "tui-no-rule", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newSandbox(t, agents.Codex, Script{Command: tc.command})
			if tc.rule != "" {
				s.allow(tc.rule)
			}
			u := s.startTUI(codex.configure(s), nil)
			if u.waitFor("Codex's prompt", "Ask Codex", "Hooks need review") == 1 {
				t.Fatalf("Codex asks to review the hooks setup trusted:\n%s", u.screen())
			}
			u.submit(s, prompt)
			asked := u.waitModelDone(s, codexApprovalPrompts...)
			observed := s.observe(tc.marker)
			if asked >= 0 {
				observed = "Codex asked for approval; " + observed
			}
			switch {
			case tc.rule != "" && (!s.exists(tc.marker) || asked >= 0):
				t.Errorf("allow-listed: ran %v, Codex asked %v\n%s", s.exists(tc.marker), asked >= 0, u.screen())
			case tc.rule == "" && s.exists(tc.marker):
				t.Errorf("a command no rule allows ran with the app down\n%s", u.screen())
			}
			record(agents.Codex, 4, mode, tc.name, observed)
		})
	}
}

// TestCodexTUIEscalation: when the model asks to run outside Codex's
// sandbox, Codex's TUI would ask itself; the PermissionRequest hook setup
// wires answers allow for an allow-listed command, so it runs without that
// prompt, while the PreToolUse hook still decides everything else.
func TestCodexTUIEscalation(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, agents.Codex, Script{Tool: "exec_command", Args: map[string]any{
		"cmd": "touch tui-escalated", "sandbox_permissions": "require_escalated",
		"justification": "the test asks to run it outside the sandbox"}})
	s.allow("touch tui-escalated")
	u := s.startTUI(codex.configure(s), nil)
	u.waitFor("Codex's prompt", "Ask Codex")
	u.submit(s, prompt)
	asked := u.waitModelDone(s, codexApprovalPrompts...)
	observed := s.observe("tui-escalated")
	if asked >= 0 {
		observed = "Codex asked for approval; " + observed
		t.Errorf("Codex asked about an allow-listed command\n%s", u.screen())
	}
	if !s.exists("tui-escalated") {
		t.Errorf("the allow-listed command did not run\n%s", u.screen())
	}
	// Both hooks decided by the rule: PreToolUse, then PermissionRequest
	// where Codex would have asked.
	log, _ := os.ReadFile(filepath.Join(s.state, "agentgate", "audit.log"))
	if n := strings.Count(string(log), `"decision":"allowed_by_rule"`); n != 2 {
		t.Errorf("%d decisions by rule in the audit log, want 2 (PreToolUse and PermissionRequest):\n%s", n, log)
	} else {
		observed += " (PreToolUse and PermissionRequest both allowed it by the rule)"
	}
	record(agents.Codex, 4, "`codex` TUI (default approval)", "allow-listed command, run outside Codex's sandbox (PermissionRequest)", observed)
}

// TestGeminiTUI: Gemini CLI's TUI ignores the hook's allow and asks with
// its own prompt (the double prompt docs/integrations.md describes), and a
// command no rule allows is denied with the app down, without a prompt.
// With --allowed-tools run_shell_command (the set-up docs/integrations.md
// recommends) Gemini does not ask, and agentgate is the only gate.
func TestGeminiTUI(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode, name, command, marker, rule string
		args                              []string
		// gatedByAgentgate: the recommended set-up, where Gemini lets
		// agentgate be the only gate for the shell tool.
		gatedByAgentgate bool
	}{
		{"`gemini` TUI (default policy)", "allow-listed command", "touch tui-allowed", "tui-allowed", "touch tui-allowed", nil, false},
		{"`gemini` TUI (default policy)", "no rule, app not running", "touch tui-no-rule", "tui-no-rule", "", nil, false},
		{"`gemini --allowed-tools run_shell_command` TUI", "allow-listed command", "touch tui-allowed", "tui-allowed", "touch tui-allowed", []string{"--allowed-tools", "run_shell_command"}, true},
		{"`gemini --allowed-tools run_shell_command` TUI", "no rule, app not running", "touch tui-no-rule", "tui-no-rule", "", []string{"--allowed-tools", "run_shell_command"}, true},
	} {
		t.Run(tc.mode+"/"+tc.name, func(t *testing.T) {
			t.Parallel()
			s := newSandbox(t, agents.Gemini, Script{Command: tc.command})
			if tc.rule != "" {
				s.allow(tc.rule)
			}
			u := s.startTUI(gemini.configure(s), append([]string{"-m", "gemini-2.5-flash"}, tc.args...))
			u.waitFor("Gemini's input", "Type your message")
			u.submit(s, prompt)
			observed := ""
			if u.waitModelDone(s, "Allow once", "Allow execution") >= 0 {
				observed = "Gemini's own prompt appeared after agentgate's answer; "
				if tc.rule == "" || tc.gatedByAgentgate {
					t.Errorf("Gemini asked itself\n%s", u.screen())
				}
				// Allow once: the first option.
				u.send("Enter")
				u.waitModelDone(s)
			}
			observed += s.observe(tc.marker)
			switch {
			case tc.rule != "" && !s.exists(tc.marker):
				t.Errorf("allow-listed, but it did not run\n%s", u.screen())
			case tc.rule == "" && s.exists(tc.marker):
				t.Errorf("a command no rule allows ran with the app down\n%s", u.screen())
			}
			mi := 4
			if tc.gatedByAgentgate {
				mi = 5
			}
			record(agents.Gemini, mi, tc.mode, tc.name, observed)
		})
	}
}

// TestClaudeCodeTUI: with the app down, Claude Code's interactive TUI —
// also in bypassPermissions mode — shows its own prompt for agentgate's
// "ask" (its tested version), and "No" there runs nothing.
func TestClaudeCodeTUI(t *testing.T) {
	t.Parallel()
	for i, mode := range []struct {
		name string
		args []string
	}{
		{"`claude` TUI (auto mode, its default)", nil},
		{"`claude --permission-mode bypassPermissions` TUI", []string{"--permission-mode", "bypassPermissions"}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			s := newSandbox(t, agents.ClaudeCode, Script{Command: "touch tui-no-rule"})
			env := claude.configure(s)
			// First start done, the API key and the project trusted, the
			// bypass warning accepted: straight to the input.
			writeFile(t, filepath.Join(s.home, ".claude.json"), `{"hasCompletedOnboarding": true, "theme": "dark",
  "customApiKeyResponses": {"approved": ["`+claudeKey[len(claudeKey)-20:]+`"], "rejected": []},
  "bypassPermissionsModeAccepted": true,
  "projects": {"`+s.project+`": {"hasTrustDialogAccepted": true, "allowedTools": []}}}`)
			u := s.startTUI(env, mode.args)
			u.waitFor("Claude's input", "❯")
			u.submit(s, prompt)
			asked := u.waitModelDone(s, "Do you want to proceed?")
			observed := s.observe("tui-no-rule")
			if asked == 0 {
				if !strings.Contains(u.screen(), "agentgate could not ask on the desktop") {
					t.Errorf("Claude's prompt does not show agentgate's reason\n%s", u.screen())
				}
				// "2. No": Claude ends the turn and asks the person instead.
				u.send("Down")
				time.Sleep(300 * time.Millisecond)
				u.send("Enter")
				u.waitFor("the refusal", "What should Claude do instead", ResultPrefix)
				ran := "did not run"
				if s.exists("tui-no-rule") {
					ran = "ran"
				}
				observed = "Claude Code's own prompt appeared with agentgate's reason; after No: " + ran
			} else {
				t.Errorf("Claude Code did not show its own prompt for agentgate's \"ask\"\n%s", u.screen())
			}
			if s.exists("tui-no-rule") {
				t.Errorf("the command ran")
			}
			record(agents.ClaudeCode, 4+i, mode.name, "no rule, app not running", observed)
		})
	}
}
