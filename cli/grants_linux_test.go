//go:build linux

package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/agentbridge/audit"
)

// runHookProcess runs the test binary as `agentgate hook claude-code` on a
// Bash tool call for command in the project, and returns the agent-visible
// decision (allow, deny, ask) and its reason.
func runHookProcess(t *testing.T, s *cliSandbox, command string) (string, string) {
	t.Helper()
	payload, err := json.Marshal(map[string]any{"session_id": "s1", "cwd": s.project, "hook_event_name": "PreToolUse",
		"tool_name": "Bash", "tool_input": map[string]any{"command": command}})
	if err != nil {
		t.Fatal(err)
	}
	cmd := s.command(t, "hook", "claude-code")
	cmd.Stdin = bytes.NewReader(payload)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("hook: %v (%s)", err, stderr.String())
	}
	var answer struct {
		Out struct {
			Decision string `json:"permissionDecision"`
			Reason   string `json:"permissionDecisionReason"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &answer); err != nil {
		t.Fatalf("hook answer %q: %v", stdout.String(), err)
	}
	return answer.Out.Decision, answer.Out.Reason
}

// TestGrantAcrossHosts: a grant given at the terminal prompt of `agentgate
// run` lets the hook (another process, another provider) and a later
// `agentgate run` without a terminal allow the same command; revoking it
// ends it for both.
func TestGrantAcrossHosts(t *testing.T) {
	s := newCLISandbox(t, runRules)
	marker := filepath.Join(s.project, "granted")
	p := startPTY(t, s, "run", "--", "touch", marker)
	p.waitFor(t, "[t]emporarily")
	p.send(t, "t")
	p.waitFor(t, "Allow for how long?")
	p.send(t, "1")
	p.waitFor(t, "Allow what for 15 min?")
	p.send(t, "e")
	if code := p.exitCode(t); code != exitOK {
		t.Fatalf("exit %d:\n%s", code, p.out.String())
	}
	id := regexp.MustCompile(`grant (g-[0-9a-f]{8})`).FindStringSubmatch(p.out.String())
	if id == nil {
		t.Fatalf("the prompt did not name the grant:\n%s", p.out.String())
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the granted command did not run: %v", err)
	}
	if rules, _ := os.ReadFile(s.paths.GlobalFile()); strings.Contains(string(rules), "touch") {
		t.Fatalf("a temporary grant wrote a rule: %s", rules)
	}

	// The hook (provider claude-code) allows the same command from the grant.
	decision, reason := runHookProcess(t, s, "touch "+marker)
	if decision != "allow" || !strings.Contains(reason, "grant "+id[1]) || !strings.Contains(reason, " left") {
		t.Fatalf("hook on the granted command: %q %q", decision, reason)
	}
	// Only the exact command.
	if decision, _ := runHookProcess(t, s, "touch "+marker+"2"); decision == "allow" {
		t.Fatal("the hook allowed another command from an exact grant")
	}
	// `agentgate run` without a terminal runs it unattended.
	os.Remove(marker)
	if code, _, stderr := runCLI(t, s, "run", "--", "touch", marker); code != exitOK {
		t.Fatalf("run after the grant: exit %d (%s)", code, stderr)
	}
	// Listed with its time left, and every use audited with the time left.
	if code, out, _ := runCLI(t, s, "allow", "grants"); code != exitOK || !strings.Contains(out, id[1]) || !strings.Contains(out, "15 min") && !strings.Contains(out, "14 min") {
		t.Errorf("allow grants: exit %d:\n%s", code, out)
	}
	uses := 0
	for e, err := range audit.Entries(audit.Path(s.paths.StateDir), audit.OldestFirst) {
		if err == nil && e.Decision == audit.DecisionGrant && e.Grant != nil && e.Grant.ID == id[1] && e.Grant.LeftMS > 0 {
			uses++
		}
	}
	if uses != 2 {
		t.Errorf("%d audited uses of the grant, want 2 (the hook's and run's)", uses)
	}

	// Revoked: neither host allows it any more.
	if code, out, stderr := runCLI(t, s, "allow", "revoke", id[1]); code != exitOK {
		t.Fatalf("revoke: exit %d %s%s", code, out, stderr)
	}
	if decision, _ := runHookProcess(t, s, "touch "+marker); decision == "allow" {
		t.Fatal("the hook allowed a revoked grant's command")
	}
	os.Remove(marker)
	if code, _, _ := runCLI(t, s, "run", "--", "touch", marker); code != exitDeclined {
		t.Fatalf("run after revoke: exit %d, want 2", code)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatal("the command ran after its grant was revoked")
	}
}

// TestGrantPromptLauncherExactOnly: for an interpreter the prompt grants
// only the exact command, without asking which.
func TestGrantPromptLauncherExactOnly(t *testing.T) {
	s := newCLISandbox(t, runRules)
	marker := filepath.Join(s.project, "viaenv")
	p := startPTY(t, s, "run", "--", "env", "touch", marker)
	p.waitFor(t, "Run it?")
	p.send(t, "t")
	p.waitFor(t, "Allow for how long?")
	p.send(t, "h")
	p.waitFor(t, "only the exact command")
	if code := p.exitCode(t); code != exitOK {
		t.Fatalf("exit %d:\n%s", code, p.out.String())
	}
	if strings.Contains(p.out.String(), "Allow what") {
		t.Fatalf("the prompt offered the program of a launcher:\n%s", p.out.String())
	}
	if code, out, _ := runCLI(t, s, "allow", "grants"); code != exitOK || !strings.Contains(out, "exactly env touch") || !strings.Contains(out, "1 h") && !strings.Contains(out, "59 min") {
		t.Errorf("allow grants: exit %d:\n%s", code, out)
	}
	if code, _, _ := runCLI(t, s, "run", "--", "env", "rm", marker); code != exitDeclined {
		t.Fatal("another command through the launcher was allowed by an exact grant")
	}
	if code, out, _ := runCLI(t, s, "allow", "revoke", "--all"); code != exitOK || !strings.Contains(out, "Revoked every temporary grant (1)") {
		t.Errorf("revoke --all: exit %d %s", code, out)
	}
	if code, out, _ := runCLI(t, s, "allow", "grants"); code != exitOK || !strings.Contains(out, "No temporary grants") {
		t.Errorf("allow grants after revoke --all: exit %d %s", code, out)
	}
}
