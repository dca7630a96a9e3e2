package agentbridge

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/agentgate/agentgate/agentbridge/audit"
	"github.com/agentgate/agentgate/agentbridge/wire"
	"github.com/agentgate/agentgate/exec"
)

// Pending returns copies of the questions waiting for a person, oldest
// first (for the tray menu and the card's "2 of 5").
func (b *Broker) Pending() []*ApprovalRequest {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []*ApprovalRequest
	for _, t := range b.tickets {
		if t.state == wire.StatePending {
			out = append(out, t.req.clone())
		}
	}
	slices.SortFunc(out, func(x, y *ApprovalRequest) int { return x.Proposed.Compare(y.Proposed) })
	return out
}

// Subscribe returns a channel that receives a value after any change of a
// proposal's or run's state (coalesced: one buffered value stands for any
// number of changes), and a function to stop. The broker never blocks on
// it; the subscriber re-reads Pending and the run records.
func (b *Broker) Subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	b.mu.Lock()
	id := b.nextSub
	b.nextSub++
	b.subs[id] = ch
	b.mu.Unlock()
	return ch, func() {
		b.mu.Lock()
		delete(b.subs, id)
		b.mu.Unlock()
	}
}

// notifyLocked wakes every subscriber without blocking. Called with b.mu held.
func (b *Broker) notifyLocked() {
	for _, ch := range b.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// ErrUnknownRun is returned by CancelRun for an id no host knows.
var ErrUnknownRun = errors.New("no such run")

// CancelRun is the person's cancel, from the UI, of any proposal or run: a
// pending proposal is denied (the agent gets denied, "cancelled by the
// person"), a queued one is dropped, a running one is ended. A run this
// broker does not know — hosted by `agentgate run` in a terminal — is asked
// to cancel through its run record (exec.RequestCancel).
func (b *Broker) CancelRun(id string) error {
	b.mu.Lock()
	t, ok := b.tickets[id]
	b.mu.Unlock()
	if ok {
		b.cancelTicket(t, wire.StateDenied, wire.Refuse(wire.RefuseDenied, "The person cancelled this proposal; nothing ran."), audit.DecisionDenied, "cancelled by the person")
		return nil
	}
	if run, ok := b.cfg.Executor.Get(id); ok {
		run.Cancel()
		return nil
	}
	if b.cfg.StateDir == "" {
		return fmt.Errorf("cancel run %s: %w", id, ErrUnknownRun)
	}
	if err := exec.RequestCancel(b.cfg.StateDir, id); err != nil {
		return fmt.Errorf("cancel run %s: %w", id, err)
	}
	return nil
}

// StopEverything is the person's "Stop everything": every pending question
// is refused (code stopped), every queued run dropped and every running run
// of this broker's executor cancelled. It returns at once; runs end within
// their grace period.
func (b *Broker) StopEverything() {
	b.mu.Lock()
	var all []*ticket
	for _, t := range b.tickets {
		all = append(all, t)
	}
	b.mu.Unlock()
	for _, t := range all {
		b.cancelTicket(t, wire.StateDenied, wire.Refuse(wire.RefuseStopped, "The person stopped everything agentgate was asked to run; nothing more runs from this proposal."), audit.DecisionStopped, "stop everything")
	}
	b.cfg.Executor.CancelAll()
}

// Close shuts the broker down: new sessions and questions are refused with
// shutting_down and every pending question is withdrawn. Runs are left to
// the executor (the app cancels them on quit, after asking the person). It
// waits for the broker's goroutines, so call it after the runs ended or were
// cancelled.
func (b *Broker) Close() {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	b.closed = true
	b.mu.Unlock()
	b.stop()
	b.wg.Wait()
}

// bindingOf is the digest an approval is bound to: argv, executable,
// working directory, stdin hash and timeout (SPEC §1 step 5), and the
// identities of the directory and the program as validated (the executor
// checks them again at start).
func bindingOf(cmd exec.Command) string {
	raw, _ := json.Marshal([]any{cmd.Argv, cmd.Executable, cmd.Dir, cmd.StdinSHA256, cmd.Timeout.Milliseconds(),
		cmd.RootID, cmd.DirID, cmd.ProgramID, cmd.ProgramSHA256})
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}
