package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/agentgate/agentgate/agentbridge/audit"
	"github.com/agentgate/agentgate/exec/display"
	"github.com/agentgate/agentgate/prefs"
)

// The agents `agentgate hook` and `agentgate setup` know. Each name is also
// the provider name the hook decides and asks as.
const (
	agentClaudeCode = "claude-code"
	agentGemini     = "gemini"
	agentCodex      = "codex"
)

// hookAskBudget bounds how long the hook waits for the person's answer on
// the desktop card. It stays below the 600 s timeout `agentgate setup`
// writes for every agent, because an agent whose hook times out runs the
// tool anyway: the hook must always answer first.
const hookAskBudget = 540 * time.Second

// hookMaxPayload caps what the hook reads from stdin; an agent's payload is
// a few KiB.
const hookMaxPayload = 4 << 20

// verdict is what the hook tells the agent.
type verdict int

const (
	// verdictNone: no opinion; the agent does what it would do without the hook.
	verdictNone verdict = iota
	// verdictAllow: run it without the agent's own prompt.
	verdictAllow
	// verdictDeny: do not run it; the reason goes to the model.
	verdictDeny
	// verdictAsk: hand the decision to the agent's own prompt, with the reason
	// shown to the person.
	verdictAsk
)

// hookAnswer is the hook's verdict with the reason the agent passes on.
type hookAnswer struct {
	// Verdict is the decision.
	Verdict verdict
	// Reason says why, in a sentence for the person or the model.
	Reason string
}

// hookRequest is what the hook took from an agent's payload, in one shape
// for every agent.
type hookRequest struct {
	// Agent is claude-code, gemini or codex.
	Agent string
	// Event is the hook event: PreToolUse, PermissionRequest or BeforeTool.
	Event string
	// Tool is the agent's tool name.
	Tool string
	// ShellTool is true when Tool runs CommandLine through the agent's shell.
	ShellTool bool
	// Classifiable is true when CommandLine is POSIX shell text that
	// literalArgv can read (false for PowerShell).
	Classifiable bool
	// CommandLine is the shell text the agent will run.
	CommandLine string
	// Cwd is the agent's working directory (absolute).
	Cwd string
	// Dir is where the command runs when the tool names a directory of its
	// own (Gemini's dir_path), else Cwd.
	Dir string
	// Description is the agent's explanation of the command, if any.
	Description string
	// SessionID is the agent's session id.
	SessionID string
}

// hookQuestion is what the hook asks the desktop app.
type hookQuestion struct {
	// Provider is the agent's provider name.
	Provider string
	// ProjectRoot is the project of the agent's working directory.
	ProjectRoot string
	// Client names the asking adapter, e.g. "agentgate hook claude-code".
	Client string
	// CommandLine, Cwd, Reason and AgentTool are shown on the card.
	CommandLine, Cwd, Reason, AgentTool string
}

// errAppUnreachable marks an asker error meaning no person could be asked:
// the app is not running or its socket cannot be reached.
var errAppUnreachable = errors.New("the agentgate desktop app is not reachable")

// hookDeps are the hook's connections to the world, replaced in tests.
type hookDeps struct {
	// decide answers from the allow-lists.
	decide func(argv []string, provider, projectRoot string) prefs.Decision
	// audit appends an entry to the audit log; errors are reported on stderr
	// and do not change the answer (a decision by rule must not become an
	// allow-by-default, and a missing log must not block the agent forever).
	audit func(audit.Entry) error
	// ask asks the person through the desktop app; an error wrapping
	// errAppUnreachable means nobody could be asked.
	ask func(ctx context.Context, q hookQuestion) (approved bool, message string, err error)
	// projectRoot maps the agent's cwd to a project root.
	projectRoot func(dir string) (string, error)
}

// parseHookPayload reads an agent's hook payload. It fails on anything that
// is not a JSON object with the fields the agent documents.
func parseHookPayload(agent string, data []byte) (hookRequest, error) {
	var p struct {
		SessionID     string          `json:"session_id"`
		Cwd           string          `json:"cwd"`
		HookEventName string          `json:"hook_event_name"`
		ToolName      string          `json:"tool_name"`
		ToolInput     json.RawMessage `json:"tool_input"`
	}
	if err := json.Unmarshal(data, &p); err != nil {
		return hookRequest{}, fmt.Errorf("the hook input is not the JSON object %s sends: %v", agent, err)
	}
	if p.ToolName == "" {
		return hookRequest{}, fmt.Errorf("the hook input from %s names no tool_name", agent)
	}
	req := hookRequest{Agent: agent, Event: p.HookEventName, Tool: p.ToolName, Cwd: p.Cwd, SessionID: p.SessionID}
	switch agent {
	case agentClaudeCode, agentCodex:
		req.ShellTool = p.ToolName == "Bash" || (agent == agentClaudeCode && p.ToolName == "PowerShell")
		req.Classifiable = p.ToolName == "Bash"
	case agentGemini:
		req.ShellTool = p.ToolName == "run_shell_command"
		req.Classifiable = req.ShellTool
	}
	if !req.ShellTool {
		return req, nil
	}
	var in struct {
		Command     *string `json:"command"`
		Description string  `json:"description"`
		DirPath     string  `json:"dir_path"`
	}
	if len(p.ToolInput) == 0 || json.Unmarshal(p.ToolInput, &in) != nil || in.Command == nil {
		return hookRequest{}, fmt.Errorf("the %s tool input from %s holds no command string", p.ToolName, agent)
	}
	req.CommandLine = *in.Command
	req.Description = in.Description
	req.Dir = req.Cwd
	if in.DirPath != "" {
		if filepath.IsAbs(in.DirPath) || req.Cwd == "" {
			req.Dir = in.DirPath
		} else {
			req.Dir = filepath.Join(req.Cwd, in.DirPath)
		}
	}
	return req, nil
}

// decideHook is the hook's whole decision for one tool call:
//
//  1. a tool other than the agent's shell: no decision;
//  2. one simple command of literal words (literalArgv) allowed by a rule
//     (global, the agent's provider list, or the project's confirmed rules):
//     allow, with the rule's provenance, written to the audit log;
//  3. anything else — not allowed by a rule, or shell syntax that is never
//     matched — goes to the desktop card, flagged as running through the
//     agent's shell; the person's answer becomes allow or deny;
//  4. the app cannot be reached, or nobody answers within hookAskBudget:
//     ask (the agent's own prompt decides), never allow.
func decideHook(ctx context.Context, req hookRequest, deps hookDeps, stderr io.Writer) hookAnswer {
	if !req.ShellTool {
		return hookAnswer{Verdict: verdictNone}
	}
	root := ""
	if req.Cwd != "" && deps.projectRoot != nil {
		if r, err := deps.projectRoot(req.Cwd); err == nil {
			root = r
		}
	}
	var argv []string
	why := "PowerShell commands are not matched against allow-lists"
	if req.Classifiable {
		argv, why = literalArgv(req.CommandLine)
	}
	if argv != nil {
		if d := deps.decide(argv, req.Agent, root); d.Allowed && d.Rule != nil {
			entry := hookAuditEntry(req, root, argv)
			entry.Kind = audit.KindProposal
			logAudit(deps, entry, stderr)
			entry.Kind = audit.KindDecision
			entry.Decision = audit.DecisionRule
			entry.Rule = auditRule(d.Rule)
			logAudit(deps, entry, stderr)
			return hookAnswer{Verdict: verdictAllow, Reason: "agentgate: allowed by " + describeRule(d.Rule)}
		}
		why = "no allow-list rule matches " + display.Command(argv)
	}
	askCtx, cancel := context.WithTimeout(ctx, hookAskBudget)
	defer cancel()
	approved, message, err := deps.ask(askCtx, hookQuestion{
		Provider:    req.Agent,
		ProjectRoot: root,
		Client:      "agentgate hook " + req.Agent,
		CommandLine: req.CommandLine,
		Cwd:         req.Dir,
		Reason:      req.Description,
		AgentTool:   req.Tool,
	})
	if err != nil {
		entry := hookAuditEntry(req, root, argv)
		entry.Kind = audit.KindRefusal
		entry.Code = "handed_back"
		entry.Message = "handed back to the agent's own prompt: " + err.Error()
		logAudit(deps, entry, stderr)
		if errors.Is(err, errAppUnreachable) {
			return hookAnswer{Verdict: verdictAsk, Reason: "agentgate could not ask on the desktop (" + err.Error() +
				"); decide here. Start the app with `agentgate` to get agentgate's approval card. Why it was not allowed automatically: " + why}
		}
		return hookAnswer{Verdict: verdictAsk, Reason: "agentgate got no answer on the desktop (" + err.Error() + "); decide here."}
	}
	if approved {
		reason := "agentgate: approved by the person on the desktop card"
		if message != "" {
			reason += ": " + message
		}
		return hookAnswer{Verdict: verdictAllow, Reason: reason}
	}
	reason := "agentgate: the person denied this command on the desktop card. Do not retry it or work around it in another form"
	if message != "" {
		reason += ". Their message: " + message
	}
	return hookAnswer{Verdict: verdictDeny, Reason: reason}
}

// hookAuditEntry is the common part of the hook's audit entries.
func hookAuditEntry(req hookRequest, root string, argv []string) audit.Entry {
	return audit.Entry{
		Host:              "hook",
		Provider:          req.Agent,
		Client:            "agentgate hook " + req.Agent,
		Argv:              argv,
		CommandLine:       req.CommandLine,
		ThroughAgentShell: true,
		Cwd:               req.Dir,
		ProjectRoot:       root,
		Reason:            req.Description,
	}
}

func logAudit(deps hookDeps, e audit.Entry, stderr io.Writer) {
	if deps.audit == nil {
		return
	}
	if err := deps.audit(e); err != nil {
		fmt.Fprintf(stderr, "agentgate hook: could not write the audit log: %v\n", err)
	}
}

// auditRule converts a prefs rule to its audit-log form.
func auditRule(r *prefs.Rule) *audit.Rule {
	return &audit.Rule{Text: prefs.FormatList(r.Tokens), Scope: string(r.Scope), Provider: r.Provider, File: r.File, Line: r.Line}
}

// describeRule names a rule with its provenance for a person:
// rule «git status» (global, /home/a/.config/agentgate/allow.list:3).
func describeRule(r *prefs.Rule) string {
	scope := string(r.Scope)
	if r.Scope == prefs.ScopeProvider && r.Provider != "" {
		scope += " " + r.Provider
	}
	return fmt.Sprintf("rule «%s» (%s, %s:%d)", prefs.FormatList(r.Tokens), scope, r.File, r.Line)
}

// formatHookAnswer returns exactly what the hook prints on stdout for agent
// and event; an empty result means print nothing.
//
//   - Claude Code and Codex, PreToolUse: hookSpecificOutput with
//     hookEventName, permissionDecision (allow, deny or ask) and
//     permissionDecisionReason — nothing else, since Codex treats an unknown
//     field as a failed hook. No decision: empty output.
//   - Claude Code and Codex, PermissionRequest: hookSpecificOutput with
//     hookEventName and decision {behavior, message (deny only)}; ask and no
//     decision print nothing, which leaves the agent's own prompt in place.
//   - Gemini CLI, BeforeTool: {"decision": "allow"|"deny", "reason": …}; ask
//     is {"systemMessage": …} (shown to the person, no decision, so Gemini's
//     own confirmation applies); no decision is {}.
func formatHookAnswer(agent, event string, a hookAnswer) []byte {
	var v any
	switch {
	case agent == agentGemini:
		switch a.Verdict {
		case verdictAllow:
			v = struct {
				Decision string `json:"decision"`
				Reason   string `json:"reason"`
			}{"allow", a.Reason}
		case verdictDeny:
			v = struct {
				Decision string `json:"decision"`
				Reason   string `json:"reason"`
			}{"deny", a.Reason}
		case verdictAsk:
			v = struct {
				SystemMessage string `json:"systemMessage"`
			}{a.Reason}
		default:
			v = struct{}{}
		}
	case event == "PermissionRequest":
		type decision struct {
			Behavior string `json:"behavior"`
			Message  string `json:"message,omitempty"`
		}
		var d decision
		switch a.Verdict {
		case verdictAllow:
			d = decision{Behavior: "allow"}
		case verdictDeny:
			d = decision{Behavior: "deny", Message: a.Reason}
		default:
			return nil
		}
		v = struct {
			Out struct {
				HookEventName string   `json:"hookEventName"`
				Decision      decision `json:"decision"`
			} `json:"hookSpecificOutput"`
		}{Out: struct {
			HookEventName string   `json:"hookEventName"`
			Decision      decision `json:"decision"`
		}{"PermissionRequest", d}}
	default:
		var decision string
		switch a.Verdict {
		case verdictAllow:
			decision = "allow"
		case verdictDeny:
			decision = "deny"
		case verdictAsk:
			decision = "ask"
		default:
			return nil
		}
		type out struct {
			HookEventName            string `json:"hookEventName"`
			PermissionDecision       string `json:"permissionDecision"`
			PermissionDecisionReason string `json:"permissionDecisionReason"`
		}
		v = struct {
			Out out `json:"hookSpecificOutput"`
		}{out{"PreToolUse", decision, a.Reason}}
	}
	b, err := json.Marshal(v)
	if err != nil {
		// The values above are plain strings and structs: Marshal cannot fail.
		panic(err)
	}
	return append(b, '\n')
}

// runHook is `agentgate hook AGENT`: it reads the payload from stdin,
// decides, prints the answer and returns 0 — always 0 for a known agent,
// because several agents run the tool anyway when a hook exits non-zero.
// Unreadable input is answered like an unreachable app: ask (Claude Code,
// Codex) or no decision (Gemini), never allow.
func runHook(args []string, stdin io.Reader, stdout, stderr io.Writer, deps hookDeps) int {
	if len(args) != 1 || (args[0] != agentClaudeCode && args[0] != agentGemini && args[0] != agentCodex) {
		fmt.Fprintln(stderr, "usage: agentgate hook claude-code|gemini|codex   (reads the agent's hook JSON on stdin)")
		return 2
	}
	agent := args[0]
	data, err := io.ReadAll(io.LimitReader(stdin, hookMaxPayload+1))
	var req hookRequest
	if err == nil && len(data) > hookMaxPayload {
		err = fmt.Errorf("the hook input is larger than %d bytes", hookMaxPayload)
	}
	if err == nil {
		req, err = parseHookPayload(agent, data)
	}
	var answer hookAnswer
	event := req.Event
	if err != nil {
		fmt.Fprintf(stderr, "agentgate hook %s: %v\n", agent, err)
		answer = hookAnswer{Verdict: verdictAsk, Reason: "agentgate could not read this tool call (" + err.Error() + "); decide here."}
		event = ""
	} else {
		answer = decideHook(context.Background(), req, deps, stderr)
	}
	if out := formatHookAnswer(agent, event, answer); len(out) > 0 {
		if _, err := stdout.Write(out); err != nil {
			fmt.Fprintf(stderr, "agentgate hook %s: writing the answer: %v\n", agent, err)
		}
	}
	return 0
}
