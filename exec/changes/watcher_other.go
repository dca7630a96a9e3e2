//go:build !linux

package changes

import "time"

// watcher is absent on this platform: a Keeper walks the project after
// every run.
type watcher struct {
	// gone is never closed.
	gone chan struct{}
}

// newWatcher returns nil: no watcher here.
func newWatcher(string, func()) (*watcher, error) { return nil, nil }

func (w *watcher) add(*project, string, string) (int32, error) { return -1, nil }
func (w *watcher) remove(int32, *project, string)              {}
func (w *watcher) barrier(time.Duration) error                 { return nil }
func (w *watcher) close()                                      {}
