package prefs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// reloadDelay is how long Watch gathers file events before reloading, so an
// editor's burst of writes and renames causes one reload.
const reloadDelay = 100 * time.Millisecond

// Watch keeps the Store in step with the files: it watches the directories of
// the global list, the provider lists, trust.json and every project list the
// Store has read or will read (directories, not files, since editors replace
// files by renaming). Events are gathered for 100 ms, then the changed lists
// are read again and the new rule set replaces the old in one atomic swap, so
// a hand edit is visible well within a second and no decision ever sees an
// empty set in between. Missing config and state directories are created
// (mode 0700).
//
// Watch returns once the watches are in place (having re-read every list, so
// nothing changed before then is missed) and keeps watching until ctx is
// done. It fails when the Store is already watching or the watches cannot be
// set up.
func (s *Store) Watch(ctx context.Context) error {
	providersDir := filepath.Join(s.paths.ConfigDir, providersDirName)
	for _, dir := range []string{s.paths.ConfigDir, providersDir, s.paths.StateDir} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("creating %s to watch it: %w", dir, err)
		}
	}
	s.mu.Lock()
	if s.watcher != nil {
		s.mu.Unlock()
		return errors.New("this allow-list store is already watching its files")
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		s.mu.Unlock()
		return fmt.Errorf("starting to watch the allow-lists: %w", err)
	}
	for _, dir := range []string{s.paths.ConfigDir, providersDir, s.paths.StateDir} {
		if err := w.Add(dir); err != nil {
			w.Close()
			s.mu.Unlock()
			return fmt.Errorf("watching %s: %w", dir, err)
		}
	}
	s.watcher = w
	for root := range s.snap.Load().projects {
		s.watchProjectLocked(root)
	}
	s.mu.Unlock()
	s.reloadAll()
	go s.watchLoop(ctx, w)
	return nil
}

// watchProjectLocked adds watches for the project at root: the root itself
// (to see .agentgate appear or go) and .agentgate when it exists. It does
// nothing when not watching; a project that cannot be watched is still
// decided on from its last reading. s.mu must be held.
func (s *Store) watchProjectLocked(root string) {
	if s.watcher == nil {
		return
	}
	s.watcher.Add(root)
	dir := filepath.Join(root, projectDirName)
	if info, err := os.Stat(dir); err == nil && info.IsDir() {
		s.watcher.Add(dir)
	}
}

// pendingReload is the set of lists an event burst touched.
type pendingReload struct {
	// global is set when the global list changed.
	global bool
	// trust is set when trust.json changed (all projects are re-read).
	trust bool
	// providers holds the names of changed provider lists.
	providers map[string]bool
	// projects holds the roots of changed project lists.
	projects map[string]bool
}

// watchLoop turns file events into reloads until ctx is done.
func (s *Store) watchLoop(ctx context.Context, w *fsnotify.Watcher) {
	defer func() {
		s.mu.Lock()
		s.watcher = nil
		s.mu.Unlock()
		w.Close()
	}()
	var pending *pendingReload // nil while no reload is due
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	armed := false // the timer runs for the pending reload
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if pending == nil {
				pending = &pendingReload{providers: map[string]bool{}, projects: map[string]bool{}}
			}
			if s.classify(ev.Name, pending) && !armed {
				timer.Reset(reloadDelay)
				armed = true
			}
		case <-w.Errors:
			// An overflow or similar: re-read everything to be sure.
			pending = s.everything()
			if !armed {
				timer.Reset(reloadDelay)
				armed = true
			}
		case <-timer.C:
			armed = false
			if pending != nil {
				s.applyReload(pending)
				pending = nil
			}
		}
	}
}

// classify records in p which list the event on path concerns and reports
// whether it concerns any. Lock files and temporary files are ignored.
func (s *Store) classify(path string, p *pendingReload) bool {
	path = filepath.Clean(path)
	dir, base := filepath.Split(path)
	dir = filepath.Clean(dir)
	if strings.HasSuffix(base, lockSuffix) {
		return false
	}
	snap := s.snap.Load()
	switch {
	case path == s.paths.GlobalFile():
		p.global = true
	case path == s.paths.trustFile():
		p.trust = true
	case dir == filepath.Join(s.paths.ConfigDir, providersDirName) && strings.HasSuffix(base, providerSuffix):
		name := strings.TrimSuffix(base, providerSuffix)
		if _, loaded := snap.providers[name]; !loaded {
			return false
		}
		p.providers[name] = true
	case base == allowListName && filepath.Base(dir) == projectDirName:
		root := filepath.Dir(dir)
		if _, loaded := snap.projects[root]; !loaded {
			return false
		}
		p.projects[root] = true
	case base == projectDirName:
		if _, loaded := snap.projects[dir]; !loaded {
			return false
		}
		p.projects[dir] = true
		s.mu.Lock()
		s.watchProjectLocked(dir) // .agentgate may have just appeared
		s.mu.Unlock()
	default:
		return false
	}
	return true
}

// applyReload re-reads the lists in p and swaps in the new snapshot.
func (s *Store) applyReload(p *pendingReload) {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := s.snap.Load().clone()
	if p.global {
		next.reload(s, ScopeGlobal, "", "")
	}
	for name := range p.providers {
		next.reload(s, ScopeProvider, name, "")
	}
	if p.trust {
		next.reloadTrust(s) // a damaged trust.json trusts nothing
	} else {
		for root := range p.projects {
			next.reload(s, ScopeProject, "", root)
		}
	}
	s.publishLocked(next)
}

// everything returns a pendingReload naming every loaded list and trust.json
// (which re-reads every project list).
func (s *Store) everything() *pendingReload {
	p := &pendingReload{global: true, trust: true, providers: map[string]bool{}, projects: map[string]bool{}}
	for name := range s.snap.Load().providers {
		p.providers[name] = true
	}
	return p
}

// reloadAll re-reads every loaded list and trust.json.
func (s *Store) reloadAll() {
	s.applyReload(s.everything())
}
