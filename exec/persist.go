package exec

import (
	"os"
	"sync"
	"time"
)

// persistDelay is how long a changed record waits before it is written: a
// run that ends within it gets one write (its final record) instead of two,
// and records changed close together share one directory fsync.
const persistDelay = 50 * time.Millisecond

// journalIdle is how long after its last append the journal is compacted
// (journal.go): long enough that a burst of runs with pauses between
// commands is not interrupted by the compaction's file creations, which
// come all at once.
const journalIdle = 10 * time.Second

// persister writes run records durably (writeRecord: temp file, fsync,
// rename, directory fsync) on its own goroutine, so that the two fsyncs of
// each state change stay off the path between a proposal and its exit:
// Start and the end of a run only mark the run dirty. Writes of one run are
// coalesced: the newest state of a run is what gets written, and a run's
// record on disk only ever moves forward (running → final).
//
// A batch of one record (runs that come one at a time) is written as the
// run's own file; larger batches, and every batch while the journal is
// open, are appended to the executor's journal (journal.go), which is
// compacted into record files once the executor is idle.
//
// The price is a short window (persistDelay plus the write) in which the
// disk lags memory: a host that dies in it leaves the previous record (no record, or `running`, which the
// next MarkLost turns into `lost`). Hosts call Executor.Flush before they
// exit to close the window.
type persister struct {
	// stateDir is where records are written.
	stateDir string
	// journal is the executor's journal; only the writing goroutine uses
	// it (writing is true meanwhile).
	journal journal
	// compactDue is set (under mu) when the journal should be compacted
	// by the writing goroutine; compactTimer sets it once the journal has
	// been idle for journalIdle.
	compactDue   bool
	compactTimer *time.Timer
	// mu guards every field below.
	mu sync.Mutex
	// dirty holds the runs whose newest record is not yet on disk, in the
	// order they first became dirty.
	dirty []*Run
	// queued marks the runs in dirty, so a run is queued once.
	queued map[*Run]bool
	// writing is true while the goroutine is writing records.
	writing bool
	// timer starts the goroutine persistDelay after the first mark; nil
	// when no write is scheduled.
	timer *time.Timer
	// idle is signalled whenever dirty becomes empty and nothing is being
	// written; Flush waits on it.
	idle *sync.Cond
}

// newPersister returns a persister writing into stateDir.
func newPersister(stateDir string) *persister {
	p := &persister{stateDir: stateDir, queued: make(map[*Run]bool), journal: journal{name: newJournalName()}}
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
	if !p.writing && p.timer == nil {
		p.timer = time.AfterFunc(persistDelay, p.startFromTimer)
	}
}

// startFromTimer starts the writing goroutine when the delay has passed,
// unless flush started it first.
func (p *persister) startFromTimer() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.timer == nil || p.writing {
		return
	}
	p.timer = nil
	p.writing = true
	go p.loop()
}

// loop writes dirty runs until none is left: all the runs dirty at a moment
// as one batch, with one directory fsync.
func (p *persister) loop() {
	p.mu.Lock()
	for len(p.dirty) > 0 || p.compactDue {
		if len(p.dirty) == 0 {
			p.compactDue = false
			p.mu.Unlock()
			// A failed compaction leaves the journal, which every reader
			// reads; the next idle period tries again.
			_ = p.journal.compact(p.stateDir)
			p.mu.Lock()
			continue
		}
		batch := p.dirty
		p.dirty = nil
		for _, r := range batch {
			delete(p.queued, r)
		}
		p.mu.Unlock()
		// The snapshots are taken after dequeuing: a state change made from
		// here on marks the run dirty again and is written next round.
		// A finished run's output goes to its spill files first, so that a
		// final record on disk always has the files it counts.
		recs := make([]Record, len(batch))
		for i, r := range batch {
			r.settleOutput()
			recs[i] = r.Record()
		}
		var errs []error
		if len(recs) == 1 && p.journal.f == nil {
			errs = writeRecords(p.stateDir, recs)
		} else {
			errs = p.journal.appendRecords(p.stateDir, recs)
			p.mu.Lock()
			if p.journal.lines >= journalCompactAt {
				p.compactDue = true
			} else if p.compactTimer == nil {
				p.compactTimer = time.AfterFunc(journalIdle, p.compactIdle)
			} else {
				p.compactTimer.Reset(journalIdle)
			}
			p.mu.Unlock()
		}
		for i, err := range errs {
			if err != nil {
				batch[i].setPersistError(err)
			}
			if recs[i].State.Final() {
				// A cancel request that came too late is moot now; removing
				// it here keeps two path lookups off the end of the run.
				os.Remove(cancelPath(p.stateDir, recs[i].ID))
			}
		}
		p.mu.Lock()
	}
	p.writing = false
	p.idle.Broadcast()
	p.mu.Unlock()
}

// compactIdle asks the writing goroutine to compact the journal, starting
// it unless it runs.
func (p *persister) compactIdle() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.compactDue = true
	if !p.writing {
		p.writing = true
		go p.loop()
	}
}

// flush blocks until every record marked before or during the call is on
// disk, and the journal, if one is open, is compacted into record files.
func (p *persister) flush() {
	p.mu.Lock()
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
	p.compactDue = true // nothing to do without a journal
	if !p.writing && (len(p.dirty) > 0 || p.compactDue) {
		p.writing = true
		go p.loop()
	}
	for p.writing || len(p.dirty) > 0 {
		p.idle.Wait()
	}
	p.mu.Unlock()
}
