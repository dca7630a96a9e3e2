package model

import (
	"sync"
	"time"
)

// Ticker calls Tick every Interval while Needed reports true, and never
// otherwise, so that an app with nothing to count down or follow wakes for
// nothing (SPEC §9: idle means idle). Needed is asked when Poke is called
// and after every tick; the ticker stops as soon as it reports false and
// starts again at the next Poke that finds it true. Call Poke after
// anything that may make it needed: a card shown, a run started. The zero
// value is not usable: set all three fields. Safe for concurrent use;
// Needed must not call Poke.
type Ticker struct {
	// Interval is the time between ticks.
	Interval time.Duration
	// Needed reports whether ticks are wanted now.
	Needed func() bool
	// Tick is called on the ticker's goroutine.
	Tick func()

	// mu guards active.
	mu sync.Mutex
	// active is true while the ticking goroutine runs.
	active bool
}

// Poke starts ticking if it is needed and not already going.
func (t *Ticker) Poke() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.active || !t.Needed() {
		return
	}
	t.active = true
	go t.run()
}

// Active reports whether the ticker is ticking.
func (t *Ticker) Active() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.active
}

// run ticks until Needed reports false.
func (t *Ticker) run() {
	tk := time.NewTicker(t.Interval)
	defer tk.Stop()
	for range tk.C {
		t.Tick()
		t.mu.Lock()
		if !t.Needed() {
			t.active = false
			t.mu.Unlock()
			return
		}
		t.mu.Unlock()
	}
}
