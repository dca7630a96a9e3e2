package wire

import "time"

// Method names. They are fixed: third parties implement them (SPEC §4).
const (
	MethodHello   = "hello"        // open a session; must come first
	MethodPropose = "exec.propose" // propose a command
	MethodWait    = "exec.wait"    // long-poll a run until it ends
	MethodOutput  = "exec.output"  // read stdout or stderr from a cursor
	MethodCancel  = "exec.cancel"  // withdraw a pending proposal or end a run
	MethodList    = "exec.list"    // this session's runs
	MethodShow    = "app.show"     // bring the desktop app's main window forward
	// MethodHandOver asks an agentgate serving without windows to hand the
	// socket over to the desktop app that sends it.
	MethodHandOver = "app.hand_over"
	MethodHookAsk  = "hook.ask" // ask the person about a command the agent's own shell will run
)

// Stable refusal codes carried in ErrorData.Code. Validation codes come from
// package exec's *Refusal unchanged (empty_argv, empty_program, nul_byte,
// redirection_token, cwd_not_found, cwd_outside_project,
// project_root_invalid, timeout_out_of_range, stdin_too_large,
// executable_not_found, batch_argument_unsafe, failed_to_start,
// containment_failed); the bridge adds these.
const (
	RefuseInvalidParams   = "invalid_params"       // with CodeInvalidParams: the params do not fit the method
	RefuseHelloRequired   = "hello_required"       // a method other than hello before hello
	RefuseHelloRepeated   = "hello_repeated"       // a second hello on one connection
	RefuseProviderInvalid = "provider_invalid"     // the provider name is not acceptable
	RefuseProjectInvalid  = "project_root_invalid" // project_root is not an absolute, existing directory
	RefuseDenied          = "denied"               // a person said no; the message carries their words
	RefuseExpired         = "expired"              // nobody answered before the proposal expired
	RefuseWithdrawn       = "withdrawn"            // the proposal was withdrawn (exec.cancel) before an answer
	RefuseNotFound        = "not_found"            // no run with that id in this session
	RefuseTooManyPending  = "too_many_pending"     // the session has too many unanswered proposals
	RefuseNoApprover      = "no_approver"          // no rule allows it and nobody can be asked
	RefuseStopped         = "stopped"              // the person chose "Stop everything"
	RefuseShuttingDown    = "shutting_down"        // the app is quitting
	RefuseBadEncoding     = "bad_encoding"         // stdin or an encoding name could not be decoded
	RefuseInternal        = "internal"             // a fault inside agentgate; not the agent's doing
	RefuseAuditFailed     = "audit_failed"         // the audit log cannot be written, so nothing runs
	RefuseTooManyConns    = "too_many_connections" // the connection cap is reached; the connection is closed
	RefuseFrameTooLarge   = "frame_too_large"      // with CodeInvalidRequest: a line over MaxFrame; the connection is closed
)

// Run states as the protocol shows them: the executor's states (running,
// exited, timed_out, cancelled, failed_to_start, lost) plus the states of a
// proposal that has not started.
const (
	StatePending   = "pending"   // waiting for a person's answer
	StateQueued    = "queued"    // allowed, waiting for a free slot under the concurrent-run ceiling
	StateDenied    = "denied"    // a person refused it; never ran
	StateExpired   = "expired"   // nobody answered in time; never ran
	StateWithdrawn = "withdrawn" // cancelled by the agent (or its connection closed) while pending; never ran
)

// HelloParams opens a session.
type HelloParams struct {
	// Provider names the agent's provider for provider-scope rules ("" for
	// none); letters, digits, '.', '_' and '-' only.
	Provider string `json:"provider"`
	// ProjectRoot is the absolute path of an existing directory; symlinks
	// are resolved and working directories must stay inside it.
	ProjectRoot string `json:"project_root"`
	// Client names the program talking (e.g. "agentgate-mcp/1.0"); shown to
	// the person.
	Client string `json:"client"`
}

// HelloResult identifies the session.
type HelloResult struct {
	// Session is this connection's session id.
	Session string `json:"session"`
	// ProjectRoot is the project root after resolving symlinks.
	ProjectRoot string `json:"project_root"`
	// Server names the server and its protocol revision.
	Server string `json:"server"`
}

// ProposeParams is a proposal (SPEC §2).
type ProposeParams struct {
	// Argv is the program and its arguments; no shell ever sees it.
	Argv []string `json:"argv"`
	// Cwd is relative to the project root or absolute inside it; "" is the root.
	Cwd string `json:"cwd"`
	// Stdin is fed to the process, at most 512 KiB (exec.MaxStdin) after decoding.
	Stdin string `json:"stdin,omitempty"`
	// StdinEncoding is "" or "text" (Stdin is the UTF-8 text) or "base64".
	StdinEncoding string `json:"stdin_encoding,omitempty"`
	// TimeoutMS bounds the run; absent or null means 120000; the range is
	// 1..600000.
	TimeoutMS *int64 `json:"timeout_ms,omitempty"`
	// Reason is the agent's explanation, shown to the person as the agent's
	// words.
	Reason string `json:"reason,omitempty"`
	// WaitMS, when present, makes the call also wait as exec.wait does
	// (cursor 0, the same bounds: 0 returns at once, at most 300000) and
	// return that result in ProposeResult.Wait: one round trip from a
	// proposal to its end. A proposal that ends without running (denied,
	// expired, withdrawn) is then answered with that refusal, as exec.wait
	// would. Absent: the call returns as soon as the proposal is started,
	// queued or pending.
	WaitMS *int64 `json:"wait_ms,omitempty"`
	// MaxBytes caps the stdout in Wait, as WaitParams.MaxBytes; used only
	// with WaitMS.
	MaxBytes int `json:"max_bytes,omitempty"`
	// Encoding is the encoding of the stdout in Wait, as
	// WaitParams.Encoding; used only with WaitMS.
	Encoding string `json:"encoding,omitempty"`
}

// ProposeResult says what became of a proposal that was not refused.
type ProposeResult struct {
	// RunID names the run in later calls.
	RunID string `json:"run_id"`
	// State is "running" (allowed by a rule and started), "queued" (allowed,
	// waiting for a slot) or "pending" (waiting for a person).
	State string `json:"state"`
	// Executable is the absolute path argv[0] resolved to.
	Executable string `json:"executable"`
	// Cwd is the working directory relative to the project root.
	Cwd string `json:"cwd"`
	// Rule is the matching allow-list rule when one allowed it.
	Rule *RuleRef `json:"rule,omitempty"`
	// Wait is the exec.wait result of the run (cursor 0) when the proposal
	// carried wait_ms; State above still says what the broker first did.
	Wait *WaitResult `json:"wait,omitempty"`
}

// RuleRef names the allow-list rule that decided, with its provenance.
type RuleRef struct {
	// Text is the rule as written (a Tcl list).
	Text string `json:"text"`
	// Scope is "global", "provider" or "project".
	Scope string `json:"scope"`
	// File is the allow-list file holding the rule.
	File string `json:"file"`
	// Line is the rule's 1-based line in File.
	Line int `json:"line"`
}

// WaitParams asks for a run's state, long-polling until it ends.
type WaitParams struct {
	// RunID names the run.
	RunID string `json:"run_id"`
	// Cursor is the stdout byte offset to read from (0 at first, then the
	// returned cursor).
	Cursor int64 `json:"cursor"`
	// WaitMS bounds the wait: absent means 30000; 0 returns at once; at most
	// 300000.
	WaitMS *int64 `json:"wait_ms,omitempty"`
	// MaxBytes caps the stdout returned (default and maximum MaxChunk).
	MaxBytes int `json:"max_bytes,omitempty"`
	// Encoding is "" or "text" (invalid UTF-8 escaped) or "base64".
	Encoding string `json:"encoding,omitempty"`
}

// WaitResult is a run's state and the stdout from the cursor. The wait
// returns when the run reaches a final state (or is denied/expired, as an
// error) or when WaitMS has passed.
type WaitResult struct {
	// State is one of the State* values or the executor's states.
	State string `json:"state"`
	// ExitCode is set once the run exited.
	ExitCode *int `json:"exit_code,omitempty"`
	// Stdout is the stdout from the cursor.
	Stdout Output `json:"stdout"`
	// StderrBytes is how many bytes stderr holds so far (read it with exec.output).
	StderrBytes int64 `json:"stderr_bytes"`
	// Error explains failed_to_start, timed_out, cancelled and lost.
	Error string `json:"error,omitempty"`
	// Changes summarises files created/modified/deleted, once the run ended
	// and the summary is made.
	Changes any `json:"changes,omitempty"`
	// ChangesPending is true when the run ended and its change summary is
	// still being made: a later exec.wait returns it.
	ChangesPending bool `json:"changes_pending,omitempty"`
}

// Output is a chunk of retained output.
type Output struct {
	// Data is the bytes as text (invalid UTF-8 bytes escaped as \xNN) or as
	// base64, per Encoding.
	Data string `json:"data"`
	// Encoding is "text" or "base64".
	Encoding string `json:"encoding"`
	// Cursor is where the next read starts.
	Cursor int64 `json:"cursor"`
	// Dropped is true when bytes before Data are no longer retained.
	Dropped bool `json:"dropped"`
	// EOF is true when the stream ended and Cursor is its length.
	EOF bool `json:"eof"`
}

// MaxChunk is the largest number of output bytes one response carries.
const MaxChunk = 1 << 20

// OutputParams reads a stream from a cursor.
type OutputParams struct {
	// RunID names the run.
	RunID string `json:"run_id"`
	// Stream is "stdout" or "stderr".
	Stream string `json:"stream"`
	// Cursor is the byte offset to read from.
	Cursor int64 `json:"cursor"`
	// MaxBytes caps the data returned (default and maximum MaxChunk).
	MaxBytes int `json:"max_bytes,omitempty"`
	// WaitMS, when > 0, waits up to that long (at most 300000) for data past
	// the cursor or the end of the stream.
	WaitMS int64 `json:"wait_ms,omitempty"`
	// Encoding is "" or "text" or "base64".
	Encoding string `json:"encoding,omitempty"`
}

// RunIDParams names a run (exec.cancel).
type RunIDParams struct {
	// RunID names the run.
	RunID string `json:"run_id"`
}

// CancelResult is the state after a cancel: "withdrawn" for a pending
// proposal, "cancelled" for a queued or running one (the call returns once
// the process tree is gone, at most about 10 s), or the final state the run
// had already reached.
type CancelResult struct {
	// State is the state after the cancel.
	State string `json:"state"`
}

// ListResult lists this session's runs, oldest first.
type ListResult struct {
	// Runs are this session's proposals and runs.
	Runs []RunInfo `json:"runs"`
}

// RunInfo describes one of the session's runs.
type RunInfo struct {
	// RunID names the run.
	RunID string `json:"run_id"`
	// State is its state.
	State string `json:"state"`
	// Argv is what was proposed.
	Argv []string `json:"argv"`
	// Cwd is the working directory relative to the project root.
	Cwd string `json:"cwd"`
	// ExitCode is set once it exited.
	ExitCode *int `json:"exit_code,omitempty"`
	// ProposedAt is when the proposal arrived.
	ProposedAt time.Time `json:"proposed_at"`
}

// HookAskParams asks the person about a command the agent's own shell runs.
type HookAskParams struct {
	// CommandLine is the shell text as the agent will run it.
	CommandLine string `json:"command_line"`
	// Cwd is the directory the agent's shell runs it in (absolute, or
	// relative to the project root); shown, not checked.
	Cwd string `json:"cwd"`
	// Reason is the agent's explanation, if any.
	Reason string `json:"reason,omitempty"`
	// AgentTool names the agent's tool (e.g. "Bash").
	AgentTool string `json:"agent_tool,omitempty"`
}

// HookAskResult is the person's answer.
type HookAskResult struct {
	// Decision is "allow" or "deny".
	Decision string `json:"decision"`
	// Message is the person's words to the agent ("" when none).
	Message string `json:"message"`
}

// Empty is the result of methods that return nothing ({}), and the params
// of methods that take none.
type Empty struct{}

// ShowResult is app.show's result.
type ShowResult struct {
	// Shown is false when this bridge has no window to show (an agentgate
	// serving without a display).
	Shown bool `json:"shown"`
}

// HandOverResult is app.hand_over's result.
type HandOverResult struct {
	// HandingOver is true when the bridge stops accepting at once and
	// releases the socket (it serves without windows); false when it keeps
	// serving (it has windows of its own).
	HandingOver bool `json:"handing_over"`
}
