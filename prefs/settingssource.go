package prefs

import (
	"os"
	"sync"
	"time"
)

// SettingsSource hands out the current settings and re-reads the settings
// file when it changed, so that an edit applies to the next proposal
// without restarting the app. Each Get costs one stat of the file; it is
// safe for concurrent use.
//
// A file that fails to load (bad JSON, an unknown key, a value out of
// range) leaves the last good settings in force — never a mix — and Err
// says why until the file is fixed. Removing the file brings back the
// defaults.
type SettingsSource struct {
	// paths locates the settings file.
	paths Paths
	// mu guards the fields below.
	mu sync.Mutex
	// cur is the settings in force.
	cur Settings
	// stamp identifies the file version cur (or err) came from.
	stamp fileStamp
	// err is why the current file version could not be loaded; nil when
	// cur is that version.
	err error
}

// fileStamp tells versions of a file apart without reading it: a rename
// replace changes the inode, an in-place edit the size or modification
// time. The zero value means "no file".
type fileStamp struct {
	// exists is false when the file is absent.
	exists bool
	// size and modTime come from stat.
	size int64
	// modTime is the modification time.
	modTime time.Time
	// file is the os.FileInfo, compared with os.SameFile (inode).
	file os.FileInfo
}

// same reports whether two stamps describe the same file version.
func (a fileStamp) same(b fileStamp) bool {
	if a.exists != b.exists {
		return false
	}
	if !a.exists {
		return true
	}
	return a.size == b.size && a.modTime.Equal(b.modTime) && os.SameFile(a.file, b.file)
}

// stampOf stats path.
func stampOf(path string) fileStamp {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}
	}
	return fileStamp{exists: true, size: fi.Size(), modTime: fi.ModTime(), file: fi}
}

// NewSettingsSource loads the settings once. When that load fails, the
// source starts with DefaultSettings and the error is returned (and kept in
// Err) so the caller can tell the person.
func NewSettingsSource(p Paths) (*SettingsSource, error) {
	s := &SettingsSource{paths: p, cur: DefaultSettings()}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reloadLocked(stampOf(p.settingsFile()))
	return s, s.err
}

// Get returns the settings in force, re-reading the file first if it
// changed since the last look.
func (s *SettingsSource) Get() Settings {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st := stampOf(s.paths.settingsFile()); !st.same(s.stamp) {
		s.reloadLocked(st)
	}
	return s.cur
}

// Err returns why the settings file, as it is now, could not be loaded, or
// nil when the settings in force come from it (or from the defaults, when
// there is no file).
func (s *SettingsSource) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// reloadLocked loads the file version st; s.mu is held.
func (s *SettingsSource) reloadLocked(st fileStamp) {
	s.stamp = st
	loaded, err := LoadSettings(s.paths)
	if err != nil {
		s.err = err
		return
	}
	s.cur, s.err = loaded, nil
}
