package agentbridge

import (
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/agentgate/agentgate/agentbridge/audit"
)

// RefusalWindow is how long after a refusal's entry further refusals with
// the same code from the same agent are gathered into one entry.
const RefusalWindow = time.Second

// refusals coalesces repeated refusals so that an agent cannot flood the
// audit log (SPEC §10, issue #13): the first refusal of a burst is audited
// alone, at once, with its proposal; the refusals that follow within
// RefusalWindow — same agent (its process, else its session) and same code
// — wait until the window closes and are audited as one entry with a count
// (audit.Entry.Count, Since) and the last proposal's argv digest, written
// and fsynced before any of them is answered. A flood thus costs the log
// about one entry a second per agent and code, and slows the flooding agent
// to one answer a window.
type refusals struct {
	// mu guards bursts.
	mu sync.Mutex
	// bursts are the open bursts by key (agent and code).
	bursts map[string]*refusalBurst
}

// refusalBurst is one agent's run of refusals with one code.
type refusalBurst struct {
	// last is when the burst's last entry was written (or started being).
	last time.Time
	// open gathers the refusals waiting for the next entry; nil when none.
	open *refusalBatch
}

// refusalBatch is the refusals one coalesced entry will stand for.
type refusalBatch struct {
	// count is how many.
	count int
	// since is when the first of them arrived.
	since time.Time
	// latest are the last one's proposal and refusal entries.
	latest [2]audit.Entry
	// done is closed once the entry is written (or failed).
	done chan struct{}
	// err is the write's error.
	err error
}

// refusalKey identifies the agent and the code a refusal is coalesced by:
// the peer process when the OS named it, else the session.
func refusalKey(s *Session, code string) string {
	if s.Peer.PID > 0 {
		return "pid " + strconv.Itoa(s.Peer.PID) + " " + s.Peer.Exe + "\x00" + code
	}
	return "session " + s.ID + "\x00" + code
}

// recordRefusal audits a refused proposal (its proposal and refusal
// entries) as refusals describes, and returns once that is durable — the
// caller answers the agent only then.
func (b *Broker) recordRefusal(s *Session, proposal, refusal audit.Entry) error {
	key := refusalKey(s, refusal.Code)
	now := time.Now()
	r := &b.refusals
	r.mu.Lock()
	if r.bursts == nil {
		r.bursts = make(map[string]*refusalBurst)
	}
	burst := r.bursts[key]
	if burst == nil || (burst.open == nil && now.Sub(burst.last) >= RefusalWindow) {
		// The first of a burst: audited alone, now.
		r.bursts[key] = &refusalBurst{last: now}
		r.pruneLocked(now)
		r.mu.Unlock()
		return b.record(s, proposal, refusal)
	}
	batch := burst.open
	if batch == nil {
		batch = &refusalBatch{since: now, done: make(chan struct{})}
		burst.open = batch
		time.AfterFunc(burst.last.Add(RefusalWindow).Sub(now), func() { b.flushRefusals(s, key) })
	}
	batch.count++
	batch.latest = [2]audit.Entry{proposal, refusal}
	r.mu.Unlock()
	<-batch.done
	return batch.err
}

// flushRefusals writes the open batch of key as one entry and answers its
// waiters.
func (b *Broker) flushRefusals(s *Session, key string) {
	r := &b.refusals
	r.mu.Lock()
	burst := r.bursts[key]
	batch := burst.open
	burst.open, burst.last = nil, time.Now()
	r.mu.Unlock()
	proposal, refusal := batch.latest[0], batch.latest[1]
	e := refusal
	e.Count, e.Since = batch.count, batch.since
	e.ArgvSHA256, e.ArgvBytes, e.ArgvCount = audit.ArgvDigest(proposal.Argv), audit.ArgvSize(proposal.Argv), len(proposal.Argv)
	e.Cwd = proposal.Cwd
	e.Message = fmt.Sprintf("%d more proposals of this agent were refused with %s since %s (coalesced; the last one's argv digest is argv_sha256): %s",
		batch.count, refusal.Code, batch.since.UTC().Format(time.RFC3339Nano), refusal.Message)
	batch.err = b.record(s, e)
	close(batch.done)
}

// pruneLocked forgets bursts whose window has long closed. Called with
// r.mu held.
func (r *refusals) pruneLocked(now time.Time) {
	if len(r.bursts) < 256 {
		return
	}
	for k, burst := range r.bursts {
		if burst.open == nil && now.Sub(burst.last) > RefusalWindow {
			delete(r.bursts, k)
		}
	}
}
