// Package approvertest provides a scripted agentbridge.Approver for tests:
// it answers from a script, records every request it was shown, and can
// hold a request until the test answers it or the broker withdraws it.
package approvertest

import (
	"context"
	"sync"
	"time"

	"github.com/agentgate/agentgate/agentbridge"
)

// Step is one scripted answer.
type Step struct {
	// Approve is the answer when neither Hold nor Err is set.
	Approve bool
	// Message is passed to the agent.
	Message string
	// Delay waits this long before answering (ctx ending first wins).
	Delay time.Duration
	// Hold answers only when the test calls Fake.Answer, or returns ctx's
	// error when the request is withdrawn or expires first.
	Hold bool
	// Err, when set, is returned instead of an answer (an approver fault).
	Err error
}

// Approve is a step that approves at once.
var Approve = Step{Approve: true}

// Hold is a step that waits for Fake.Answer or the request's end.
var Hold = Step{Hold: true}

// Deny returns a step that denies at once with message.
func Deny(message string) Step { return Step{Message: message} }

// Outcome is what became of one request.
type Outcome struct {
	// Request is the request as the approver got it.
	Request *agentbridge.ApprovalRequest
	// Answer is the answer given (zero when Err is set).
	Answer agentbridge.Answer
	// Err is the error returned: ctx's error when withdrawn/expired.
	Err error
}

// Fake is the scripted approver. Steps are used in order, one per request;
// when they run out, Default is used.
type Fake struct {
	// Default answers requests beyond the script; the zero value denies
	// with the message "no scripted answer".
	Default Step

	// mu guards the fields below.
	mu sync.Mutex
	// script are the remaining steps.
	script []Step
	// asked records requests in arrival order.
	asked []*agentbridge.ApprovalRequest
	// outcomes records what became of each request, in completion order.
	outcomes []Outcome
	// held maps a held request's id to the channel its answer arrives on.
	held map[string]chan agentbridge.Answer
	// arrived receives every request as it arrives (buffered).
	arrived chan *agentbridge.ApprovalRequest
	// ended receives every outcome as it happens (buffered).
	ended chan Outcome
}

// New returns a fake answering with steps in order.
func New(steps ...Step) *Fake {
	return &Fake{script: steps, held: make(map[string]chan agentbridge.Answer),
		arrived: make(chan *agentbridge.ApprovalRequest, 4096), ended: make(chan Outcome, 4096)}
}

// Ask implements agentbridge.Approver.
func (f *Fake) Ask(ctx context.Context, req *agentbridge.ApprovalRequest) (agentbridge.Answer, error) {
	f.mu.Lock()
	step := f.Default
	if step == (Step{}) {
		step = Step{Message: "no scripted answer"}
	}
	if len(f.script) > 0 {
		step, f.script = f.script[0], f.script[1:]
	}
	f.asked = append(f.asked, req)
	var answers chan agentbridge.Answer
	if step.Hold {
		answers = make(chan agentbridge.Answer, 1)
		f.held[req.ID] = answers
	}
	f.mu.Unlock()
	f.arrived <- req

	ans, err := f.answer(ctx, step, answers)
	f.mu.Lock()
	delete(f.held, req.ID)
	out := Outcome{Request: req, Answer: ans, Err: err}
	f.outcomes = append(f.outcomes, out)
	f.mu.Unlock()
	f.ended <- out
	return ans, err
}

// answer produces the step's answer.
func (f *Fake) answer(ctx context.Context, step Step, held chan agentbridge.Answer) (agentbridge.Answer, error) {
	if step.Delay > 0 {
		select {
		case <-time.After(step.Delay):
		case <-ctx.Done():
			return agentbridge.Answer{}, ctx.Err()
		}
	}
	if step.Hold {
		select {
		case ans := <-held:
			return ans, nil
		case <-ctx.Done():
			return agentbridge.Answer{}, ctx.Err()
		}
	}
	if step.Err != nil {
		return agentbridge.Answer{}, step.Err
	}
	return agentbridge.Answer{Approved: step.Approve, Message: step.Message, By: "script"}, nil
}

// Answer answers a held request; it reports false when no request with
// that id is being held.
func (f *Fake) Answer(id string, ans agentbridge.Answer) bool {
	f.mu.Lock()
	ch, ok := f.held[id]
	delete(f.held, id)
	f.mu.Unlock()
	if ok {
		ch <- ans
	}
	return ok
}

// Asked returns the requests shown so far, in arrival order.
func (f *Fake) Asked() []*agentbridge.ApprovalRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*agentbridge.ApprovalRequest(nil), f.asked...)
}

// Outcomes returns what became of the finished requests, in order.
func (f *Fake) Outcomes() []Outcome {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Outcome(nil), f.outcomes...)
}

// NextRequest returns the next request to arrive, waiting up to timeout; nil
// when none arrived in time.
func (f *Fake) NextRequest(timeout time.Duration) *agentbridge.ApprovalRequest {
	select {
	case r := <-f.arrived:
		return r
	case <-time.After(timeout):
		return nil
	}
}

// NextOutcome returns the next finished request, waiting up to timeout; ok
// is false when none finished in time.
func (f *Fake) NextOutcome(timeout time.Duration) (Outcome, bool) {
	select {
	case o := <-f.ended:
		return o, true
	case <-time.After(timeout):
		return Outcome{}, false
	}
}
