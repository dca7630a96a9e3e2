package agentbridge

import (
	"context"
	"slices"
	"time"

	"github.com/agentgate/agentgate/exec"
	"github.com/agentgate/agentgate/exec/runinfo"
	"github.com/agentgate/agentgate/prefs"
)

// Approver asks a person. The desktop card, the terminal prompt of
// `agentgate run` and the scripted fake in agentbridge/approvertest
// implement it.
type Approver interface {
	// Ask shows the request to a person and returns their answer. It must
	// return when ctx ends: ctx's error is context.DeadlineExceeded when the
	// proposal expired unanswered (the desktop app then notifies the person)
	// and context.Canceled when it was withdrawn (by the agent, its
	// connection closing, "Stop everything" or shutdown). The broker calls
	// Ask from a goroutine of its own per request, so one slow answer never
	// blocks another proposal; it enforces the expiry itself even if Ask
	// ignores ctx. An error other than ctx's makes the broker refuse the
	// proposal with no_approver.
	Ask(ctx context.Context, req *ApprovalRequest) (Answer, error)
}

// ApprovalRequest is what a person is shown. The broker gives every Ask call
// its own deep copy, and runs its own copy of Command — the one this request
// was built from — so nothing an Approver does to the request can change
// what runs.
type ApprovalRequest struct {
	// ID is the run id the agent knows the proposal by.
	ID string
	// Session is the proposing bridge session.
	Session string
	// Provider is the proposer's provider name ("" for none).
	Provider string
	// Client is the client name the proposer gave in hello.
	Client string
	// PeerPID and PeerExe identify the proposing process where the OS says
	// (0 and "" when unknown).
	PeerPID int
	// PeerExe is the proposing process's executable path, when readable.
	PeerExe string
	// ProjectRoot is the session's project root (symlinks resolved).
	ProjectRoot string
	// Command is the validated command that will run if approved: argv,
	// resolved executable, working directory, stdin and timeout. Zero for
	// hook requests.
	Command exec.Command
	// ThroughAgentShell marks a hook request: the agent's own shell will run
	// CommandLine, agentgate runs nothing and cannot bound it.
	ThroughAgentShell bool
	// CommandLine is the hook request's shell text (ThroughAgentShell only).
	CommandLine string
	// Cwd is the hook request's working directory as the agent gave it.
	Cwd string
	// AgentTool names the agent's tool for hook requests (e.g. "Bash").
	AgentTool string
	// Reason is the agent's explanation — the agent's words, not verified.
	Reason string
	// Findings are the argument guard's findings for the command (for a
	// hook request, for its literal words, when it has any): the
	// arguments, wrappers or repository settings that make it write
	// outside its obvious output, run another program or work elsewhere,
	// each with why. Shown to the person; when MatchedRule is set they
	// are why that rule did not allow the command. nil when none.
	Findings []prefs.Finding
	// MatchedRule is the allow-list rule that matched the command but did
	// not allow it because of Findings; nil when no rule matched.
	MatchedRule *prefs.Rule
	// Confinement is how the run would be confined if approved now (what
	// it may write, its network); Summary is the line to show. Zero for
	// hook requests (the agent's shell runs them, unconfined by agentgate).
	Confinement runinfo.Confinement
	// ProtectedChanged says what earlier runs in this project changed among
	// the files that steer agents and tools (exec.Record.ProtectedChanged)
	// since a person last answered a question about this project here, one
	// line per run: its command, then the changes, already in display form
	// (escaped, display.Command and display.Text). nil when none.
	ProtectedChanged []string
	// Proposed is when the proposal arrived.
	Proposed time.Time
	// Expires is when it expires unanswered.
	Expires time.Time
}

// clone returns a deep copy of r.
func (r *ApprovalRequest) clone() *ApprovalRequest {
	c := *r
	c.Command = cloneCommand(r.Command)
	c.Findings = slices.Clone(r.Findings)
	c.Confinement.Writes = slices.Clone(r.Confinement.Writes)
	c.Confinement.Dropped = slices.Clone(r.Confinement.Dropped)
	c.ProtectedChanged = slices.Clone(r.ProtectedChanged)
	if r.MatchedRule != nil {
		rule := *r.MatchedRule
		rule.Tokens = slices.Clone(rule.Tokens)
		c.MatchedRule = &rule
	}
	return &c
}

// cloneCommand deep-copies a Command's slices.
func cloneCommand(cmd exec.Command) exec.Command {
	cmd.Argv = slices.Clone(cmd.Argv)
	cmd.Stdin = slices.Clone(cmd.Stdin)
	return cmd
}

// Answer is a person's answer.
type Answer struct {
	// Approved is true to run the command (hook: to let the agent run it).
	Approved bool
	// Message is passed to the agent, with a denial especially ("use the
	// test target instead").
	Message string
	// By names where the person answered: "card", "terminal", "script", …
	By string
	// WithoutWriteConfinement approves this one run without write
	// confinement (its writes are not restricted; scoping, network and
	// lifetime hold). Only the desktop card offers it, for one run at a
	// time; rules and grants never carry it.
	WithoutWriteConfinement bool
}
