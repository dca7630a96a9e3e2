package model

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestTickerTicksOnlyWhileNeeded: a Ticker does not start while nothing
// needs it, ticks once it is needed and poked, stops by itself when it is
// no longer needed (no goroutine, no timer left), and starts again at the
// next Poke.
func TestTickerTicksOnlyWhileNeeded(t *testing.T) {
	var needed atomic.Bool
	ticks := make(chan struct{}, 100)
	tk := &Ticker{Interval: time.Millisecond, Needed: needed.Load, Tick: func() { ticks <- struct{}{} }}

	tk.Poke()
	if tk.Active() {
		t.Fatal("the ticker started though nothing needs it")
	}
	needed.Store(true)
	tk.Poke()
	tk.Poke() // a second Poke starts no second goroutine
	for range 3 {
		<-ticks
	}
	needed.Store(false)
	stopped := false
	for range 1000 {
		if !tk.Active() {
			stopped = true
			break
		}
		time.Sleep(time.Millisecond)
	}
	if !stopped {
		t.Fatal("the ticker kept going after it was no longer needed")
	}
	for len(ticks) > 0 { // ticks delivered before it stopped
		<-ticks
	}
	if len(ticks) != 0 || tk.Active() {
		t.Fatal("a tick came after the ticker stopped")
	}
	needed.Store(true)
	tk.Poke()
	<-ticks
	needed.Store(false)
}
