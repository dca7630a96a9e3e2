// Package hook is `agentgate hook claude-code|gemini|codex`, the agents'
// pre-tool hook: it reads the agent's hook JSON on stdin and answers allow,
// deny, ask or nothing for a shell command (SPEC §6).
//
// The hook runs before every tool call an agent makes, so the package is
// kept lean: it imports the allow-lists (prefs), the audit log, the bridge
// client, the shell parser and gjson, and nothing of the desktop UI, the
// MCP SDK or the executor and its supervisor (audit.Entry names only the
// leaf package exec/runinfo; the hook runs nothing). It is linked both into
// agentgate (`agentgate hook AGENT`, through package cli) and into the small
// agentgate-hook executable (`agentgate-hook AGENT`), which skips the
// start-up cost of the UI toolkit and of cgo's dynamic linking.
package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/agentgate/agentgate/agentbridge/audit"
	"github.com/agentgate/agentgate/exec/shellword"
	"github.com/agentgate/agentgate/prefs"
	"github.com/agentgate/agentgate/prefs/agents"
)

// The agents the hook (and `agentgate setup`) know (package prefs/agents).
// Each name is also the provider name the hook decides and asks as, and
// the hook's argument.
const (
	// ClaudeCode is Anthropic's Claude Code.
	ClaudeCode = agents.ClaudeCode
	// Gemini is Google's Gemini CLI.
	Gemini = agents.Gemini
	// Codex is OpenAI's Codex CLI.
	Codex = agents.Codex
)

// AskBudget bounds how long the hook waits for the person's answer on the
// desktop card. It stays below the 600 s timeout `agentgate setup` writes
// for every agent, because an agent whose hook times out runs the tool
// anyway: the hook must always answer first.
const AskBudget = 540 * time.Second

// hookMaxPayload caps what the hook reads from stdin; an agent's payload is
// a few KiB.
const hookMaxPayload = 4 << 20

// verdict is what the hook decided; formatHookAnswer turns it into the
// agent's own words.
type verdict int

const (
	// verdictNone: no opinion; the agent does what it would do without the
	// hook (tools other than the shell).
	verdictNone verdict = iota
	// verdictAllow: a rule or a person allowed it.
	verdictAllow
	// verdictDeny: a person refused it, or agentgate refused its own
	// places (a configuration or state directory or socket that the
	// repository or the agent could have chosen).
	verdictDeny
	// verdictUnanswered: no person's answer could be had (the app is not
	// running, has no approver, cannot show the card, nobody answered in
	// time, or the input could not be read). Never allow: Gemini CLI and
	// Codex get a denial; Claude Code gets "ask" (its own prompt, a denial in
	// -p mode) where a tested version shows it.
	verdictUnanswered
)

// hookAnswer is the hook's verdict with what the agent passes on.
type hookAnswer struct {
	// Verdict is the decision.
	Verdict verdict
	// Reason says why, in a sentence for the person or the model (allow and
	// deny).
	Reason string
	// Problem says, for verdictUnanswered, why no person could answer
	// (e.g. "the agentgate desktop app is not reachable (…)").
	Problem string
	// Why says, for verdictUnanswered, why no rule allowed the command
	// ("" when the input could not be read).
	Why string
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
	// shellword.AgentCommand can read (false for PowerShell).
	Classifiable bool
	// CommandLine is the shell text the agent will run.
	CommandLine string
	// ToolInput is the shell tool's tool_input exactly as the agent sent it
	// (JSON text): Codex's allow echoes it as updatedInput.
	ToolInput string
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

// errAppUnreachable marks an asker error meaning the app is not running or
// its socket cannot be reached. Every asker error means the same to the
// hook (no person's answer could be had); this one names the common case.
var errAppUnreachable = errors.New("the agentgate desktop app is not reachable")

// hookDeps are the hook's connections to the world, replaced in tests.
type hookDeps struct {
	// decide answers from the allow-lists and the argument guard.
	decide func(q prefs.Query) prefs.Decision
	// grant looks for a person's temporary grant for argv run in dir by
	// provider in the project at projectRoot (nil: none). An error reading
	// the grants is reported on stderr and allows nothing.
	grant func(argv []string, dir, provider, projectRoot string) (prefs.GrantMatch, bool, error)
	// audit appends entries to the audit log, all in one write and one
	// fsync; errors are reported on stderr and do not change the answer (a
	// decision by rule must not become an allow-by-default, and a missing
	// log must not block the agent forever).
	audit func(...audit.Entry) error
	// ask asks the person through the desktop app; an error means no
	// person's answer could be had (errAppUnreachable: the app is not
	// running), and its text says why, for the person or the model.
	ask func(ctx context.Context, q hookQuestion) (approved bool, message string, err error)
	// projectRoot maps the agent's cwd to a project root.
	projectRoot func(dir string) (string, error)
	// claudeAsk reports whether Claude Code's installed version is one whose
	// "ask" is known to show its own prompt (agents.ClaudeAskShowsPrompt);
	// asked only when no person's answer could be had. nil means no.
	claudeAsk func() bool
	// checkDirs refuses agentgate's own places (configuration and state
	// directories, bridge socket) when a variable chose them inside one of
	// projects or where commands may write (prefs.CheckDirs): the answer is
	// then a denial naming the variable. nil checks nothing. Asked before
	// any of them is read.
	checkDirs func(projects ...string) error
}

// parseHookPayload reads an agent's hook payload. It fails on anything that
// is not valid UTF-8 JSON holding an object with a string tool_name and, for
// the agent's shell tool, an object tool_input with a string command.
//
// Keys are matched exactly, case included, as the agents' own JSON readers
// (JavaScript, Rust) do; encoding/json would also take "Command" for
// "command". A key the hook reads that appears twice at its level is an
// error: agents disagree on duplicates (JavaScript keeps the last, serde
// refuses), so the command the hook decides on could differ from the one
// the agent runs. Other keys are ignored. A null value counts as absent.
// The payload is read with gjson, without reflection: this runs before
// every tool call, and encoding/json's first Unmarshal into a struct costs
// more than the rest of the parsing.
func parseHookPayload(agent string, data []byte) (hookRequest, error) {
	if !utf8.Valid(data) {
		return hookRequest{}, fmt.Errorf("the hook input from %s is not valid UTF-8", agent)
	}
	// json.Valid checks the syntax with a nesting limit, so a deeply nested
	// document cannot exhaust the stack of the (recursive) gjson reader.
	if !json.Valid(data) {
		return hookRequest{}, fmt.Errorf("the hook input is not the JSON object %s sends: it is not valid JSON", agent)
	}
	top := gjson.ParseBytes(data)
	if !top.IsObject() {
		return hookRequest{}, fmt.Errorf("the hook input is not the JSON object %s sends: it is not an object", agent)
	}
	fields, err := objectFields(top, "", "session_id", "cwd", "hook_event_name", "tool_name", "tool_input")
	if err != nil {
		return hookRequest{}, fmt.Errorf("the hook input is not the JSON object %s sends: %v", agent, err)
	}
	var strs [4]string
	for i, name := range []string{"session_id", "cwd", "hook_event_name", "tool_name"} {
		if strs[i], err = stringField(fields, "", name); err != nil {
			return hookRequest{}, fmt.Errorf("the hook input is not the JSON object %s sends: %v", agent, err)
		}
	}
	req := hookRequest{Agent: agent, SessionID: strs[0], Cwd: strs[1], Event: strs[2], Tool: strs[3]}
	if req.Tool == "" {
		return hookRequest{}, fmt.Errorf("the hook input from %s names no tool_name", agent)
	}
	switch agent {
	case ClaudeCode, Codex:
		req.ShellTool = req.Tool == "Bash" || (agent == ClaudeCode && req.Tool == "PowerShell")
		req.Classifiable = req.Tool == "Bash"
	case Gemini:
		req.ShellTool = req.Tool == "run_shell_command"
		req.Classifiable = req.ShellTool
	}
	if !req.ShellTool {
		return req, nil
	}
	noCommand := fmt.Errorf("the %s tool input from %s holds no command string", req.Tool, agent)
	input := fields["tool_input"]
	if !input.IsObject() {
		return hookRequest{}, noCommand
	}
	in, err := objectFields(input, "tool_input.", "command", "description", "dir_path")
	if err != nil {
		return hookRequest{}, fmt.Errorf("%w: %v", noCommand, err)
	}
	if in["command"].Type != gjson.String {
		return hookRequest{}, noCommand
	}
	req.CommandLine = in["command"].Str
	req.ToolInput = input.Raw
	var dirPath string
	if req.Description, err = stringField(in, "tool_input.", "description"); err == nil {
		dirPath, err = stringField(in, "tool_input.", "dir_path")
	}
	if err != nil {
		return hookRequest{}, fmt.Errorf("%w: %v", noCommand, err)
	}
	req.Dir = req.Cwd
	if dirPath != "" {
		if filepath.IsAbs(dirPath) || req.Cwd == "" {
			req.Dir = dirPath
		} else {
			req.Dir = filepath.Join(req.Cwd, dirPath)
		}
	}
	return req, nil
}

// objectFields returns the members of the JSON object obj named in names,
// by exact key; a member that is absent or null is left out. It fails when
// one of names appears twice. prefix ("tool_input.") qualifies key names in
// errors.
func objectFields(obj gjson.Result, prefix string, names ...string) (map[string]gjson.Result, error) {
	fields := make(map[string]gjson.Result, len(names))
	seen := make(map[string]bool, len(names))
	var err error
	obj.ForEach(func(key, value gjson.Result) bool {
		if !slices.Contains(names, key.Str) {
			return true
		}
		if seen[key.Str] {
			err = fmt.Errorf("the key %s%s appears twice", prefix, key.Str)
			return false
		}
		seen[key.Str] = true
		if value.Type != gjson.Null {
			fields[key.Str] = value
		}
		return true
	})
	return fields, err
}

// stringField returns the string member name of fields ("" when absent), or
// an error when it holds another type.
func stringField(fields map[string]gjson.Result, prefix, name string) (string, error) {
	v, ok := fields[name]
	switch {
	case !ok:
		return "", nil
	case v.Type != gjson.String:
		return "", fmt.Errorf("%s%s is not a string", prefix, name)
	}
	return v.Str, nil
}

// decideHook is the hook's whole decision for one tool call:
//
//  1. a tool other than the agent's shell: no decision;
//  2. one simple command of literal words (shellword.AgentCommand) allowed
//     by a rule (global, the agent's provider list, or the project's
//     confirmed rules), or else by a person's temporary grant for this
//     project whose executable is the one argv[0] resolves to on the hook's
//     PATH: allow, with the rule's or grant's provenance, written to the
//     audit log;
//  3. Codex's PermissionRequest event (Codex is about to show its own
//     prompt, after the PreToolUse hook already decided) not allowed by a
//     rule or grant: no decision, so Codex's own prompt asks the person —
//     asking on the card again would ask twice;
//  4. anything else — not allowed by a rule, or shell syntax that is never
//     matched — goes to the desktop card, flagged as running through the
//     agent's shell; the person's answer becomes allow or deny;
//  5. no person's answer can be had (the app cannot be reached, has no
//     approver or cannot show the card, the question ended unanswered, or
//     nobody answered within AskBudget): unanswered, never allow.
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
	if deps.checkDirs != nil {
		projects := []string{root}
		if root == "" {
			projects[0] = req.Cwd
		}
		if req.Dir != req.Cwd {
			projects = append(projects, req.Dir)
		}
		if err := deps.checkDirs(projects...); err != nil {
			// Nothing of agentgate's own places is read or written: not
			// the allow-lists, not the grants, not the audit log, not the
			// socket. A denial, not the agent's own prompt: the person
			// must fix the environment, not answer for this one command.
			fmt.Fprintf(stderr, "agentgate hook: %v\n", err)
			return hookAnswer{Verdict: verdictDeny, Reason: placesDenial(err)}
		}
	}
	var argv []string
	why := "PowerShell commands are not matched against allow-lists"
	if req.Classifiable {
		var err error
		if argv, err = shellword.AgentCommand(req.CommandLine); err != nil {
			why = err.Error()
		}
	}
	if argv != nil {
		// Allowed ahead of time: the proposal and its decision are known
		// now, so they are audited in one write and one fsync.
		allow := func(decision audit.Entry, provenance string) hookAnswer {
			proposal := hookAuditEntry(req, root, argv)
			proposal.Kind = audit.KindProposal
			entry := proposal
			entry.Kind, entry.Decision, entry.Rule, entry.Grant = audit.KindDecision, decision.Decision, decision.Rule, decision.Grant
			logAudit(deps, stderr, proposal, entry)
			return hookAnswer{Verdict: verdictAllow, Reason: "agentgate: allowed by " + provenance}
		}
		d := deps.decide(prefs.Query{Argv: argv, Provider: req.Agent, ProjectRoot: root, Dir: req.Dir})
		if d.Allowed && d.Rule != nil {
			return allow(audit.Entry{Decision: audit.DecisionRule, Rule: auditRule(d.Rule)}, d.Rule.Describe())
		}
		if deps.grant != nil {
			m, ok, err := deps.grant(argv, req.Dir, req.Agent, root)
			if err != nil {
				fmt.Fprintf(stderr, "agentgate hook: %v\n", err)
			}
			// A grant, like a rule, allows only what the argument guard
			// passes beyond its tokens.
			if ok && len(prefs.Guard(argv, len(m.Grant.Tokens), req.Dir)) == 0 {
				g := audit.GrantOf(m)
				return allow(audit.Entry{Decision: audit.DecisionGrant, Grant: g}, g.String())
			}
		}
		why = d.Explain(argv)
	}
	if req.Agent == Codex && req.Event == "PermissionRequest" {
		return hookAnswer{Verdict: verdictNone}
	}
	askCtx, cancel := context.WithTimeout(ctx, AskBudget)
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
		problem := err.Error()
		if askCtx.Err() != nil && ctx.Err() == nil {
			problem = fmt.Sprintf("nobody answered agentgate's approval card within %v", AskBudget)
		}
		entry := hookAuditEntry(req, root, argv)
		entry.Kind = audit.KindRefusal
		entry.Code = "unanswered"
		entry.Message = "no person's answer: " + problem
		logAudit(deps, stderr, entry)
		return hookAnswer{Verdict: verdictUnanswered, Problem: problem, Why: why}
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

// placesDenial is the reason given to the model when agentgate refused its
// own places (prefs.DirError): what was refused and why, and what to do.
func placesDenial(err error) string {
	return "agentgate blocked this command: " + err.Error() +
		". No command is allowed through agentgate until then. Do not retry it and do not work around it " +
		"(another form, another tool, a script, changing the variable yourself); tell the person what agentgate said."
}

// unansweredDenial is the reason given to the model when no person's
// answer could be had: what happened, why no rule allowed the command, and
// what to do — not retry or work around it, but have a person approve it
// in agentgate or add a rule.
func unansweredDenial(a hookAnswer) string {
	var b strings.Builder
	b.WriteString("agentgate blocked this command: ")
	b.WriteString(a.Problem)
	b.WriteString(", so no person could approve it.")
	if a.Why != "" {
		b.WriteString(" Why it was not allowed automatically: ")
		b.WriteString(a.Why)
		b.WriteString(".")
	}
	b.WriteString(" Do not retry it and do not work around it (another form, another tool, a script). " +
		"Tell the person: they must approve it in agentgate (start the app with `agentgate`) " +
		"or add an allow-list rule (`agentgate allow add`).")
	return b.String()
}

// unansweredAsk is the reason shown with Claude Code's own prompt when no
// person's answer could be had through agentgate.
func unansweredAsk(a hookAnswer) string {
	reason := "agentgate could not ask on the desktop: " + a.Problem + "; decide here. Start the app with `agentgate` to get agentgate's approval card."
	if a.Why != "" {
		reason += " Why it was not allowed automatically: " + a.Why
	}
	return reason
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

// logAudit appends entries to the audit log in one go, reporting a failure
// on stderr (see hookDeps.audit); without an audit dependency it does
// nothing.
func logAudit(deps hookDeps, stderr io.Writer, entries ...audit.Entry) {
	if deps.audit == nil {
		return
	}
	if err := deps.audit(entries...); err != nil {
		fmt.Fprintf(stderr, "agentgate hook: could not write the audit log: %v\n", err)
	}
}

// auditRule converts a prefs rule to its audit-log form.
func auditRule(r *prefs.Rule) *audit.Rule {
	return &audit.Rule{Text: prefs.FormatList(r.Tokens), Scope: string(r.Scope), Provider: r.Provider, File: r.File, Line: r.Line}
}

// formatHookAnswer returns exactly what the hook prints on stdout for
// req's agent and event (req.Event "" when the input could not be read); an
// empty result means print nothing. An unanswered verdict is Claude Code's
// "ask" only when claudeAsk is true (a tested version, whose "ask" shows its
// own prompt or denies in -p mode); everywhere else it is a denial whose
// reason tells the model what to do.
//
//   - Claude Code, PreToolUse: hookSpecificOutput with hookEventName,
//     permissionDecision (allow, deny or ask) and permissionDecisionReason.
//   - Codex, PreToolUse: the same fields, with allow carrying updatedInput,
//     the tool_input exactly as received (Codex rejects a bare allow as
//     unsupported, fails the hook and runs the tool; with updatedInput it
//     is accepted and the input stays what it was). Only documented fields:
//     Codex fails a hook whose output it cannot read.
//   - Claude Code and Codex, PermissionRequest: hookSpecificOutput with
//     hookEventName and decision {behavior, message (deny only)}; no
//     decision prints nothing, which leaves the agent's own prompt in place.
//   - Gemini CLI, BeforeTool: {"decision": "allow"|"deny", "reason": …}
//     (0.61.0 ignores allow and lets its own policy decide; deny blocks and
//     the reason goes to the model); no decision is {}.
func formatHookAnswer(req hookRequest, a hookAnswer, claudeAsk bool) []byte {
	decision, reason := "", a.Reason
	switch a.Verdict {
	case verdictAllow:
		decision = "allow"
	case verdictDeny:
		decision = "deny"
	case verdictUnanswered:
		decision, reason = "deny", unansweredDenial(a)
		if req.Agent == ClaudeCode && claudeAsk {
			decision, reason = "ask", unansweredAsk(a)
		}
	}
	var out string
	switch {
	case req.Agent == Gemini:
		out = `{}`
		if decision != "" {
			out = `{"decision":"` + decision + `","reason":` + jsonString(reason) + `}`
		}
	case req.Event == "PermissionRequest":
		switch decision {
		case "allow":
			out = `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`
		case "deny":
			out = `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":` + jsonString(reason) + `}}}`
		default:
			return nil
		}
	default:
		if decision == "" {
			return nil
		}
		out = `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"` + decision +
			`","permissionDecisionReason":` + jsonString(reason)
		if req.Agent == Codex && decision == "allow" {
			out += `,"updatedInput":` + compactJSON(req.ToolInput)
		}
		out += `}}`
	}
	return []byte(out + "\n")
}

// compactJSON returns the valid JSON text raw without insignificant
// whitespace; values, strings included, are kept exactly.
func compactJSON(raw string) string {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(raw)); err != nil {
		// raw was checked by json.Valid when the payload was parsed.
		panic(err)
	}
	return b.String()
}

// jsonString returns s as a JSON string, escaped as encoding/json escapes it
// (HTML-safe). The answers are written from literal pieces rather than
// marshalled structs because encoding/json's first marshalling of a struct
// type costs tens of microseconds, paid on every tool call.
func jsonString(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		// A Go string always marshals (invalid UTF-8 becomes U+FFFD).
		panic(err)
	}
	return string(b)
}

// runHook is the hook with its connections given: it reads the payload from
// stdin, decides, prints the answer and returns 0 — always 0 for a known
// agent, because several agents run the tool anyway when a hook exits
// non-zero. Unreadable input is unanswered: a denial (Claude Code, a tested
// version: "ask"), never allow.
func runHook(args []string, stdin io.Reader, stdout, stderr io.Writer, deps hookDeps) int {
	if len(args) != 1 || (args[0] != ClaudeCode && args[0] != Gemini && args[0] != Codex) {
		fmt.Fprintln(stderr, "usage: agentgate hook claude-code|gemini|codex   (or agentgate-hook AGENT; reads the agent's hook JSON on stdin)")
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
	if err != nil {
		fmt.Fprintf(stderr, "agentgate hook %s: %v\n", agent, err)
		req = hookRequest{Agent: agent}
		answer = hookAnswer{Verdict: verdictUnanswered, Problem: "agentgate could not read this tool call (" + err.Error() + ")"}
	} else {
		answer = decideHook(context.Background(), req, deps, stderr)
	}
	claudeAsk := false
	if answer.Verdict == verdictUnanswered && agent == ClaudeCode && deps.claudeAsk != nil {
		claudeAsk = deps.claudeAsk()
	}
	if out := formatHookAnswer(req, answer, claudeAsk); len(out) > 0 {
		if _, err := stdout.Write(out); err != nil {
			fmt.Fprintf(stderr, "agentgate hook %s: writing the answer: %v\n", agent, err)
		}
	}
	return 0
}
