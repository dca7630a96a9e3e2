package model

import (
	"context"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/agentgate/agentgate/exec"
)

// RefreshInterval is the Processes window's update throttle: at most four
// redraws a second however many records change.
const RefreshInterval = 250 * time.Millisecond

// pollInterval is how often FollowRuns re-reads every record when the runs
// directory cannot be watched.
const pollInterval = 2 * time.Second

// FollowRuns keeps procs up to date with the runs directory (every host's
// run records) until ctx ends, and calls changed after each update, at most
// once per RefreshInterval (coalesced by a Throttle, on a goroutine of its
// own; the Fyne shell wraps it in fyne.Do). It watches the directory with
// fsnotify and re-reads only the records (and record journals,
// exec.ReadJournal) that changed; when the watch
// loses events (overflow) it re-reads them all. When the directory cannot
// be watched (missing, no inotify instances left) it re-reads every record
// every two seconds instead. It returns at once, with a channel closed once
// it stopped after ctx ended: the watch is closed and no update runs or
// will run (on Windows an open watch keeps the directory from being
// removed).
func FollowRuns(ctx context.Context, procs *ProcessesModel, changed func()) <-chan struct{} {
	stopped := make(chan struct{})
	var mu sync.Mutex
	dirty := map[string]bool{}
	dirtyJournals := map[string]bool{}
	// updating is held by an update, which runs only while ctx lasts; the
	// end takes it once, so that it waits for an update in flight.
	var updating sync.Mutex
	throttle := NewThrottle(RefreshInterval, func() {
		updating.Lock()
		defer updating.Unlock()
		if ctx.Err() != nil {
			return
		}
		mu.Lock()
		ids := make([]string, 0, len(dirty))
		for id := range dirty {
			ids = append(ids, id)
		}
		clear(dirty)
		names := make([]string, 0, len(dirtyJournals))
		for name := range dirtyJournals {
			names = append(names, name)
		}
		clear(dirtyJournals)
		mu.Unlock()
		procs.UpdateJournals(names)
		procs.Update(ids)
		changed()
	})
	w, err := fsnotify.NewWatcher()
	if err == nil {
		if err = w.Add(procs.runsDir()); err != nil {
			w.Close()
		}
	}
	if err != nil {
		go func() {
			defer close(stopped)
			t := time.NewTicker(pollInterval)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					_ = procs.LoadAll()
					changed()
				}
			}
		}()
		return stopped
	}
	go func() {
		defer close(stopped)
		for {
			select {
			case <-ctx.Done():
				w.Close()
				// Wait for an update in flight; any later one sees ctx
				// ended and does nothing.
				updating.Lock()
				updating.Unlock()
				return
			case ev := <-w.Events:
				name := filepath.Base(ev.Name)
				if id := RecordIDFromFile(name); id != "" {
					mu.Lock()
					dirty[id] = true
					mu.Unlock()
					throttle.Trigger()
				} else if exec.IsJournalFile(name) {
					mu.Lock()
					dirtyJournals[name] = true
					mu.Unlock()
					throttle.Trigger()
				}
			case <-w.Errors:
				// An overflow lost events: read everything again.
				_ = procs.LoadAll()
				changed()
			}
		}
	}()
	return stopped
}
