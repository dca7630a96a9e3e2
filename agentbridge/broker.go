// Package agentbridge is the door agents knock on and the gate behind it:
// the Unix-socket server speaking the JSON-RPC protocol of docs/protocol.md,
// sessions and their ownership of runs, and the Broker that takes each
// proposal along SPEC §1's path — validate, decide by rule, ask a person,
// run exactly what was approved, record every step in the audit log.
//
// The protocol's types live in agentbridge/wire, the Go client in
// agentbridge/client, the audit log in agentbridge/audit, a scripted
// Approver for tests in agentbridge/approvertest and a ready-made bridge for
// tests in agentbridge/bridgetest.
package agentbridge

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentgate/agentgate/agentbridge/audit"
	"github.com/agentgate/agentgate/agentbridge/wire"
	"github.com/agentgate/agentgate/exec"
	"github.com/agentgate/agentgate/exec/display"
	"github.com/agentgate/agentgate/prefs"

	"github.com/agentgate/agentgate/exec/runinfo"
)

// Config wires a Broker to the rest of agentgate.
type Config struct {
	// Executor runs approved commands. Required.
	Executor *exec.Executor
	// Rules decides by allow-list; nil means no rules (every proposal asks).
	Rules *prefs.Store
	// Grants holds the person's temporary grants, read on every proposal no
	// rule allows; nil means none.
	Grants *prefs.Grants
	// Audit records every step. Required: a gate that cannot record refuses.
	Audit *audit.Log
	// Settings returns the current settings; read on every proposal, so a
	// changed settings file applies to the next one. nil means
	// prefs.DefaultSettings.
	Settings func() prefs.Settings
	// PathEnv is the PATH used to resolve argv[0]: the host's, never the
	// agent's (exec.PathFromEnv of the executor's environment); "" means
	// this process's PATH.
	PathEnv string
	// StateDir is the executor's state directory, used to ask other hosts
	// (`agentgate run`) to cancel their runs (exec.RequestCancel).
	StateDir string
	// Approver asks a person; nil means nobody can be asked (SetApprover
	// can attach one later).
	Approver Approver
	// NoApproverReason is the text of the no_approver refusal a proposal
	// without a rule gets while there is no Approver: why nobody can be
	// asked and how a person can approve. "" means the default, which
	// suggests a rule or starting the agentgate app.
	NoApproverReason string
	// MaxFinishedPerSession caps the finished proposals a session remembers
	// for exec.wait/exec.list (oldest forgotten first); 0 means 1000.
	MaxFinishedPerSession int
}

// Broker takes proposals along SPEC §1's path. It is safe for concurrent
// use; the desktop app and the socket server share one.
type Broker struct {
	// cfg is the configuration, defaults applied.
	cfg Config
	// ctx ends when the broker closes, withdrawing every pending question.
	ctx context.Context
	// stop ends ctx.
	stop context.CancelFunc

	// mu guards everything below and every ticket's mutable fields.
	mu sync.Mutex
	// approver is the current approver (nil: none).
	approver Approver
	// tickets holds every proposal not yet forgotten, by run id.
	tickets map[string]*ticket
	// queue holds allowed proposals waiting for a run slot, oldest first.
	queue []*ticket
	// running counts started runs not yet ended (and slots being started).
	running int
	// subs are the change subscribers (coalescing channels of size 1).
	subs map[int]chan struct{}
	// nextSub numbers subscribers.
	nextSub int
	// closed is set by Close.
	closed bool
	// notTaking is the refusal every new session, proposal and question
	// gets after StopTaking (nil before); atomic, read on every proposal.
	notTaking atomic.Pointer[wire.Error]
	// wg tracks the broker's goroutines.
	wg sync.WaitGroup
	// refusals coalesces agents' repeated refusals in the audit log.
	refusals refusals
	// protected holds, by project root, the lines of ApprovalRequest.
	// ProtectedChanged not yet answered by a person: added when a run that
	// changed protected files ends, removed once a person answered a
	// question that showed them; at most maxProtectedNotes per project,
	// the newest.
	protected map[string][]string
}

// maxProtectedNotes bounds the protected-change lines a project's next
// question shows (the audit log and Processes keep them all).
const maxProtectedNotes = 20

// NewBroker returns a broker for cfg.
func NewBroker(cfg Config) (*Broker, error) {
	if cfg.Executor == nil || cfg.Audit == nil {
		return nil, errors.New("agentbridge: a broker needs an Executor and an Audit log")
	}
	if cfg.Settings == nil {
		cfg.Settings = prefs.DefaultSettings
	}
	if cfg.PathEnv == "" {
		cfg.PathEnv = os.Getenv("PATH")
	}
	if cfg.NoApproverReason == "" {
		cfg.NoApproverReason = "no allow-list rule allows this command and nobody can be asked to approve it right now; add a rule (agentgate allow add) or start the agentgate app"
	}
	if cfg.MaxFinishedPerSession <= 0 {
		cfg.MaxFinishedPerSession = 1000
	}
	ctx, stop := context.WithCancel(context.Background())
	return &Broker{cfg: cfg, ctx: ctx, stop: stop, approver: cfg.Approver,
		tickets: make(map[string]*ticket), subs: make(map[int]chan struct{}), protected: make(map[string][]string)}, nil
}

// StopTaking makes the broker refuse, from now on, every new session,
// proposal and question with code shutting_down and message (which should
// say where to go instead: nothing ran, and a new connection reaches the
// agentgate that took over). Proposals queued for a run slot are cancelled
// (why says why; they never start). Runs already started go on to their
// end, and their sessions can still wait on, read and cancel them. An
// agentgate serving without windows calls it when it hands over to the
// desktop app; it holds no pending questions (it asks nobody).
func (b *Broker) StopTaking(message, why string) {
	b.mu.Lock()
	b.notTaking.Store(wire.Refuse(wire.RefuseShuttingDown, message))
	queued := slices.Clone(b.queue)
	b.mu.Unlock()
	for _, t := range queued {
		b.cancelTicket(t, wire.StateWithdrawn, nil, audit.DecisionWithdrawn, why)
	}
}

// SetApprover attaches the approver that asks the person (nil detaches it:
// later proposals without a rule are refused with no_approver). Questions
// already asked stay with the approver that got them.
func (b *Broker) SetApprover(a Approver) {
	b.mu.Lock()
	b.approver = a
	b.mu.Unlock()
}

// Session is one agent connection's identity after hello. Runs belong to the
// session that proposed them: only it may wait on, read or cancel them.
type Session struct {
	// ID is the session id returned by hello.
	ID string
	// Provider is the provider name ("" for none), validated.
	Provider string
	// Client is the client name the agent gave.
	Client string
	// ProjectRoot is the project root, absolute with symlinks resolved.
	ProjectRoot string
	// Peer is what the OS says about the connecting process.
	Peer wire.Peer

	// b is the broker the session belongs to.
	b *Broker
	// runs are the session's proposals in order (guarded by b.mu).
	runs []*ticket
	// pending counts the session's unanswered questions (guarded by b.mu).
	pending int
	// closed is set by Close (guarded by b.mu).
	closed bool
}

// OpenSession checks a hello and returns the new session. The provider must
// pass prefs.ValidateProviderName (or be empty); the project root must be an
// absolute path of an existing directory, and is stored with symlinks
// resolved.
func (b *Broker) OpenSession(hello wire.HelloParams, peer wire.Peer) (*Session, *wire.Error) {
	if hello.Provider != "" {
		if err := prefs.ValidateProviderName(hello.Provider); err != nil {
			return nil, wire.Refuse(wire.RefuseProviderInvalid, fmt.Sprintf("provider %q is not acceptable: %v", hello.Provider, err))
		}
	}
	root, werr := resolveProjectRoot(hello.ProjectRoot)
	if werr != nil {
		return nil, werr
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, wire.Refuse(wire.RefuseShuttingDown, "agentgate is shutting down; start it again and reconnect")
	}
	if werr := b.notTaking.Load(); werr != nil {
		return nil, werr
	}
	return &Session{ID: "s-" + randomHex(8), Provider: hello.Provider, Client: hello.Client, ProjectRoot: root, Peer: peer, b: b}, nil
}

// resolveProjectRoot checks and resolves a hello's project_root.
func resolveProjectRoot(root string) (string, *wire.Error) {
	if root == "" || !filepath.IsAbs(root) {
		return "", wire.Refuse(wire.RefuseProjectInvalid, fmt.Sprintf("project_root %q is not an absolute path; send the absolute path of the project directory", root))
	}
	resolved, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", wire.Refuse(wire.RefuseProjectInvalid, fmt.Sprintf("project_root %q cannot be resolved: %v; send an existing directory", root, err))
	}
	fi, err := os.Stat(resolved)
	if err != nil || !fi.IsDir() {
		return "", wire.Refuse(wire.RefuseProjectInvalid, fmt.Sprintf("project_root %q (resolved %q) is not a directory", root, resolved))
	}
	return resolved, nil
}

// ticket is one proposal (or hook question) on its way through the broker.
type ticket struct {
	// id is the run id.
	id string
	// session proposed it.
	session *Session
	// req is the immutable request a person is shown (the broker's copy).
	req *ApprovalRequest
	// binding is the digest of the exact command approved, re-checked
	// before start.
	binding string
	// hook marks a hook question (not a run; never started).
	hook bool
	// rule is the allow-list rule that allowed it, if any.
	rule *wire.RuleRef

	// Guarded by Broker.mu:
	// state is the protocol state while no run exists (pending, queued, or a
	// final non-run state); once run is set, the run's record is the truth.
	state string
	// refusal is the error that ended it without running (denied, expired…).
	refusal *wire.Error
	// answer is the person's answer (hook questions).
	answer Answer
	// run is set once started.
	run *exec.Run
	// endWritten is made with run and closed once the run's end is written
	// to the audit log (runEnded), so that the agent never hears of an end
	// the log does not hold yet.
	endWritten chan struct{}
	// changed is closed and replaced on every state change.
	changed chan struct{}
	// cancelAsk withdraws the question from the approver.
	cancelAsk context.CancelFunc
	// cancelled is set when a queued run was cancelled before it started,
	// or a starting one (start cancels it once it exists).
	cancelled bool
	// starting is true while start hands the ticket to the executor: it
	// has a run slot but no run yet.
	starting bool
}

// stateAnswered is a question's state between its outcome (an answer, an
// expiry, a withdrawal) and the agent being told, while the outcome is
// audited: no longer pending, so nothing else withdraws or answers it, and
// not yet final. The agent sees it as pending (currentState).
const stateAnswered = "answered"

// testHookAnswered, when set by a test, runs after a person's approval is
// taken and before it is audited and acted on.
var testHookAnswered func(id string)

// final reports whether the ticket reached a state it never leaves.
// Called with Broker.mu held.
func (t *ticket) final() bool {
	if t.run != nil {
		return t.run.Record().State.Final()
	}
	return t.state != wire.StatePending && t.state != wire.StateQueued && t.state != stateAnswered && t.state != ""
}

// currentState returns the protocol state (a question whose outcome is
// being audited is still pending). Called with Broker.mu held.
func (t *ticket) currentState() string {
	if t.run != nil {
		if !isClosed(t.endWritten) {
			return string(exec.StateRunning) // its end is not in the audit log yet
		}
		return string(t.run.Record().State)
	}
	if t.state == stateAnswered {
		return wire.StatePending
	}
	return t.state
}

// isClosed reports whether ch is closed.
func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// setState changes a ticket's non-run state and wakes its waiters. Called
// with Broker.mu held.
func (b *Broker) setState(t *ticket, state string, refusal *wire.Error) {
	t.state, t.refusal = state, refusal
	close(t.changed)
	t.changed = make(chan struct{})
	b.notifyLocked()
}

// conclude ends a ticket that will not run, in the order SPEC §10 asks:
// its outcome is audited (durable) first, then the agent is told (state
// and refusal); a hook question, or a ticket of a closed session, is then
// forgotten. The caller has taken the ticket out of pending (state
// stateAnswered, or queued and marked cancelled) so that nothing else
// concludes it meanwhile. Called without Broker.mu.
func (b *Broker) conclude(t *ticket, state string, refusal *wire.Error, entries ...audit.Entry) {
	b.record(t.session, entries...)
	b.mu.Lock()
	b.setState(t, state, refusal)
	if t.hook || t.session.closed {
		delete(b.tickets, t.id)
	}
	b.mu.Unlock()
}

// Propose takes one proposal along SPEC §1's path: validate (before anyone
// is asked or anything is spent), decide by rule, otherwise ask the
// approver, then run exactly the validated command — at once, or queued
// when the concurrent-run ceiling is reached. Every step is audited. It
// returns state "running" or "queued" when a rule allowed it, "pending"
// when a person was asked (the answer arrives through Wait); refusals are
// application errors with a stable code.
func (s *Session) Propose(p wire.ProposeParams) (wire.ProposeResult, *wire.Error) {
	b := s.b
	settings := b.cfg.Settings()
	id := runinfo.NewID()
	proposal := audit.Entry{Kind: audit.KindProposal, RunID: id, Argv: p.Argv, Cwd: p.Cwd, Reason: p.Reason}
	// The proposal is audited together with what follows from it without
	// side effects (a refusal, a rule's decision) in one write, always
	// before anything runs or anyone is asked; see below for its fsync.
	auditFailed := func(err error) *wire.Error {
		return wire.Refuse(wire.RefuseAuditFailed, "agentgate cannot write its audit log, so it runs nothing: "+err.Error()+"; the person must fix the log's disk or permissions")
	}

	if werr := b.notTaking.Load(); werr != nil {
		b.record(s, proposal, refusalEntry(id, werr))
		return wire.ProposeResult{}, werr
	}

	// 1. The session is hello'd (the server enforces it); 2. validate.
	cmd, werr := s.validate(p, settings)
	if werr != nil {
		b.recordRefusal(s, proposal, refusalEntry(id, werr))
		return wire.ProposeResult{}, werr
	}
	req := &ApprovalRequest{ID: id, Session: s.ID, Provider: s.Provider, Client: s.Client, PeerPID: s.Peer.PID, PeerExe: s.Peer.Exe,
		ProjectRoot: s.ProjectRoot, Command: cmd, Reason: p.Reason, Proposed: time.Now()}
	t := &ticket{id: id, session: s, req: req, binding: bindingOf(cmd), changed: make(chan struct{})}

	// 3. Decide by rule, else by a person's temporary grant.
	if decision, ok := b.decideAhead(s, t); ok {
		// Written before the start (a crash of agentgate loses nothing),
		// fsynced while the run starts, and durable before the agent
		// hears back. If the fsync fails the run is ended at once and
		// the agent is told why.
		syncAudit, err := b.cfg.Audit.AppendThenSync(withProvenance(s, []audit.Entry{proposal, decision})...)
		if err != nil {
			b.logErr(err)
			return wire.ProposeResult{}, auditFailed(err)
		}
		synced := make(chan error, 1)
		go func() { synced <- syncAudit() }()
		werr := b.admit(t, settings)
		if err := <-synced; err != nil {
			b.logErr(err)
			b.cancelTicket(t, wire.StateDenied, auditFailed(err), audit.DecisionDenied, "the audit log could not be made durable")
			return wire.ProposeResult{}, auditFailed(err)
		}
		if werr != nil {
			return wire.ProposeResult{}, werr
		}
		return s.proposeResult(t, false), nil
	}

	// 4. Ask a person, never allow by default.
	b.mu.Lock()
	werr = b.questionRefusalLocked(s, t, settings)
	b.mu.Unlock()
	if werr != nil {
		b.recordRefusal(s, proposal, refusalEntry(id, werr))
		return wire.ProposeResult{}, werr
	}
	if err := b.record(s, proposal); err != nil {
		return wire.ProposeResult{}, auditFailed(err)
	}
	// The person sees how the run would be confined (what it may write).
	t.req.Confinement = b.cfg.Executor.Confinement(cmd, exec.Meta{})
	if werr := b.enqueueQuestion(s, t, settings); werr != nil {
		return wire.ProposeResult{}, b.refuse(s, id, werr)
	}
	return s.proposeResult(t, true), nil
}

// decideAhead looks for what a person decided ahead of time for t's
// command: an allow-list rule (then t.rule is set), else a temporary grant
// bound to this project, this provider and the executable the command
// resolved to — each only when the argument guard finds nothing beyond
// the rule's or grant's tokens (prefs.Decide, prefs.Guard). It returns the
// decision entry to audit, bound to the command, and false when neither
// allows it; then the guard's findings and the rule that matched are in
// t.req for the person. A grants file that cannot be read allows nothing
// (the error is logged and a person is asked).
func (b *Broker) decideAhead(s *Session, t *ticket) (audit.Entry, bool) {
	cmd := t.req.Command
	if b.cfg.Rules != nil {
		d := b.cfg.Rules.Decide(prefs.Query{Argv: cmd.Argv, Provider: s.Provider, ProjectRoot: s.ProjectRoot, Dir: cmd.Dir})
		if d.Allowed && d.Rule != nil {
			t.rule = ruleRef(d.Rule)
			return bound(audit.Entry{Kind: audit.KindDecision, RunID: t.id, Decision: audit.DecisionRule, Rule: auditRule(d.Rule)}, t), true
		}
		t.req.Findings, t.req.MatchedRule = d.Findings, d.Rule
	} else {
		t.req.Findings = prefs.Guard(cmd.Argv, 0, cmd.Dir)
	}
	if b.cfg.Grants != nil {
		m, ok, err := b.cfg.Grants.Match(prefs.GrantQuery{Argv: cmd.Argv, Executable: cmd.Executable, ProgramID: cmd.ProgramID, Provider: s.Provider, Project: s.ProjectRoot})
		if err != nil {
			fmt.Fprintf(os.Stderr, "agentgate: %v\n", err)
		}
		if ok && len(prefs.Guard(cmd.Argv, len(m.Grant.Tokens), cmd.Dir)) == 0 {
			return bound(audit.Entry{Kind: audit.KindDecision, RunID: t.id, Decision: audit.DecisionGrant, Grant: audit.GrantOf(m)}, t), true
		}
	}
	return audit.Entry{}, false
}

// validate turns the protocol proposal into a validated exec.Command.
func (s *Session) validate(p wire.ProposeParams, settings prefs.Settings) (exec.Command, *wire.Error) {
	stdin, werr := wire.DecodeStdin(p.Stdin, p.StdinEncoding)
	if werr != nil {
		return exec.Command{}, werr
	}
	timeout := settings.DefaultTimeout
	if p.TimeoutMS != nil {
		if *p.TimeoutMS <= 0 {
			return exec.Command{}, wire.Refuse(exec.CodeTimeoutOutOfRange, fmt.Sprintf(
				"timeout_ms %d is out of range: it must be between 1 and %d; omit it for the default of %d. There is no unlimited timeout",
				*p.TimeoutMS, exec.MaxTimeout.Milliseconds(), settings.DefaultTimeout.Milliseconds()))
		}
		if *p.TimeoutMS > exec.MaxTimeout.Milliseconds() {
			timeout = exec.MaxTimeout + time.Millisecond // refused by Validate with its message
		} else {
			timeout = time.Duration(*p.TimeoutMS) * time.Millisecond
		}
	}
	cmd, err := exec.Validate(exec.Proposal{Argv: p.Argv, Cwd: p.Cwd, ProjectRoot: s.ProjectRoot, Stdin: stdin, Timeout: timeout}, s.b.cfg.PathEnv)
	if err != nil {
		var ref *exec.Refusal
		if errors.As(err, &ref) {
			return exec.Command{}, wire.Refuse(ref.Code, ref.Message)
		}
		return exec.Command{}, wire.Refuse(wire.RefuseInternal, "validation failed unexpectedly: "+err.Error())
	}
	return cmd, nil
}

// proposeResult describes t right after Propose. The state is what the
// broker did with it — "pending" (a person was asked), "queued" or
// "running" (started) — even if the answer or the run's end has already
// followed; exec.wait reports what happened next.
func (s *Session) proposeResult(t *ticket, asked bool) wire.ProposeResult {
	state := wire.StatePending
	if !asked {
		s.b.mu.Lock()
		state = "running"
		if t.run == nil {
			state = wire.StateQueued
		}
		s.b.mu.Unlock()
	}
	return wire.ProposeResult{RunID: t.id, State: state, Executable: t.req.Command.Executable, Cwd: t.req.Command.DirRel, Rule: t.rule}
}

// refuse audits a refusal and returns it.
func (b *Broker) refuse(s *Session, id string, werr *wire.Error) *wire.Error {
	b.record(s, refusalEntry(id, werr))
	return werr
}

// refusalEntry is the audit entry of a refusal.
func refusalEntry(id string, werr *wire.Error) audit.Entry {
	code := ""
	if werr.Data != nil {
		code = werr.Data.Code
	}
	return audit.Entry{Kind: audit.KindRefusal, RunID: id, Code: code, Message: werr.Message}
}

// enqueueQuestion registers t as pending and asks the approver in the
// background.
func (b *Broker) enqueueQuestion(s *Session, t *ticket, settings prefs.Settings) *wire.Error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if werr := b.questionRefusalLocked(s, t, settings); werr != nil {
		return werr
	}
	t.req.Expires = t.req.Proposed.Add(settings.ApprovalExpiry)
	t.req.ProtectedChanged = slices.Clone(b.protected[t.req.ProjectRoot])
	ctx, cancel := context.WithDeadline(b.ctx, t.req.Expires)
	t.cancelAsk = cancel
	t.state = wire.StatePending
	s.pending++
	b.tickets[t.id] = t
	if !t.hook {
		b.addToSession(s, t)
	}
	b.notifyLocked()
	approver := b.approver
	b.wg.Add(1)
	go b.ask(ctx, approver, t, settings)
	return nil
}

// questionRefusalLocked returns why t, a question from s, cannot be asked
// now (shutting down, session closed, nobody to ask — naming the rule and
// the argument that kept it from allowing t, if one did —, too many
// pending), or nil. Called with b.mu held.
func (b *Broker) questionRefusalLocked(s *Session, t *ticket, settings prefs.Settings) *wire.Error {
	switch {
	case b.closed:
		return wire.Refuse(wire.RefuseShuttingDown, "agentgate is shutting down; nothing new is asked or run")
	case b.notTaking.Load() != nil:
		return b.notTaking.Load()
	case s.closed:
		return wire.Refuse(wire.RefuseWithdrawn, "the session is closed")
	case b.approver == nil && t.req.MatchedRule != nil:
		d := prefs.Decision{Rule: t.req.MatchedRule, Findings: t.req.Findings}
		return wire.Refuse(wire.RefuseNoApprover, d.Explain(nil)+"; a person must approve it, and nobody can be asked right now. Nothing ran")
	case b.approver == nil:
		return wire.Refuse(wire.RefuseNoApprover, b.cfg.NoApproverReason)
	case s.pending >= settings.MaxPendingPerSession:
		return wire.Refuse(wire.RefuseTooManyPending, fmt.Sprintf("this session already has %d proposals waiting for a person (the limit); wait for answers or cancel some", s.pending))
	}
	return nil
}

// ask puts t to the approver and acts on the answer (or its absence).
func (b *Broker) ask(ctx context.Context, approver Approver, t *ticket, settings prefs.Settings) {
	defer b.wg.Done()
	type result struct {
		ans Answer // the person's answer
		err error  // or why there is none
	}
	answers := make(chan result, 1)
	go func() {
		ans, err := approver.Ask(ctx, t.req.clone())
		answers <- result{ans, err}
	}()
	var r result
	select {
	case r = <-answers:
	case <-ctx.Done():
		r.err = ctx.Err()
	}
	if r.err == nil && ctx.Err() != nil {
		// The answer and the deadline (or a withdrawal) arrived together:
		// an answer after the proposal's end does not count.
		r = result{err: ctx.Err()}
	}
	t.cancelAsk()

	b.mu.Lock()
	if t.state != wire.StatePending { // withdrawn, stopped or closed meanwhile: already recorded
		b.mu.Unlock()
		return
	}
	t.session.pending--
	s := t.session
	if r.err == nil { // a person answered, so saw what the question showed
		b.protectedSeenLocked(t.req)
	}
	switch {
	case r.err == nil && r.ans.Approved:
		t.answer = r.ans
		if t.hook {
			// Answered, not yet reported: no longer pending, so a cancel or
			// "Stop everything" from now on finds nothing to withdraw (and
			// does not count the question off the session a second time).
			// The hook learns the answer from finishHook, once audited.
			t.state = stateAnswered
		} else {
			// Approved, not yet admitted: a cancel from now on marks it
			// cancelled and admit honours that.
			b.setState(t, wire.StateQueued, nil)
		}
		b.mu.Unlock()
		if testHookAnswered != nil {
			testHookAnswered(t.id)
		}
		if err := b.record(s, bound(audit.Entry{Kind: audit.KindDecision, RunID: t.id, Decision: audit.DecisionApproved, By: r.ans.By, Message: r.ans.Message,
			WithoutWriteConfinement: r.ans.WithoutWriteConfinement}, t)); err != nil {
			// An approval that cannot be recorded is not acted on: the gate
			// that cannot record refuses (Config.Audit).
			b.mu.Lock()
			if !t.cancelled {
				b.setState(t, wire.StateDenied, wire.Refuse(wire.RefuseAuditFailed, "the person approved, but agentgate cannot write its audit log, so nothing ran: "+err.Error()+"; the person must fix the log's disk or permissions"))
			}
			b.mu.Unlock()
			b.forgetHook(t)
			return
		}
		if t.hook {
			b.finishHook(t, "allow")
			return
		}
		// 5. The approval is bound to the exact command: start what was shown.
		if bindingOf(t.req.Command) != t.binding {
			b.mu.Lock()
			b.setState(t, wire.StateDenied, wire.Refuse(wire.RefuseInternal, "the approved command changed after approval; nothing ran"))
			b.mu.Unlock()
			return
		}
		b.admit(t, settings)
	case r.err == nil:
		t.answer = r.ans
		t.state = stateAnswered
		b.mu.Unlock()
		msg := "The person denied this command."
		if r.ans.Message != "" {
			msg += " Their message: " + r.ans.Message
		}
		b.conclude(t, wire.StateDenied, wire.Refuse(wire.RefuseDenied, msg),
			bound(audit.Entry{Kind: audit.KindDecision, RunID: t.id, Decision: audit.DecisionDenied, By: r.ans.By, Message: r.ans.Message}, t))
	case errors.Is(r.err, context.DeadlineExceeded):
		t.state = stateAnswered
		b.mu.Unlock()
		b.conclude(t, wire.StateExpired, wire.Refuse(wire.RefuseExpired, fmt.Sprintf("nobody answered within %v, so the proposal expired and nothing ran; propose it again when the person is available", settings.ApprovalExpiry)),
			audit.Entry{Kind: audit.KindDecision, RunID: t.id, Decision: audit.DecisionExpired})
	case errors.Is(r.err, context.Canceled): // the broker is closing
		t.state = stateAnswered
		b.mu.Unlock()
		b.conclude(t, wire.StateWithdrawn, wire.Refuse(wire.RefuseShuttingDown, "agentgate is shutting down; the proposal was withdrawn and nothing ran"),
			audit.Entry{Kind: audit.KindDecision, RunID: t.id, Decision: audit.DecisionWithdrawn, Message: "shutting down"})
	default:
		t.state = stateAnswered
		b.mu.Unlock()
		werr := wire.Refuse(wire.RefuseNoApprover, "the person could not be asked ("+r.err.Error()+"); nothing ran")
		b.conclude(t, wire.StateDenied, werr, refusalEntry(t.id, werr))
	}
}

// admit starts t now or queues it when the concurrent-run ceiling is
// reached. For a rule-allowed proposal a start failure is returned (so
// exec.propose reports it); otherwise it is visible through Wait.
func (b *Broker) admit(t *ticket, settings prefs.Settings) *wire.Error {
	b.mu.Lock()
	if t.cancelled {
		b.mu.Unlock()
		return nil
	}
	if _, known := b.tickets[t.id]; !known {
		b.tickets[t.id] = t
		b.addToSession(t.session, t)
	}
	if b.running >= settings.MaxConcurrentRuns {
		b.queue = append(b.queue, t)
		b.setState(t, wire.StateQueued, nil)
		b.mu.Unlock()
		return nil
	}
	b.running++
	t.starting = true
	b.mu.Unlock()
	return b.start(t)
}

// start runs t in the slot reserved for it (6.) and watches it to its end.
func (b *Broker) start(t *ticket) *wire.Error {
	s := t.session
	cmd := t.req.Command
	run, err := b.cfg.Executor.Start(cmd, exec.Meta{ID: t.id, Provider: s.Provider, Client: s.Client, Session: s.ID, Project: s.ProjectRoot,
		WithoutWriteConfinement: t.answer.Approved && t.answer.WithoutWriteConfinement})
	if run == nil {
		b.releaseSlot()
		werr := wire.Refuse(wire.RefuseInternal, "the executor could not take the run: "+errString(err))
		b.conclude(t, wire.StateDenied, werr, refusalEntry(t.id, werr))
		return werr
	}
	b.mu.Lock()
	t.run = run
	t.endWritten = make(chan struct{})
	t.starting = false
	cancelled := t.cancelled // cancelled while it was being started
	b.setState(t, string(run.Record().State), nil)
	b.mu.Unlock()
	if cancelled {
		run.Cancel()
	}
	if err != nil { // failed_to_start: recorded by the executor, Done already closed
		var werr *wire.Error
		var ref *exec.Refusal
		if errors.As(err, &ref) {
			werr = wire.Refuse(ref.Code, ref.Message)
		} else {
			werr = wire.Refuse(exec.CodeFailedToStart, err.Error())
		}
		b.runEnded(t)
		return werr
	}
	rec := run.Record()
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		// Audited here, off the agent's reply path (the decision before
		// the start is already durable), and always before the run's end;
		// both are synced soon, not at once (recordSoon).
		b.recordSoon(s, audit.Entry{Kind: audit.KindRunStart, RunID: t.id, PID: rec.PID, Argv: cmd.Argv, Executable: cmd.Executable, Cwd: cmd.Dir, TimeoutMS: cmd.Timeout.Milliseconds(),
			Confinement: rec.Confinement})
		<-run.Done()
		b.runEnded(t)
	}()
	return nil
}

// runEnded audits a run's end, frees its slot and starts the next queued run,
// then audits its change summary once made (run_changes).
func (b *Broker) runEnded(t *ticket) {
	rec := t.run.Record()
	e := audit.Entry{Kind: audit.KindRunEnd, RunID: t.id, State: string(rec.State), ExitCode: rec.ExitCode,
		StdoutBytes: rec.StdoutBytes, StderrBytes: rec.StderrBytes, Changes: rec.Changes, Error: rec.Error, Message: rec.CancelledBy,
		ProtectedChanged: rec.ProtectedChanged}
	if !rec.EndedAt.IsZero() && !rec.StartedAt.IsZero() {
		e.DurationMS = rec.EndedAt.Sub(rec.StartedAt).Milliseconds()
	}
	b.recordSoon(t.session, e)
	b.mu.Lock()
	if len(rec.ProtectedChanged) > 0 { // before the agent hears of the end
		b.protectedChangedLocked(rec)
	}
	b.mu.Unlock()
	close(t.endWritten) // exec.wait may now report the end (Session.Wait)
	b.mu.Lock()
	b.setState(t, string(rec.State), nil)
	if t.session.closed { // nobody can ask about it any more
		delete(b.tickets, t.id)
		b.cfg.Executor.Forget(t.id)
	}
	b.mu.Unlock()
	b.releaseSlot()
	// The change summary follows the end (nothing waits for it): audited
	// as run_changes once made.
	<-t.run.ChangesDone()
	if rec := t.run.Record(); rec.Changes != nil {
		b.recordSoon(t.session, audit.Entry{Kind: audit.KindRunChanges, RunID: t.id, Changes: rec.Changes})
	}
}

// protectedChangedLocked keeps rec's protected-file changes for the next
// question about its project (ApprovalRequest.ProtectedChanged). Called
// with b.mu held.
func (b *Broker) protectedChangedLocked(rec exec.Record) {
	line := display.Command(rec.Argv) + " (run " + rec.ID + "): " + display.Text(strings.Join(rec.ProtectedChanged, ", "))
	notes := append(b.protected[rec.ProjectRoot], line)
	if len(notes) > maxProtectedNotes {
		notes = slices.Clone(notes[len(notes)-maxProtectedNotes:])
	}
	b.protected[rec.ProjectRoot] = notes
}

// protectedSeenLocked drops the protected-change lines req showed: a
// person answered it. Lines added since stay for the next question.
// Called with b.mu held.
func (b *Broker) protectedSeenLocked(req *ApprovalRequest) {
	if len(req.ProtectedChanged) == 0 {
		return
	}
	left := slices.DeleteFunc(b.protected[req.ProjectRoot], func(line string) bool {
		return slices.Contains(req.ProtectedChanged, line)
	})
	if len(left) == 0 {
		delete(b.protected, req.ProjectRoot)
		return
	}
	b.protected[req.ProjectRoot] = left
}

// releaseSlot frees a run slot and starts the oldest queued run, if any,
// of a session still open. Called with b.mu not held.
func (b *Broker) releaseSlot() {
	b.mu.Lock()
	b.running--
	for len(b.queue) > 0 && b.running < b.cfg.Settings().MaxConcurrentRuns {
		next := b.queue[0]
		b.queue = b.queue[1:]
		if next.cancelled || next.session.closed {
			// A closed session's queued runs never start: Session.Close,
			// which collected them, cancels each as queued — even when
			// cancelling its running run freed this slot first.
			continue
		}
		b.running++
		next.starting = true
		b.mu.Unlock()
		b.start(next)
		b.mu.Lock()
	}
	b.mu.Unlock()
}

// addToSession appends t to its session's runs, forgetting the oldest
// finished ones beyond the cap. Called with b.mu held.
func (b *Broker) addToSession(s *Session, t *ticket) {
	s.runs = append(s.runs, t)
	if len(s.runs) <= b.cfg.MaxFinishedPerSession {
		return
	}
	kept := s.runs[:0]
	excess := len(s.runs) - b.cfg.MaxFinishedPerSession
	for _, old := range s.runs {
		if excess > 0 && old.final() {
			delete(b.tickets, old.id)
			b.cfg.Executor.Forget(old.id)
			excess--
			continue
		}
		kept = append(kept, old)
	}
	clear(s.runs[len(kept):])
	s.runs = kept
}

// lookup returns the session's ticket with that id, or a not_found error
// that reads the same whether the id is unknown or belongs to someone else.
func (s *Session) lookup(id string) (*ticket, *wire.Error) {
	s.b.mu.Lock()
	t, ok := s.b.tickets[id]
	s.b.mu.Unlock()
	if !ok || t.session != s || t.hook {
		return nil, wire.Refuse(wire.RefuseNotFound, fmt.Sprintf("no run %q in this session; use the run_id that exec.propose returned on this connection", id))
	}
	return t, nil
}

// record appends audit entries, with the session's provenance, in one
// write and one fsync.
func (b *Broker) record(s *Session, entries ...audit.Entry) error {
	if testHookRecord != nil {
		testHookRecord(entries)
	}
	return b.logErr(b.cfg.Audit.Append(withProvenance(s, entries)...))
}

// testHookRecord, when set by a test, runs before record writes entries.
var testHookRecord func(entries []audit.Entry)

// recordSoon appends audit entries like record, with their fsync deferred
// (audit.Log.AppendSoon: within audit.SyncDelay, or with the next record's
// fsync). It is for a run's start and end, which are audited off the
// agent's path and after the decision that let the run start was made
// durable; a back-to-back proposal then pays one fsync, not three.
func (b *Broker) recordSoon(s *Session, entries ...audit.Entry) error {
	return b.logErr(b.cfg.Audit.AppendSoon(withProvenance(s, entries)...))
}

// withProvenance stamps entries with the session's provenance.
func withProvenance(s *Session, entries []audit.Entry) []audit.Entry {
	if s != nil {
		for i := range entries {
			e := &entries[i]
			e.Session, e.Provider, e.Client, e.PeerPID, e.PeerExe, e.ProjectRoot = s.ID, s.Provider, s.Client, s.Peer.PID, s.Peer.Exe, s.ProjectRoot
		}
	}
	return entries
}

// logErr reports an audit log error on standard error and returns it.
func (b *Broker) logErr(err error) error {
	if err != nil {
		fmt.Fprintf(os.Stderr, "agentgate: audit log: %v\n", err)
	}
	return err
}

// bound adds to a decision entry the exact command it is bound to (SPEC §1
// step 5): resolved executable, working directory, timeout and stdin hash;
// a hook question's command line instead.
func bound(e audit.Entry, t *ticket) audit.Entry {
	if t.hook {
		e.CommandLine, e.ThroughAgentShell = t.req.CommandLine, true
		return e
	}
	cmd := t.req.Command
	e.Argv, e.Executable, e.Cwd, e.TimeoutMS = cmd.Argv, cmd.Executable, cmd.Dir, cmd.Timeout.Milliseconds()
	e.StdinBytes, e.StdinSHA256 = len(cmd.Stdin), cmd.StdinSHA256
	return e
}

// ruleRef converts a prefs rule for the protocol.
func ruleRef(r *prefs.Rule) *wire.RuleRef {
	return &wire.RuleRef{Text: prefs.FormatList(r.Tokens), Scope: string(r.Scope), File: r.File, Line: r.Line}
}

// auditRule converts a prefs rule for the audit log.
func auditRule(r *prefs.Rule) *audit.Rule {
	return &audit.Rule{Text: prefs.FormatList(r.Tokens), Scope: string(r.Scope), Provider: r.Provider, File: r.File, Line: r.Line}
}

// randomHex returns n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// errString returns err's text or "unknown error".
func errString(err error) string {
	if err == nil {
		return "unknown error"
	}
	return err.Error()
}

// forgetHook removes a decided hook question (not a run) from the broker.
func (b *Broker) forgetHook(t *ticket) {
	if !t.hook {
		return
	}
	b.mu.Lock()
	delete(b.tickets, t.id)
	b.mu.Unlock()
}

// finishHook records an allowed hook question.
func (b *Broker) finishHook(t *ticket, decision string) {
	b.mu.Lock()
	b.setState(t, decision, nil)
	delete(b.tickets, t.id)
	b.mu.Unlock()
}
