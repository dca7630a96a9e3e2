package agentbridge

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/agentgate/agentgate/agentbridge/audit"
	"github.com/agentgate/agentgate/agentbridge/wire"
	"github.com/agentgate/agentgate/exec"

	"github.com/agentgate/agentgate/exec/runinfo"
	"github.com/agentgate/agentgate/exec/shellword"
	"github.com/agentgate/agentgate/prefs"
)

// Bounds of the long polls.
const (
	// DefaultWait is exec.wait's wait when wait_ms is absent.
	DefaultWait = 30 * time.Second
	// MaxWait is the longest wait_ms accepted (longer values are clamped).
	MaxWait = 300 * time.Second
	// cancelSettle is how long exec.cancel waits for a run's tree to end.
	cancelSettle = 10 * time.Second
	// outputPoll is how often exec.output with wait_ms looks for new bytes.
	outputPoll = 25 * time.Millisecond
	// minChunk is the smallest max_bytes honoured, so that a UTF-8
	// character always fits.
	minChunk = 16
)

// waitBound turns an optional wait_ms into a duration (absent: def).
func waitBound(ms *int64, def time.Duration) time.Duration {
	if ms == nil {
		return def
	}
	d := time.Duration(*ms) * time.Millisecond
	switch {
	case d < 0:
		return 0
	case d > MaxWait:
		return MaxWait
	}
	return d
}

// chunkBound clamps max_bytes to [minChunk, wire.MaxChunk] (0: MaxChunk).
func chunkBound(n int) int {
	switch {
	case n <= 0 || n > wire.MaxChunk:
		return wire.MaxChunk
	case n < minChunk:
		return minChunk
	}
	return n
}

// Wait waits until the run reaches a final state or the wait bound passes
// (ctx ending too, e.g. the connection closing), then returns its state and
// stdout from the cursor. A proposal that ended without running — denied,
// expired, withdrawn, refused — returns that refusal as the error, every
// time it is asked.
func (s *Session) Wait(ctx context.Context, p wire.WaitParams) (wire.WaitResult, *wire.Error) {
	t, werr := s.lookup(p.RunID)
	if werr != nil {
		return wire.WaitResult{}, werr
	}
	enc, werr := wire.CheckEncoding(p.Encoding)
	if werr != nil {
		return wire.WaitResult{}, werr
	}
	timer := time.NewTimer(waitBound(p.WaitMS, DefaultWait))
	defer timer.Stop()
	for {
		s.b.mu.Lock()
		run, ended, state, refusal, changed := t.run, t.endWritten, t.currentState(), t.refusal, t.changed
		s.b.mu.Unlock()
		if refusal != nil {
			return wire.WaitResult{}, refusal
		}
		if run != nil {
			// The end is reported once the audit log holds it (written at
			// once after the run's end; fsynced within audit.SyncDelay).
			select {
			case <-ended:
			case <-timer.C:
			case <-ctx.Done():
			}
			return waitResult(run, isClosed(ended), p.Cursor, chunkBound(p.MaxBytes), enc)
		}
		select {
		case <-changed:
			continue
		case <-timer.C:
		case <-ctx.Done():
		}
		return wire.WaitResult{State: state, Stdout: wire.Output{Encoding: enc, Cursor: p.Cursor}}, nil
	}
}

// waitResult describes a run and its stdout from cursor.
func waitResult(run *exec.Run, endAudited bool, cursor int64, max int, enc string) (wire.WaitResult, *wire.Error) {
	rec := run.Record()
	out, werr := readOutput(run, exec.Stdout, cursor, max, enc)
	if werr != nil {
		return wire.WaitResult{}, werr
	}
	if !endAudited && rec.State.Final() {
		// Ended, but the end is not in the audit log yet: still running
		// for the agent, which asks again.
		rec.State, rec.ExitCode, rec.Error, rec.Changes, rec.ChangesPending = exec.StateRunning, nil, "", nil, false
		out.EOF = false
	}
	res := wire.WaitResult{State: string(rec.State), ExitCode: rec.ExitCode, Stdout: out, StderrBytes: rec.StderrBytes, Error: rec.Error, ChangesPending: rec.ChangesPending}
	if rec.Changes != nil {
		res.Changes = rec.Changes
	}
	return res, nil
}

// readOutput reads a chunk and encodes it, holding back a UTF-8 character
// cut by the chunk's end (see wire.EncodeChunk).
func readOutput(run *exec.Run, stream exec.Stream, cursor int64, max int, enc string) (wire.Output, *wire.Error) {
	if cursor < 0 {
		return wire.Output{}, wire.NewError(wire.CodeInvalidParams, "invalid params: cursor must be 0 or a cursor returned earlier")
	}
	chunk, err := run.Read(stream, cursor, max)
	if err != nil {
		return wire.Output{}, wire.Refuse(wire.RefuseInternal, fmt.Sprintf("cannot read the run's %s: %v", stream, err))
	}
	text, consumed := wire.EncodeChunk(chunk.Data, enc, chunk.EOF)
	held := int64(len(chunk.Data) - consumed)
	return wire.Output{Data: text, Encoding: enc, Cursor: chunk.Next - held, Dropped: chunk.Dropped, EOF: chunk.EOF && held == 0}, nil
}

// Output reads stdout or stderr from a cursor. With wait_ms > 0 it waits (at
// most MaxWait) until there are bytes past the cursor or the stream ended.
// A proposal not yet started returns no data; one that ended without
// running returns its refusal.
func (s *Session) Output(ctx context.Context, p wire.OutputParams) (wire.Output, *wire.Error) {
	t, werr := s.lookup(p.RunID)
	if werr != nil {
		return wire.Output{}, werr
	}
	stream := exec.Stream(p.Stream)
	if stream != exec.Stdout && stream != exec.Stderr {
		return wire.Output{}, wire.NewError(wire.CodeInvalidParams, fmt.Sprintf("invalid params: stream %q must be \"stdout\" or \"stderr\"", p.Stream))
	}
	enc, werr := wire.CheckEncoding(p.Encoding)
	if werr != nil {
		return wire.Output{}, werr
	}
	wait := waitBound(&p.WaitMS, 0)
	deadline := time.Now().Add(wait)
	for {
		s.b.mu.Lock()
		run, refusal, changed := t.run, t.refusal, t.changed
		s.b.mu.Unlock()
		if refusal != nil {
			return wire.Output{}, refusal
		}
		remaining := time.Until(deadline)
		if run == nil {
			if remaining <= 0 {
				return wire.Output{Encoding: enc, Cursor: p.Cursor}, nil
			}
			select {
			case <-changed:
			case <-time.After(remaining):
			case <-ctx.Done():
				return wire.Output{Encoding: enc, Cursor: p.Cursor}, nil
			}
			continue
		}
		out, werr := readOutput(run, stream, p.Cursor, chunkBound(p.MaxBytes), enc)
		if werr != nil || out.Data != "" || out.EOF || out.Dropped || remaining <= 0 {
			return out, werr
		}
		select {
		case <-time.After(min(outputPoll, remaining)):
		case <-run.Done():
			return readOutput(run, stream, p.Cursor, chunkBound(p.MaxBytes), enc)
		case <-ctx.Done():
			return out, nil
		}
	}
}

// Cancel withdraws a pending proposal (state withdrawn), removes a queued
// one (cancelled), or ends a running one's whole process tree (cancelled;
// it returns once the tree is gone or after about 10 s, with the state at
// that moment). A run that already ended is left alone and its final state
// returned.
func (s *Session) Cancel(ctx context.Context, id string) (wire.CancelResult, *wire.Error) {
	t, werr := s.lookup(id)
	if werr != nil {
		return wire.CancelResult{}, werr
	}
	run := s.b.cancelTicket(t, wire.StateWithdrawn, wire.Refuse(wire.RefuseWithdrawn, "the proposal was withdrawn before anyone answered; nothing ran"), audit.DecisionWithdrawn, "withdrawn by the agent")
	if run != nil {
		s.b.mu.Lock()
		ended := t.endWritten
		s.b.mu.Unlock()
		settle, cancel := context.WithTimeout(ctx, cancelSettle)
		defer cancel()
		select {
		case <-ended: // the tree is gone and its end audited
		case <-settle.Done():
		}
	}
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	return wire.CancelResult{State: t.currentState()}, nil
}

// cancelTicket ends t however far it got: a pending question is withdrawn
// with pendingState and refusal (audited as decision), a queued run is
// dropped (state cancelled), a running one is cancelled with why as the
// reason its record keeps (exec.Run.CancelBecause) — its run is returned so
// the caller may wait for it. The outcome is audited before the agent can
// see it (conclude).
func (b *Broker) cancelTicket(t *ticket, pendingState string, refusal *wire.Error, decision, why string) *exec.Run {
	b.mu.Lock()
	switch {
	case t.run != nil:
		run := t.run
		b.mu.Unlock()
		run.CancelBecause(why)
		return run
	case t.starting: // start cancels the run as soon as it exists
		t.cancelled = true
		b.mu.Unlock()
	case t.state == wire.StatePending:
		t.session.pending--
		t.state = stateAnswered
		t.cancelAsk()
		b.mu.Unlock()
		b.conclude(t, pendingState, refusal, audit.Entry{Kind: audit.KindDecision, RunID: t.id, Decision: decision, Message: why})
	case t.state == wire.StateQueued && !t.cancelled:
		t.cancelled = true // admit and releaseSlot skip it from now on
		b.mu.Unlock()
		b.conclude(t, string(exec.StateCancelled), nil,
			audit.Entry{Kind: audit.KindRunEnd, RunID: t.id, State: string(exec.StateCancelled), Message: why, Error: "cancelled while queued (" + why + "); it never started"})
	default:
		b.mu.Unlock()
	}
	return nil
}

// List returns the session's proposals and runs, oldest first.
func (s *Session) List() wire.ListResult {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	res := wire.ListResult{Runs: make([]wire.RunInfo, 0, len(s.runs))}
	for _, t := range s.runs {
		info := wire.RunInfo{RunID: t.id, State: t.currentState(), Argv: t.req.Command.Argv, Cwd: t.req.Command.DirRel, ProposedAt: t.req.Proposed.UTC()}
		if t.run != nil {
			info.ExitCode = t.run.Record().ExitCode
		}
		res.Runs = append(res.Runs, info)
	}
	return res
}

// HookAsk asks the person about a command the agent's own shell will run
// (agentgate runs nothing). It blocks until the person answers, the question
// expires (error expired) or ctx ends (the question is withdrawn). The
// pending cap and expiry are those of proposals. With no approver it is
// refused with no_approver, so the hook hands the decision back to the
// agent's own prompt.
func (s *Session) HookAsk(ctx context.Context, p wire.HookAskParams) (wire.HookAskResult, *wire.Error) {
	b := s.b
	settings := b.cfg.Settings()
	id := "hook-" + runinfo.NewID()
	if p.CommandLine == "" {
		return wire.HookAskResult{}, wire.NewError(wire.CodeInvalidParams, "invalid params: command_line is empty")
	}
	if err := b.record(s, audit.Entry{Kind: audit.KindProposal, RunID: id, CommandLine: p.CommandLine, ThroughAgentShell: true, Cwd: p.Cwd, Reason: p.Reason}); err != nil {
		return wire.HookAskResult{}, wire.Refuse(wire.RefuseAuditFailed, "agentgate cannot write its audit log, so it approves nothing: "+err.Error())
	}
	req := &ApprovalRequest{ID: id, Session: s.ID, Provider: s.Provider, Client: s.Client, PeerPID: s.Peer.PID, PeerExe: s.Peer.Exe,
		ProjectRoot: s.ProjectRoot, ThroughAgentShell: true, CommandLine: p.CommandLine, Cwd: p.Cwd, AgentTool: p.AgentTool,
		Reason: p.Reason, Proposed: time.Now()}
	// What the argument guard finds in the line's literal words is shown
	// with the question, as for a proposal.
	if argv, err := shellword.AgentCommand(p.CommandLine); err == nil && b.cfg.Rules != nil {
		dir := p.Cwd
		if !filepath.IsAbs(dir) {
			dir = ""
		}
		d := b.cfg.Rules.Decide(prefs.Query{Argv: argv, Provider: s.Provider, ProjectRoot: s.ProjectRoot, Dir: dir})
		req.Findings, req.MatchedRule = d.Findings, d.Rule
	}
	t := &ticket{id: id, session: s, req: req, hook: true, changed: make(chan struct{})}
	b.mu.Lock()
	changed := t.changed
	b.mu.Unlock()
	if werr := b.enqueueQuestion(s, t, settings); werr != nil {
		return wire.HookAskResult{}, b.refuse(s, id, werr)
	}
	for {
		select {
		case <-changed:
		case <-ctx.Done():
			b.cancelTicket(t, wire.StateWithdrawn, wire.Refuse(wire.RefuseWithdrawn, "the question was withdrawn"), audit.DecisionWithdrawn, "the hook's connection closed")
			return wire.HookAskResult{}, wire.Refuse(wire.RefuseWithdrawn, "the question was withdrawn")
		}
		b.mu.Lock()
		state, refusal, answer := t.state, t.refusal, t.answer
		changed = t.changed
		b.mu.Unlock()
		switch {
		case state == "allow":
			return wire.HookAskResult{Decision: "allow", Message: answer.Message}, nil
		case state == wire.StateDenied && refusal != nil && refusal.Data.Code == wire.RefuseDenied:
			return wire.HookAskResult{Decision: "deny", Message: answer.Message}, nil
		case refusal != nil:
			return wire.HookAskResult{}, refusal
		}
	}
}

// Close ends the session when its connection closes — the agent hung up
// (SPEC §10: a session's runs end with the session): its pending proposals
// are withdrawn, its queued runs dropped and its running runs cancelled,
// whole process tree, each audited with the reason "the agent's
// connection closed", which the run's record keeps for the Processes
// window (exec.Record.CancelledBy). Close returns once every outcome is
// recorded and the cancels are issued, without waiting for the trees to
// end (they end within the grace period). Finished runs are forgotten
// from memory (their records stay on disk).
func (s *Session) Close() {
	s.b.mu.Lock()
	if s.closed {
		s.b.mu.Unlock()
		return
	}
	s.closed = true
	var mine []*ticket
	for _, t := range s.b.tickets {
		if t.session == s && !t.final() {
			mine = append(mine, t)
		}
	}
	s.b.mu.Unlock()
	for _, t := range mine {
		s.b.cancelTicket(t, wire.StateWithdrawn, wire.Refuse(wire.RefuseWithdrawn, "the connection closed; the proposal was withdrawn and nothing ran"), audit.DecisionWithdrawn, HangUpReason)
	}
	s.b.mu.Lock()
	for _, t := range s.runs {
		if t.final() {
			delete(s.b.tickets, t.id)
			s.b.cfg.Executor.Forget(t.id) // its record stays on disk for the Processes window
		}
	}
	s.b.mu.Unlock()
}

// busy reports whether the session has a question waiting for a person or
// a run not yet ended, so that its idle connection is kept open.
func (s *Session) busy() bool {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	if s.pending > 0 {
		return true
	}
	for _, t := range s.runs {
		if !t.final() {
			return true
		}
	}
	return false
}

// HangUpReason is why a session's proposals and runs ended when its
// connection closed: the audit entries' message and the cancelled runs'
// exec.Record.CancelledBy.
const HangUpReason = "the agent's connection closed"
