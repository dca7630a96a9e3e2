package hook

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/prefs"
)

// TestHookGuard: with rules that allow the benign prefix, the hook never
// allows two line-continuation bypasses once found in the hook (shell syntax the
// parser refuses) nor a dangerous argument the guard finds; the reason the
// agent hands on names what was found. The everyday forms stay allowed.
func TestHookGuard(t *testing.T) {
	for agent, fixture := range hookFixtures {
		h := newHookHarness(t)
		if err := os.WriteFile(h.paths.GlobalFile(), []byte("echo\ngit diff\nsort\nenv\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		store, err := prefs.Open(h.paths)
		if err != nil {
			t.Fatal(err)
		}
		h.deps.decide = store.Decide
		for _, tc := range []struct{ line, reasonHas string }{
			{"echo \"$\\\n(touch /tmp/pwned)\"", "$ inside double quotes"},
			{"echo \"$\\\n{value@P}\"", "$ inside double quotes"},
			{"git diff --output=/tmp/x", "writes the diff to a file anywhere"},
			{"git diff --ext\\-diff", "runs the external diff program"},
			{"git diff --outp=/tmp/x", "abbreviates --output"},
			{"sort -uo /tmp/x f", "-uo /tmp/x (argument 1)"},
			{"env LD_PRELOAD=/tmp/x.so echo hi", "LD_PRELOAD"},
			{"env sudo echo hi", "never allows it without a person"},
		} {
			payload := withCommand(t, readFixture(t, fixture), tc.line)
			decision, reason := decisionOf(t, agent, h.run(t, agent, payload))
			if decision == "allow" || decision == "" {
				t.Errorf("%s: %q: decision %q", agent, tc.line, decision)
			}
			if !strings.Contains(reason, tc.reasonHas) {
				t.Errorf("%s: %q: reason %q does not say %q", agent, tc.line, reason, tc.reasonHas)
			}
		}
		for _, line := range []string{"echo hello world", "git diff --stat", "sort -u f", "env"} {
			payload := withCommand(t, readFixture(t, fixture), line)
			if decision, reason := decisionOf(t, agent, h.run(t, agent, payload)); decision != "allow" {
				t.Errorf("%s: everyday %q: decision %q (%s)", agent, line, decision, reason)
			}
		}
	}
}

// TestHookGuardAppliesToGrants: a program grant for sort allows `sort -u f`
// through the hook but not `sort -o FILE f`.
func TestHookGuardAppliesToGrants(t *testing.T) {
	h := newHookHarness(t)
	project := t.TempDir()
	grants := h.withGrants(project)
	sortPath, _, ok := ResolveProgram("sort", "/")
	if !ok {
		t.Skip("no sort on PATH")
	}
	if _, err := grants.Give(prefs.GrantRequest{Kind: prefs.GrantProgram, Argv: []string{"sort"}, Executable: sortPath, Project: project,
		AllProviders: true, By: "terminal", For: time.Hour}); err != nil {
		t.Fatal(err)
	}
	payload := readFixture(t, hookFixtures[ClaudeCode])
	if decision, reason := decisionOf(t, ClaudeCode, h.run(t, ClaudeCode, withCommand(t, payload, "sort -u f"))); decision != "allow" {
		t.Errorf("sort -u under a program grant: %q %q", decision, reason)
	}
	if decision, _ := decisionOf(t, ClaudeCode, h.run(t, ClaudeCode, withCommand(t, payload, "sort -o /tmp/x f"))); decision == "allow" {
		t.Error("sort -o allowed by a program grant for sort")
	}
}
