package exec

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"time"
)

// ChangeLimits bounds the change summary's work per snapshot (one before and
// one after each run). Zero fields take the defaults.
type ChangeLimits struct {
	// MaxFiles is the most entries one snapshot records (default 20,000).
	MaxFiles int
	// MaxHashSize is the largest file hashed (Linux, macOS; default 4 MiB);
	// larger files are compared by size and modification time only.
	MaxHashSize int64
	// MaxDuration bounds one snapshot's walk (default 2 s).
	MaxDuration time.Duration
	// MaxListed is the most paths kept in each of Created, Modified and
	// Deleted (default 1,000).
	MaxListed int
	// Disabled turns change summaries off: Record.Changes stays nil.
	Disabled bool
}

// withDefaults fills zero fields with the default limits.
func (l ChangeLimits) withDefaults() ChangeLimits {
	if l.MaxFiles <= 0 {
		l.MaxFiles = 20000
	}
	if l.MaxHashSize <= 0 {
		l.MaxHashSize = 4 << 20
	}
	if l.MaxDuration <= 0 {
		l.MaxDuration = 2 * time.Second
	}
	if l.MaxListed <= 0 {
		l.MaxListed = 1000
	}
	return l
}

// fileState is what a snapshot remembers of one entry. Which fields are set
// depends on the platform's fingerprint (see fingerprint).
type fileState struct {
	// Kind is the entry's type bits (directory, symlink, regular…).
	Kind fs.FileMode
	// Size and ModTime come from Lstat.
	Size int64
	// ModTime is the modification time from Lstat.
	ModTime time.Time
	// Hash is the SHA-256 of a regular file's content, or of a symlink's
	// target; empty when not hashed (too large, unreadable, or Windows).
	Hash string
}

// snapshot is the state of a directory tree at one moment.
type snapshot struct {
	// files maps slash-separated paths relative to the root to their state.
	files map[string]fileState
	// complete is false when a bound or an error cut the walk short.
	complete bool
	// reason says why the walk is incomplete.
	reason string
}

// takeSnapshot walks root without following symlinks, skipping the content
// of every directory named .git, and records each entry's state, within the
// limits. The walk order is lexical, so a cut-short walk covers a prefix.
func takeSnapshot(root string, lim ChangeLimits) snapshot {
	s := snapshot{files: make(map[string]fileState), complete: true}
	deadline := time.Now().Add(lim.MaxDuration)
	cut := func(reason string) error {
		if s.complete {
			s.complete, s.reason = false, reason
		}
		return fs.SkipAll
	}
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == root {
				return cut(fmt.Sprintf("could not read %s: %v", path, err))
			}
			cut(fmt.Sprintf("could not read %s: %v", path, err))
			return nil
		}
		if path == root {
			return nil
		}
		if len(s.files) >= lim.MaxFiles {
			return cut(fmt.Sprintf("stopped after %d files", lim.MaxFiles))
		}
		if time.Now().After(deadline) {
			return cut(fmt.Sprintf("stopped after %v", lim.MaxDuration))
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return nil
		}
		st, err := fingerprint(path, d, lim.MaxHashSize)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed while walking: as if never seen
		}
		if err != nil {
			cut(fmt.Sprintf("could not read %s: %v", path, err))
			return nil
		}
		s.files[filepath.ToSlash(rel)] = st
		if d.IsDir() && d.Name() == ".git" {
			return fs.SkipDir // the entry is listed, its content is not
		}
		return nil
	})
	return s
}

// diffSnapshots compares two snapshots of the same root. An entry is
// modified when its kind changed, when both sides carry a content hash and
// the hashes differ, or, without hashes on both sides, when size or
// modification time differ. Directories are never "modified"; created and
// deleted directories are listed with a trailing "/". When the before
// snapshot is incomplete, Created lists nothing (what existed is unknown);
// when the after snapshot is incomplete, Deleted lists nothing; either way
// the summary is marked Incomplete with the reason.
func diffSnapshots(before, after snapshot, lim ChangeLimits, method string) *ChangeSummary {
	cs := &ChangeSummary{Created: []string{}, Modified: []string{}, Deleted: []string{}, Method: method}
	if !before.complete {
		cs.Incomplete, cs.Reason = true, "before the run: "+before.reason
	} else if !after.complete {
		cs.Incomplete, cs.Reason = true, "after the run: "+after.reason
	}
	add := func(list *[]string, p string) {
		if len(*list) >= lim.MaxListed {
			if !cs.Incomplete {
				cs.Incomplete, cs.Reason = true, fmt.Sprintf("more than %d entries in one list", lim.MaxListed)
			}
			return
		}
		*list = append(*list, p)
	}
	name := func(p string, st fileState) string {
		if st.Kind.IsDir() {
			return p + "/"
		}
		return p
	}
	for _, p := range sortedKeys(after.files) {
		a := after.files[p]
		b, existed := before.files[p]
		switch {
		case !existed:
			if before.complete {
				add(&cs.Created, name(p, a))
			}
		case changed(b, a):
			add(&cs.Modified, name(p, a))
		}
	}
	if after.complete {
		for _, p := range sortedKeys(before.files) {
			if _, ok := after.files[p]; !ok {
				add(&cs.Deleted, name(p, before.files[p]))
			}
		}
	}
	return cs
}

// changed reports whether an entry present in both snapshots changed.
func changed(b, a fileState) bool {
	if b.Kind != a.Kind {
		return true
	}
	if a.Kind.IsDir() {
		return false
	}
	if b.Hash != "" && a.Hash != "" {
		return b.Hash != a.Hash
	}
	return b.Size != a.Size || !b.ModTime.Equal(a.ModTime)
}

// sortedKeys returns m's keys in ascending order.
func sortedKeys(m map[string]fileState) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
