package exec

import (
	"sync"
)

// persister writes run records durably (writeRecord: temp file, fsync,
// rename, directory fsync) on its own goroutine, so that the two fsyncs of
// each state change stay off the path between a proposal and its exit:
// Start and the end of a run only mark the run dirty. Writes of one run are
// coalesced: the newest state of a run is what gets written, and a run's
// record on disk only ever moves forward (running → final).
//
// The price is a short window in which the disk lags memory: a host that
// dies in it leaves the previous record (no record, or `running`, which the
// next MarkLost turns into `lost`). Hosts call Executor.Flush before they
// exit to close the window.
type persister struct {
	// stateDir is where records are written.
	stateDir string
	// mu guards every field below.
	mu sync.Mutex
	// dirty holds the runs whose newest record is not yet on disk, in the
	// order they first became dirty.
	dirty []*Run
	// queued marks the runs in dirty, so a run is queued once.
	queued map[*Run]bool
	// writing is true while the goroutine is writing records.
	writing bool
	// idle is signalled whenever dirty becomes empty and nothing is being
	// written; Flush waits on it.
	idle *sync.Cond
}

// newPersister returns a persister writing into stateDir.
func newPersister(stateDir string) *persister {
	p := &persister{stateDir: stateDir, queued: make(map[*Run]bool)}
	p.idle = sync.NewCond(&p.mu)
	return p
}

// mark queues r's newest record for writing and returns at once.
func (p *persister) mark(r *Run) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.queued[r] {
		return
	}
	p.queued[r] = true
	p.dirty = append(p.dirty, r)
	if !p.writing {
		p.writing = true
		go p.loop()
	}
}

// loop writes dirty runs until none is left.
func (p *persister) loop() {
	p.mu.Lock()
	for len(p.dirty) > 0 {
		r := p.dirty[0]
		p.dirty = p.dirty[1:]
		delete(p.queued, r)
		p.mu.Unlock()
		// The snapshot is taken after dequeuing: a state change made from
		// here on marks the run dirty again and is written next round.
		if err := writeRecord(p.stateDir, r.Record()); err != nil {
			r.setPersistError(err)
		}
		p.mu.Lock()
	}
	p.writing = false
	p.idle.Broadcast()
	p.mu.Unlock()
}

// flush blocks until every record marked before or during the call is on
// disk.
func (p *persister) flush() {
	p.mu.Lock()
	for p.writing || len(p.dirty) > 0 {
		p.idle.Wait()
	}
	p.mu.Unlock()
}
