package audit

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/agentgate/agentgate/internal/atomicfile"
	"github.com/gofrs/flock"
)

// FileName is the audit log's name inside the state directory.
const FileName = "audit.log"

// Defaults for rotation when Options leave them zero.
const (
	DefaultMaxBytes = 10 << 20 // rotate once the file would exceed 10 MiB
	DefaultKeep     = 5        // keep audit.log.1 … audit.log.5
)

// Options configure a Log.
type Options struct {
	// MaxBytes is the size past which the file is rotated before the next
	// Append; 0 means DefaultMaxBytes. The entries of one Append are never
	// split across files.
	MaxBytes int64
	// Keep is how many rotated files to keep; 0 means DefaultKeep.
	Keep int
	// Host is written into every entry that has none ("app", "headless", "cli", "hook").
	Host string
}

// Log appends entries to an audit log file. It is safe for concurrent use,
// and several processes may append to the same file at once: each Append is
// one write(2) of its lines to a file opened with O_APPEND, followed by
// fsync; rotation is serialised across processes by a lock file
// (audit.log.lock, github.com/gofrs/flock). A process still holding the
// rotated file notices before its next entry and reopens; an entry written
// in that instant lands at the end of audit.log.1 and is not lost.
type Log struct {
	// path is the active file's path.
	path string
	// opts holds the effective options.
	opts Options
	// mu serialises appends and rotation in this process.
	mu sync.Mutex
	// f is the open active file (O_APPEND), nil after Close.
	f *os.File
	// lock is the cross-process rotation lock.
	lock *flock.Flock
	// unsynced is true while lines written by AppendSoon wait for their
	// fsync (the timer's, or the next Append's).
	unsynced bool
	// syncErr is the error of a deferred fsync, returned by the next
	// Append or AppendSoon.
	syncErr error
}

// SyncDelay is the longest time lines written by AppendSoon wait for their
// fsync.
const SyncDelay = 50 * time.Millisecond

// Path returns the audit log path inside stateDir (<state>/agentgate).
func Path(stateDir string) string { return filepath.Join(stateDir, FileName) }

// Open opens (creating, mode 0600, with its directory 0700) the audit log at
// path for appending.
func Open(path string, opts Options) (*Log, error) {
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.Keep <= 0 {
		opts.Keep = DefaultKeep
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create the audit log directory: %w", err)
	}
	l := &Log{path: path, opts: opts, lock: flock.New(path + ".lock")}
	f, err := openAppend(path)
	if err != nil {
		return nil, err
	}
	l.f = f
	return l, nil
}

// openAppend opens path for appending, creating it 0600. On Windows the
// handle lets other processes rotate (rename) the file meanwhile.
func openAppend(path string) (*os.File, error) {
	f, err := atomicfile.OpenAppend(path, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open the audit log: %w", err)
	}
	return f, nil
}

// ErrClosed is returned by Append after Close.
var ErrClosed = errors.New("audit log is closed")

// Append writes entries, one line each and in order, with a single write(2)
// followed by a single fsync, so a pair of entries known together (a
// proposal and its decision) costs one sync and other writers' lines never
// fall between them. Each entry with a zero Time gets the current time (UTC)
// and one with an empty Host the Log's Host; the caller's entries are not
// modified. Control, invisible and bidirectional characters inside strings
// are written as \uXXXX escapes (still valid JSON, decoded back unchanged)
// so that reading the raw file with cat or less shows them instead of
// obeying them.
//
// The entries go to one file: rotation happens before the write when the
// lines together would take the file past MaxBytes (a file holding nothing
// takes them whatever their size). When an entry cannot be encoded (see
// Marshal) nothing is written. With no entries Append does nothing and
// returns nil.
func (l *Log) Append(entries ...Entry) error {
	return l.append(entries, true)
}

// AppendSoon is Append for entries that must be durable soon but need not
// be before the call returns (a run's start and end, audited off the
// agent's path): the lines are written at once, with one write(2), so
// another process reading the file sees them and a crash of this process
// loses nothing; their fsync follows within SyncDelay, or sooner with the
// next Append, whose fsync covers them. Rotation and Close sync them first.
// An error of that deferred fsync is returned by the next Append or
// AppendSoon.
func (l *Log) AppendSoon(entries ...Entry) error {
	return l.append(entries, false)
}

// AppendThenSync writes entries at once, like AppendSoon (so a crash of
// this process loses nothing from here on), and returns the function that
// makes them durable: it fsyncs unless another Append, a rotation or Close
// did already, and reports that fsync's error. The caller runs it while it
// does other work — the broker, while it starts a run a rule allowed — and
// waits for it before it reports back. If the caller never runs it, the
// lines are fsynced within SyncDelay, as for AppendSoon.
func (l *Log) AppendThenSync(entries ...Entry) (sync func() error, err error) {
	if err := l.append(entries, false); err != nil {
		return nil, err
	}
	return l.syncNow, nil
}

// syncNow fsyncs what AppendSoon or AppendThenSync wrote, if anything waits.
func (l *Log) syncNow() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.syncPendingLocked()
}

// append writes entries as Append documents; sync says whether to fsync
// before returning, else the fsync is scheduled (AppendSoon).
func (l *Log) append(entries []Entry, sync bool) error {
	if len(entries) == 0 {
		return nil
	}
	lines := make([]byte, 0, 512*len(entries))
	for _, e := range entries {
		if e.Time.IsZero() {
			e.Time = time.Now().UTC()
		}
		if e.Host == "" {
			e.Host = l.opts.Host
		}
		var err error
		if lines, err = appendEntry(lines, &e); err != nil {
			return err
		}
		lines = append(lines, '\n')
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return ErrClosed
	}
	if err := l.rotateIfNeeded(int64(len(lines))); err != nil {
		return err
	}
	if err := l.syncErr; err != nil {
		l.syncErr = nil
		return err
	}
	if _, err := l.f.Write(lines); err != nil {
		return fmt.Errorf("write the audit log %s: %w", l.path, err)
	}
	if !sync {
		if !l.unsynced {
			l.unsynced = true
			time.AfterFunc(SyncDelay, l.syncDeferred)
		}
		return nil
	}
	l.unsynced = false // this fsync covers the earlier lines too
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("sync the audit log %s: %w", l.path, err)
	}
	return nil
}

// syncDeferred fsyncs lines AppendSoon wrote, unless an Append, a rotation
// or Close did already.
func (l *Log) syncDeferred() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.syncPendingLocked(); err != nil {
		l.syncErr = err
	}
}

// syncPendingLocked fsyncs l.f if lines AppendSoon wrote wait for it; it is
// called before l.f is closed or replaced. Called with l.mu held.
func (l *Log) syncPendingLocked() error {
	if !l.unsynced || l.f == nil {
		return nil
	}
	l.unsynced = false
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("sync the audit log %s: %w", l.path, err)
	}
	return nil
}

// Marshal encodes e as one JSON line (with its newline): the bytes
// json.Marshal writes for e, except that every non-ASCII rune
// display.NeedsEscape flags is written as a \u escape (see appendString).
// It fails only when e.Time cannot be written as RFC 3339 (a year outside
// 0…9999, a zone offset of 24 hours or more), as json.Marshal does. A zero
// Time is written as 0001-01-01T00:00:00Z.
func Marshal(e Entry) ([]byte, error) {
	line, err := appendEntry(make([]byte, 0, 512), &e)
	if err != nil {
		return nil, err
	}
	return append(line, '\n'), nil
}

// rotateIfNeeded makes sure l.f is the current active file and that adding
// n bytes keeps it within MaxBytes (a file holding nothing yet takes any
// entry). Called with l.mu held.
func (l *Log) rotateIfNeeded(n int64) error {
	if err := l.reopenIfRotated(); err != nil {
		return err
	}
	fi, err := l.f.Stat()
	if err != nil {
		return fmt.Errorf("stat the audit log: %w", err)
	}
	if fi.Size() == 0 || fi.Size()+n <= l.opts.MaxBytes {
		return nil
	}
	if err := l.lock.Lock(); err != nil {
		return fmt.Errorf("lock the audit log for rotation (%s): %w", l.lock.Path(), err)
	}
	defer l.lock.Unlock()
	// Another process may have rotated while we waited for the lock.
	if err := l.reopenIfRotated(); err != nil {
		return err
	}
	if fi, err = l.f.Stat(); err != nil {
		return fmt.Errorf("stat the audit log: %w", err)
	}
	if fi.Size() == 0 || fi.Size()+n <= l.opts.MaxBytes {
		return nil
	}
	for i := l.opts.Keep - 1; i >= 1; i-- {
		err := atomicfile.Rename(rotated(l.path, i), rotated(l.path, i+1))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("rotate the audit log: %w", err)
		}
	}
	if err := atomicfile.Rename(l.path, rotated(l.path, 1)); err != nil {
		return fmt.Errorf("rotate the audit log: %w", err)
	}
	return l.reopenLocked()
}

// reopenIfRotated reopens the active path when l.f is no longer the file at
// that path (another process rotated it).
func (l *Log) reopenIfRotated() error {
	pathInfo, err := os.Stat(l.path)
	if err == nil {
		fdInfo, ferr := l.f.Stat()
		if ferr == nil && os.SameFile(pathInfo, fdInfo) {
			return nil
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("stat the audit log: %w", err)
	}
	return l.reopenLocked()
}

// reopenLocked opens the active path again and switches to it, after
// fsyncing what waits on the old file. Called with l.mu held.
func (l *Log) reopenLocked() error {
	f, err := openAppend(l.path)
	if err != nil {
		return err
	}
	serr := l.syncPendingLocked()
	l.f.Close()
	l.f = f
	return serr
}

// rotated returns the path of the i-th rotated file (1 is the newest).
func rotated(path string, i int) string { return path + "." + strconv.Itoa(i) }

// Close fsyncs lines AppendSoon wrote, if any, and closes the file; later
// Appends return ErrClosed.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	serr := l.syncPendingLocked()
	err := l.f.Close()
	l.f = nil
	return errors.Join(serr, err)
}
