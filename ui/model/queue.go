package model

import (
	"context"
	"errors"
	"sync"

	"github.com/agentgate/agentgate/agentbridge"
)

// Queue holds the proposals waiting for the person and is the desktop app's
// agentbridge.Approver. The approval card pages through it ("2 of 5"); the
// tray menu lists it. It is safe for concurrent use: the broker calls Ask
// from its own goroutines, the UI answers from the Fyne thread.
//
// Listeners (OnChange, OnArrive, OnExpire) are called without the queue's
// lock held, from whichever goroutine made the change; the Fyne shell wraps
// them in fyne.Do.
type Queue struct {
	// mu guards items and current.
	mu sync.Mutex
	// items are the pending proposals, oldest first.
	items []*pendingItem
	// current is the index of the item the card shows; 0 when empty.
	current int

	// OnChange is called after every change of items or current (nil: none).
	OnChange func()
	// OnArrive is called after a proposal was queued (nil: none).
	OnArrive func(req *agentbridge.ApprovalRequest)
	// OnExpire is called when a proposal expired unanswered (nil: none).
	OnExpire func(req *agentbridge.ApprovalRequest)
}

// pendingItem is one waiting proposal and the channel its answer goes to.
type pendingItem struct {
	// req is the broker's copy of the request; never modified.
	req *agentbridge.ApprovalRequest
	// answer receives the person's answer; buffered (1), written once.
	answer chan agentbridge.Answer
}

// ErrAnswered is returned by Answer when the proposal is no longer pending:
// answered already, withdrawn by the agent, or expired.
var ErrAnswered = errors.New("the proposal is no longer pending: it was answered, withdrawn or expired")

// Ask queues req, waits for the person's answer and returns it. When ctx
// ends first (the proposal expired or was withdrawn) the proposal leaves
// the queue, OnExpire is called if ctx's error is context.DeadlineExceeded,
// and ctx's error is returned. Ask implements agentbridge.Approver.
func (q *Queue) Ask(ctx context.Context, req *agentbridge.ApprovalRequest) (agentbridge.Answer, error) {
	it := &pendingItem{req: req, answer: make(chan agentbridge.Answer, 1)}
	q.mu.Lock()
	q.items = append(q.items, it)
	q.mu.Unlock()
	q.changed()
	if q.OnArrive != nil {
		q.OnArrive(req)
	}
	select {
	case a := <-it.answer:
		return a, nil
	case <-ctx.Done():
		if q.remove(it) {
			q.changed()
		}
		// An answer given in the same instant wins over the expiry.
		select {
		case a := <-it.answer:
			return a, nil
		default:
		}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) && q.OnExpire != nil {
			q.OnExpire(req)
		}
		return agentbridge.Answer{}, ctx.Err()
	}
}

// remove takes it out of the queue and reports whether it was there. The
// current index keeps pointing at the same item when an earlier one leaves
// and at the next one (or the last) when the current one leaves.
func (q *Queue) remove(it *pendingItem) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, x := range q.items {
		if x != it {
			continue
		}
		q.items = append(q.items[:i], q.items[i+1:]...)
		if i < q.current {
			q.current--
		}
		if q.current >= len(q.items) {
			q.current = max(len(q.items)-1, 0)
		}
		return true
	}
	return false
}

// changed calls OnChange.
func (q *Queue) changed() {
	if q.OnChange != nil {
		q.OnChange()
	}
}

// Answer delivers the person's answer to the pending proposal id and takes
// it out of the queue. It returns ErrAnswered when id is not pending.
func (q *Queue) Answer(id string, a agentbridge.Answer) error {
	q.mu.Lock()
	var found *pendingItem
	for _, it := range q.items {
		if it.req.ID == id {
			found = it
			break
		}
	}
	q.mu.Unlock()
	if found == nil || !q.remove(found) {
		return ErrAnswered
	}
	found.answer <- a
	q.changed()
	return nil
}

// DenyAll denies every pending proposal with message (for "Stop
// everything" and Quit) and returns how many it denied.
func (q *Queue) DenyAll(message string) int {
	q.mu.Lock()
	items := q.items
	q.items, q.current = nil, 0
	q.mu.Unlock()
	for _, it := range items {
		it.answer <- agentbridge.Answer{Approved: false, Message: message, By: "card"}
	}
	if len(items) > 0 {
		q.changed()
	}
	return len(items)
}

// Len returns how many proposals wait.
func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}

// Current returns the proposal the card shows, its 1-based position and the
// number waiting; nil, 0, 0 when none waits.
func (q *Queue) Current() (req *agentbridge.ApprovalRequest, pos, total int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.items) == 0 {
		return nil, 0, 0
	}
	return q.items[q.current].req, q.current + 1, len(q.items)
}

// Pending returns the waiting proposals, oldest first.
func (q *Queue) Pending() []*agentbridge.ApprovalRequest {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]*agentbridge.ApprovalRequest, len(q.items))
	for i, it := range q.items {
		out[i] = it.req
	}
	return out
}

// Step moves the card by delta positions (-1: previous, +1: next), clamped
// to the queue; it reports whether the current proposal changed.
func (q *Queue) Step(delta int) bool {
	q.mu.Lock()
	next := min(max(q.current+delta, 0), max(len(q.items)-1, 0))
	moved := next != q.current
	q.current = next
	q.mu.Unlock()
	if moved {
		q.changed()
	}
	return moved
}

// Select makes proposal id the current one (from the tray menu); it reports
// whether id is pending.
func (q *Queue) Select(id string) bool {
	q.mu.Lock()
	found := false
	for i, it := range q.items {
		if it.req.ID == id {
			q.current, found = i, true
			break
		}
	}
	q.mu.Unlock()
	if found {
		q.changed()
	}
	return found
}
