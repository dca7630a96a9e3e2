//go:build linux

package agente2e

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentgate/agentgate/prefs/agents"
)

// prompt is what the person asks every agent; the fake model ignores it.
const prompt = "Run the command you were given and report its result."

// denyMessage is what the person types on the card with Deny.
const denyMessage = "not now, use make test instead"

// driver knows how to run one agent in the sandbox.
type driver struct {
	// agent is the agent's name (prefs/agents).
	agent string
	// configure writes the agent's own settings (the fake model, no
	// telemetry, no update checks), runs the real `agentgate setup`, and
	// returns the environment to run the agent with.
	configure func(s *sandbox) []string
	// modes are the ways the agent is run, each one where the agent's own
	// gate would let the command through.
	modes []mode
}

// mode is one way of running an agent non-interactively.
type mode struct {
	// name is the command line as the table shows it.
	name string
	// args are the agent's arguments.
	args []string
}

// tableRow is one row of the table in docs/integrations.md.
type tableRow struct {
	// order sorts rows: agent, then mode, then case.
	order [3]int
	// agent, mode and what are the row's first columns; observed is what
	// the agent really did.
	agent, mode, what, observed string
}

// table collects the rows of this run.
var table struct {
	mu   sync.Mutex
	rows []tableRow
	// partial is set when a case was skipped: the table is then not
	// compared with the docs.
	partial atomic.Bool
}

// caseOrder is the order of the cases in the table.
var caseOrder = map[string]int{
	"allow-listed command": 0, "no rule, app not running": 1, "`a && b`, both allow-listed, app not running": 2,
	"no rule, Approve on the card": 3, "no rule, Deny with a message on the card": 4,
}

// record adds a row for agent run in mode (its index among the agent's
// modes; TUI and MCP rows sort after them).
func record(agent string, modeIndex int, modeName, what, observed string) {
	a, _ := agents.Lookup(agent)
	ai := 0
	for i, k := range agents.Known {
		if k.Name == agent {
			ai = i
		}
	}
	ci, ok := caseOrder[what]
	if !ok {
		ci = 100
	}
	table.mu.Lock()
	defer table.mu.Unlock()
	table.rows = append(table.rows, tableRow{order: [3]int{ai, modeIndex, ci},
		agent: a.Display + " " + a.NewestTested(), mode: modeName, what: what, observed: observed})
}

// observe describes what a run did: whether the marker file appeared and
// what the model read as the tool's result.
func (s *sandbox) observe(marker string) string {
	ran := "did not run"
	if s.exists(marker) {
		ran = "ran"
	}
	return ran + "; the model read " + readBy(s.lastResult())
}

// readBy names what a tool result is.
func readBy(result string) string {
	switch {
	case result == "":
		return "no tool result"
	case strings.Contains(result, denyMessage):
		return "the person's denial with their message"
	case strings.Contains(result, "agentgate blocked this command"):
		return "agentgate's denial (approve in agentgate or add a rule; do not retry)"
	case strings.Contains(result, "agentgate could not ask on the desktop"):
		return "agentgate's reason with a denial from its own \"ask\""
	case strings.Contains(result, "[error]") || strings.Contains(strings.ToLower(result), "error"):
		return "an error: " + firstLine(result)
	}
	return "the command's result"
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return s
}

// skipCase marks the table partial and skips.
func skipCase(t *testing.T, why string) {
	t.Helper()
	table.partial.Store(true)
	t.Skip(why)
}

// hookErrors returns lines of an agent's output that report a failed hook.
func hookErrors(r run) []string {
	var bad []string
	for _, line := range strings.Split(r.out+"\n"+r.errOut, "\n") {
		l := strings.ToLower(line)
		if strings.Contains(l, "hook") && (strings.Contains(l, "fail") || strings.Contains(l, "error") || strings.Contains(l, "unsupported")) {
			bad = append(bad, line)
		}
	}
	return bad
}

// cardMu serialises the cases that show windows: one app's card at a time
// on the shared display, so that xdotool clicks the card it means.
var cardMu sync.Mutex

// runCases runs the safety cases for d: in every mode, an allow-listed
// command runs (no hook error), a command with no rule and no app does not
// run, and `a && b` does not run although both are allow-listed; in the
// first mode, with the app running, Approve on the card runs the command
// and Deny with a message does not, and the model reads the message.
func runCases(t *testing.T, d driver) {
	t.Parallel()
	for mi, m := range d.modes {
		t.Run(m.name, func(t *testing.T) {
			t.Run("allow-listed", func(t *testing.T) {
				t.Parallel()
				s := newSandbox(t, d.agent, Script{Command: "touch allowed-by-rule"})
				s.allow("touch allowed-by-rule")
				r := s.runAgent(d.configure(s), m.args, nil)
				if !s.exists("allowed-by-rule") {
					t.Errorf("the allow-listed command did not run\nstdout:\n%s\nstderr:\n%s\nmodel read: %q", r.out, r.errOut, s.lastResult())
				}
				if bad := hookErrors(r); len(bad) > 0 {
					t.Errorf("hook errors for an allow-listed command: %q", bad)
				}
				record(d.agent, mi, m.name, "allow-listed command", s.observe("allowed-by-rule"))
			})
			t.Run("no rule no app", func(t *testing.T) {
				t.Parallel()
				s := newSandbox(t, d.agent, Script{Command: "touch no-rule"})
				r := s.runAgent(d.configure(s), m.args, nil)
				if s.exists("no-rule") {
					t.Errorf("a command no rule allows ran with the app down\nstdout:\n%s\nstderr:\n%s", r.out, r.errOut)
				}
				if res := s.lastResult(); !strings.Contains(res, "agentgate") {
					t.Errorf("the model did not read agentgate's reason: %q\nstdout:\n%s\nstderr:\n%s", res, r.out, r.errOut)
				}
				record(d.agent, mi, m.name, "no rule, app not running", s.observe("no-rule"))
			})
			t.Run("a && b", func(t *testing.T) {
				t.Parallel()
				s := newSandbox(t, d.agent, Script{Command: "touch a && touch b"})
				s.allow("touch a", "touch b")
				r := s.runAgent(d.configure(s), m.args, nil)
				if s.exists("a") || s.exists("b") {
					t.Errorf("`touch a && touch b` ran unasked\nstdout:\n%s\nstderr:\n%s", r.out, r.errOut)
				}
				record(d.agent, mi, m.name, "`a && b`, both allow-listed, app not running", s.observe("a"))
			})
			if mi != 0 {
				return
			}
			for _, c := range []struct {
				name, marker, what string
				approve            bool
			}{
				{"card approve", "approved", "no rule, Approve on the card", true},
				{"card deny", "denied", "no rule, Deny with a message on the card", false},
			} {
				t.Run(c.name, func(t *testing.T) {
					if os.Getenv("DISPLAY") == "" {
						skipCase(t, "no DISPLAY: the card cases run under `make test-agents`")
					}
					cardMu.Lock()
					defer cardMu.Unlock()
					s := newSandbox(t, d.agent, Script{Command: "touch " + c.marker})
					env := d.configure(s)
					s.startApp()
					r := s.runAgent(env, m.args, func(done <-chan struct{}) { s.answerCard(c.approve, denyMessage, done) })
					switch {
					case c.approve && !s.exists(c.marker):
						t.Errorf("approved on the card, but the command did not run\nstdout:\n%s\nstderr:\n%s\nmodel read: %q", r.out, r.errOut, s.lastResult())
					case !c.approve && s.exists(c.marker):
						t.Errorf("denied on the card, but the command ran")
					case !c.approve && !strings.Contains(s.lastResult(), denyMessage):
						t.Errorf("the model did not read the person's message: %q\nstdout:\n%s\nstderr:\n%s", s.lastResult(), r.out, r.errOut)
					}
					record(d.agent, mi, m.name, c.what, s.observe(c.marker))
				})
			}
		})
	}
}

// Markers around the generated table in docs/integrations.md.
const (
	tableStart = "<!-- agente2e:table:start (generated by cli/agente2e: make agents-table) -->"
	tableEnd   = "<!-- agente2e:table:end -->"
)

// renderTable returns the table of this run in markdown.
func renderTable() string {
	table.mu.Lock()
	rows := append([]tableRow(nil), table.rows...)
	table.mu.Unlock()
	sort.Slice(rows, func(i, j int) bool {
		a, b := rows[i].order, rows[j].order
		for k := range a {
			if a[k] != b[k] {
				return a[k] < b[k]
			}
		}
		return rows[i].what < rows[j].what
	})
	var b strings.Builder
	b.WriteString("| agent | run as | case | what happened |\n|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", r.agent, r.mode, r.what, r.observed)
	}
	return b.String()
}

// checkTable compares this run's table with the one in
// docs/integrations.md, or writes it there with write. A partial run (a
// case skipped, or -run given) is not compared.
func checkTable(write bool) error {
	if table.partial.Load() || flagValue("test.run") != "" || flagValue("test.skip") != "" {
		return nil
	}
	path := filepath.Join("..", "..", "docs", "integrations.md")
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	doc := string(data)
	start, end := strings.Index(doc, tableStart), strings.Index(doc, tableEnd)
	if start < 0 || end < start {
		return fmt.Errorf("%s has no generated table (markers %q … %q)", path, tableStart, tableEnd)
	}
	got := renderTable()
	current := doc[start+len(tableStart)+1 : end]
	if current == got {
		return nil
	}
	if write {
		return os.WriteFile(path, []byte(doc[:start+len(tableStart)+1]+got+doc[end:]), 0o644)
	}
	return fmt.Errorf("what the agents really did differs from the table in %s; if the change is intended, run `make agents-table`:\n%s", path, got)
}

func flagValue(name string) string {
	if f := flag.Lookup(name); f != nil {
		return f.Value.String()
	}
	return ""
}
