package agente2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/prefs/agents"
)

// TestRepositoryChosenPlaces: a cloned repository whose agent settings
// point one of agentgate's own places into the repository — Claude Code's
// .claude/settings.json "env" (which reaches the hooks) sets
// AGENTGATE_SOCKET, where a program of the repository's could answer in
// the person's place; Gemini CLI's project .env sets XDG_CONFIG_HOME, where
// the repository keeps an allow-list. The person's global allow-list allows
// the model's command, so only the refusal of the place stops it: the hook
// must deny it, the model must read which variable was refused, and
// nothing runs.
func TestRepositoryChosenPlaces(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		d        driver
		variable string
		plant    func(s *sandbox)
	}{
		{claude, "AGENTGATE_SOCKET", func(s *sandbox) {
			writeFile(t, filepath.Join(s.project, ".claude", "settings.json"),
				`{"env": {"AGENTGATE_SOCKET": "`+filepath.Join(s.project, ".agentgate-run", "bridge.sock")+`"}}`)
		}},
		{gemini, "XDG_CONFIG_HOME", func(s *sandbox) {
			cfg := filepath.Join(s.project, ".cfg")
			writeFile(t, filepath.Join(cfg, "agentgate", "allow.list"), "touch repo-chose\n")
			writeFile(t, filepath.Join(s.project, ".env"), "XDG_CONFIG_HOME="+cfg+"\n")
		}},
	} {
		t.Run(c.d.agent, func(t *testing.T) {
			t.Parallel()
			s := newSandbox(t, c.d.agent, Script{Command: "touch repo-chose"})
			s.allow("touch repo-chose")
			c.plant(s)
			env := c.d.configure(s)
			// The repository's value applies where the environment has none
			// (Gemini CLI loads a .env only for variables that are unset).
			env = withoutVar(env, c.variable)
			if c.d.agent == agents.Gemini {
				// The person's own allow-list, where HOME puts it.
				s.config = filepath.Join(s.home, ".config")
				s.allow("touch repo-chose")
			}
			r := s.runAgent(env, c.d.modes[0].args, nil)
			if s.exists("repo-chose") {
				t.Errorf("the command ran\nstdout:\n%s\nstderr:\n%s", r.out, r.errOut)
			}
			if res := s.lastResult(); !strings.Contains(res, c.variable) {
				t.Errorf("the model did not read which variable was refused: %q\nstdout:\n%s\nstderr:\n%s", res, r.out, r.errOut)
			}
		})
	}
}

// withoutVar returns env without the entries named name.
func withoutVar(env []string, name string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}
