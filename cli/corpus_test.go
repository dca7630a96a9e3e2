package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/agentgate/agentgate/exec/shellword"
	"github.com/agentgate/agentgate/prefs"
)

// bypass is one entry of testdata/guard/bypasses.json: a command line
// reported on a public tracker as getting past another agent's allow-list,
// the benign rule a person would have written, and where it was reported.
type bypass struct {
	// Command is the shell line as reported.
	Command string `json:"command"`
	// Rule is the benign rule, as shell words.
	Rule string `json:"rule"`
	// Source is the issue or pull request that reported it.
	Source string `json:"source"`
	// Note says what it does.
	Note string `json:"note"`
	// Argv, when set, is the argv bash runs for Command when Command is a
	// single command with shell characters shellword refuses ({} unquoted):
	// what a person would check with `agentgate allow check`.
	Argv []string `json:"argv"`
}

// TestBypassCorpus: no reported bypass string runs without a person under
// its benign rule — not through the hook (deciding the shell line as the
// agent sends it), and not by `agentgate allow check` (deciding its argv,
// for each entry that is one command).
func TestBypassCorpus(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "guard", "bypasses.json"))
	if err != nil {
		t.Fatal(err)
	}
	var corpus []bypass
	if err := json.Unmarshal(data, &corpus); err != nil {
		t.Fatal(err)
	}
	fixture, err := os.ReadFile(filepath.Join("..", "testdata", "hooks", "claude-code-pretooluse-bash.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(corpus) < 30 {
		t.Fatalf("the corpus holds %d entries", len(corpus))
	}
	checked := 0
	for _, b := range corpus {
		if b.Source == "" || b.Rule == "" || b.Command == "" {
			t.Errorf("entry %+v lacks its command, rule or source", b)
			continue
		}
		rule, err := shellword.Typed(b.Rule)
		if err != nil {
			t.Fatalf("rule %q: %v", b.Rule, err)
		}
		s := newCLISandbox(t, prefs.FormatList(rule)+"\n")

		// The hook, as Claude Code calls it, in the sandbox project.
		payload, _ := sjson.SetBytes(fixture, "tool_input.command", b.Command)
		payload, _ = sjson.SetBytes(payload, "cwd", s.project)
		var out, errOut bytes.Buffer
		e := s.env(&out, &errOut)
		e.stdin = bytes.NewReader(payload)
		if code := dispatch([]string{"hook", "claude-code"}, e); code != 0 {
			t.Fatalf("%q: hook exit %d: %s", b.Command, code, errOut.String())
		}
		decision := gjson.Get(out.String(), "hookSpecificOutput.permissionDecision").String()
		if decision == "allow" || decision == "" {
			t.Errorf("%s (%s): the hook answered %q under the rule %q for %q", b.Source, b.Note, decision, b.Rule, b.Command)
		}

		// allow check, for the argv of a single command.
		argv := b.Argv
		if argv == nil {
			argv, _ = shellword.AgentCommand(b.Command)
		}
		if argv == nil {
			continue
		}
		checked++
		out.Reset()
		if code := dispatch(append([]string{"allow", "check", "--"}, argv...), s.env(&out, &errOut)); code == exitOK {
			t.Errorf("%s (%s): allow check allows %q under the rule %q:\n%s", b.Source, b.Note, argv, b.Rule, out.String())
		}
	}
	t.Logf("%d bypass strings through the hook, %d of them also through allow check", len(corpus), checked)
}
