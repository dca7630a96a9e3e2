// Package audit is agentgate's audit log: one JSON line per step of every
// proposal (SPEC §1 step 8, §4), appended with fsync by every process that
// decides or runs something (the app's bridge, `agentgate run`, `agentgate
// hook`), rotated by size, kept for a span of time under a disk cap
// (Housekeep), and read back by `agentgate log` and by the rule preview.
//
// The file is <state>/agentgate/audit.log (Linux: $XDG_STATE_HOME, by
// default ~/.local/state). Older entries live in rotated files named after
// the moment of their rotation, audit.log.20261130T101500.123456789Z,
// compressed (.gz) from the second newest on.
package audit

import (
	"time"

	"github.com/agentgate/agentgate/exec/runinfo"
)

// Kind says which step of a proposal an entry records.
type Kind string

// The kinds of entries.
const (
	// KindProposal: a proposal arrived (who, what, where), before any check.
	KindProposal Kind = "proposal"
	// KindDecision: what was decided — allowed by a rule (with provenance),
	// approved or denied by a person (and through which host), expired,
	// withdrawn.
	KindDecision Kind = "decision"
	// KindRefusal: the proposal was refused with a code (validation,
	// no_approver, too_many_pending, …); nothing ran.
	KindRefusal Kind = "refusal"
	// KindRunStart: the process started (PID).
	KindRunStart Kind = "run_start"
	// KindRunEnd: the run reached a final state.
	KindRunEnd Kind = "run_end"
	// KindRunChanges: the run's change summary, made after its end (the
	// agent hears of the end at once; see changes_pending).
	KindRunChanges Kind = "run_changes"
	// KindConnectionRefused: a connection was closed at accept (another
	// user, unreadable credentials, too many connections).
	KindConnectionRefused Kind = "connection_refused"
	// KindHistoryCap: a disk cap made agentgate drop history younger than
	// the span it keeps at least (the audit log's files, or run records);
	// Message says which and how to keep more.
	KindHistoryCap Kind = "history_cap"
)

// Decisions recorded in Entry.Decision.
const (
	DecisionRule      = "allowed_by_rule"  // an allow-list rule matched (Entry.Rule says which)
	DecisionGrant     = "allowed_by_grant" // a person's temporary grant matched (Entry.Grant says which)
	DecisionApproved  = "approved"         // a person approved (Entry.By says where)
	DecisionDenied    = "denied"           // a person denied (Entry.Message holds their words)
	DecisionExpired   = "expired"          // nobody answered in time
	DecisionWithdrawn = "withdrawn"        // the agent cancelled, or its connection closed, while pending
	DecisionStopped   = "stopped"          // the person chose "Stop everything" while it was pending
)

// Entry is one line of the audit log. Fields that do not apply are omitted.
type Entry struct {
	// Time is when the step happened (UTC, nanoseconds).
	Time time.Time `json:"time"`
	// Kind is the step.
	Kind Kind `json:"kind"`
	// RunID is the proposal's run id (also for proposals that never ran).
	RunID string `json:"run_id,omitempty"`
	// Session is the bridge session id ("" for `agentgate run` and hooks).
	Session string `json:"session,omitempty"`
	// Host is the process that wrote it: "app", "headless" (the app serving
	// without windows), "cli" or "hook".
	Host string `json:"host,omitempty"`
	// Provider is the proposer's provider name.
	Provider string `json:"provider,omitempty"`
	// Client is the client name the proposer gave.
	Client string `json:"client,omitempty"`
	// PeerUID is the connecting user id (connection_refused entries).
	PeerUID *int `json:"peer_uid,omitempty"`
	// PeerPID is the proposing process id, when known.
	PeerPID int `json:"peer_pid,omitempty"`
	// PeerExe is the proposing process's executable, when known.
	PeerExe string `json:"peer_exe,omitempty"`
	// Argv is the proposed argv exactly as sent — abbreviated when it is
	// longer than MaxArgvBytes (Bound), then ArgvSHA256 is set.
	Argv []string `json:"argv,omitempty"`
	// ArgvSHA256 is set when Argv was abbreviated: ArgvDigest of the whole
	// argv, which the run's record keeps.
	ArgvSHA256 string `json:"argv_sha256,omitempty"`
	// ArgvBytes is the whole argv's size in bytes, when abbreviated.
	ArgvBytes int64 `json:"argv_bytes,omitempty"`
	// ArgvCount is the whole argv's number of tokens, when abbreviated.
	ArgvCount int `json:"argv_count,omitempty"`
	// CommandLine is the shell text of a hook request (runs through the
	// agent's own shell; Argv is then set only when it is one simple command).
	CommandLine string `json:"command_line,omitempty"`
	// ThroughAgentShell marks hook requests: agentgate runs nothing.
	ThroughAgentShell bool `json:"through_agent_shell,omitempty"`
	// Executable is argv[0] resolved to an absolute path.
	Executable string `json:"executable,omitempty"`
	// Cwd is the working directory (absolute, resolved once validated; as
	// sent otherwise).
	Cwd string `json:"cwd,omitempty"`
	// ProjectRoot is the session's project root.
	ProjectRoot string `json:"project_root,omitempty"`
	// TimeoutMS is the run's timeout.
	TimeoutMS int64 `json:"timeout_ms,omitempty"`
	// StdinBytes is the size of the stdin bound to the approval.
	StdinBytes int `json:"stdin_bytes,omitempty"`
	// StdinSHA256 is the hex SHA-256 of that stdin.
	StdinSHA256 string `json:"stdin_sha256,omitempty"`
	// Reason is the agent's stated reason (the agent's words).
	Reason string `json:"reason,omitempty"`
	// Decision is one of the Decision* values (decision entries).
	Decision string `json:"decision,omitempty"`
	// Rule is the allow-list rule that allowed it, with provenance.
	Rule *Rule `json:"rule,omitempty"`
	// Grant is the temporary grant that allowed it, with the time it had
	// left.
	Grant *Grant `json:"grant,omitempty"`
	// By is where a person answered: "card", "terminal", …
	By string `json:"by,omitempty"`
	// Message is the person's message to the agent, or the refusal's sentence.
	Message string `json:"message,omitempty"`
	// Code is the refusal's stable code (refusal entries).
	Code string `json:"code,omitempty"`
	// PID is the started process's id (run_start).
	PID int `json:"pid,omitempty"`
	// State is the run's final state (run_end).
	State string `json:"state,omitempty"`
	// ExitCode is the exit code when the run exited.
	ExitCode *int `json:"exit_code,omitempty"`
	// DurationMS is how long the run lasted.
	DurationMS int64 `json:"duration_ms,omitempty"`
	// StdoutBytes counts the bytes the run wrote to stdout.
	StdoutBytes int64 `json:"stdout_bytes,omitempty"`
	// StderrBytes counts the bytes the run wrote to stderr.
	StderrBytes int64 `json:"stderr_bytes,omitempty"`
	// Changes summarises files the run created, modified or deleted.
	Changes *runinfo.ChangeSummary `json:"changes,omitempty"`
	// WithoutWriteConfinement marks a person's approval of this one run
	// without write confinement (decision approved, on the card only).
	WithoutWriteConfinement bool `json:"without_write_confinement,omitempty"`
	// Confinement is how the run was confined, or why its writes were not
	// (run_start).
	Confinement *runinfo.Confinement `json:"confinement,omitempty"`
	// ProtectedChanged lists what changed during the run among the files
	// in the project that steer agents and tools (run_end; reported
	// loudly, see exec.Record.ProtectedChanged).
	ProtectedChanged []string `json:"protected_changed,omitempty"`
	// Error explains a failed start, a timeout or a loss.
	Error string `json:"error,omitempty"`
	// Count is set when the entry stands for more than one occurrence: a
	// refusal entry coalescing the refusals one session got in a burst
	// (the first of them has an entry of its own before).
	Count int `json:"count,omitempty"`
	// Since is, with Count, when the first of the coalesced occurrences
	// happened (Time is when the last did).
	Since time.Time `json:"since,omitzero"`
}

// Rule is an allow-list rule with its provenance.
type Rule struct {
	// Text is the rule as a Tcl list, as in the file.
	Text string `json:"text"`
	// Scope is "global", "provider" or "project".
	Scope string `json:"scope"`
	// Provider is set for provider-scope rules.
	Provider string `json:"provider,omitempty"`
	// File is the allow-list file holding the rule.
	File string `json:"file"`
	// Line is the rule's 1-based line in File.
	Line int `json:"line"`
}

// Grant is a temporary grant (prefs.Grant) as it allowed a command.
type Grant struct {
	// ID is the grant's id (`agentgate allow revoke ID`).
	ID string `json:"id"`
	// Kind is "program" or "exact".
	Kind string `json:"kind"`
	// Text is the granted tokens as a Tcl list.
	Text string `json:"text"`
	// By is where the person gave it: "card" or "terminal".
	By string `json:"by"`
	// UntilQuit is true for a grant that lasts until the app quits.
	UntilQuit bool `json:"until_quit,omitempty"`
	// LeftMS is the time a timed grant had left, in milliseconds.
	LeftMS int64 `json:"left_ms,omitempty"`
}
