package audit

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/agentgate/agentgate/exec/atomicfile"
	"github.com/gofrs/flock"
)

// FileName is the audit log's name inside the state directory.
const FileName = "audit.log"

// Defaults for rotation and retention when Options leave them zero.
const (
	// DefaultMaxBytes: rotate once the active file would exceed 16 MiB.
	DefaultMaxBytes = 16 << 20
	// DefaultMaxTotal: all the files together (the older ones compressed)
	// stay under 256 MiB.
	DefaultMaxTotal = 256 << 20
	// DefaultSpan: entries younger than 30 days are dropped only when the
	// disk cap leaves no choice, and that is reported (CapEvent).
	DefaultSpan = 30 * 24 * time.Hour
)

// Options configure a Log.
type Options struct {
	// MaxBytes is the size past which the active file is rotated before
	// the next Append; 0 means DefaultMaxBytes. The entries of one Append
	// are never split across files.
	MaxBytes int64
	// MaxTotal is the disk cap: the most bytes all the files together may
	// take; 0 means DefaultMaxTotal. Enforced by Housekeep.
	MaxTotal int64
	// Span is how far back the log keeps at least (unless MaxTotal forces
	// otherwise, which Housekeep reports); 0 means DefaultSpan.
	Span time.Duration
	// Host is written into every entry that has none ("app", "headless", "cli", "hook").
	Host string
	// Maintain makes this Log run Housekeep in the background after each
	// rotation it makes (Close waits for it). Long-lived hosts and
	// `agentgate run` set it; the latency-critical hook does not (it
	// leaves the compressing to them; nothing is ever dropped without it).
	Maintain bool
	// OnCap, if set, is called (from Housekeep, after the history_cap
	// entry is written) when the cap made it drop entries younger than
	// Span — the desktop app notifies the person.
	OnCap func(CapEvent)
}

// Log appends entries to an audit log file. It is safe for concurrent use,
// and several processes may append to the same file at once: each Append is
// one write(2) of its lines to a file opened with O_APPEND; rotation is
// serialised across processes by a lock file (audit.log.lock,
// github.com/gofrs/flock). A process still holding the rotated file notices
// before its next entry and reopens; an entry written in that instant lands
// at the end of the newest rotated file, which is never compressed or
// removed before the next rotation, and is not lost.
//
// Durability is a group commit: the fsync that makes an Append durable
// covers every line written before it started, so concurrent Appends share
// fsyncs instead of queueing one each.
type Log struct {
	// path is the active file's path.
	path string
	// opts holds the effective options.
	opts Options
	// lock is the cross-process rotation lock.
	lock *flock.Flock

	// mu guards the fields below.
	mu sync.Mutex
	// f is the open active file (O_APPEND), nil after Close.
	f *os.File
	// written counts the writes made (a write's generation).
	written uint64
	// synced is the generation up to which writes are durable.
	synced uint64
	// timerSet is true while a deferred fsync (AppendSoon) is scheduled.
	timerSet bool
	// syncErr is the error of a deferred fsync, returned by the next
	// Append or AppendSoon.
	syncErr error

	// syncMu serialises fsyncs, so that one fsync serves every write made
	// before it began (syncThrough).
	syncMu sync.Mutex
	// maint tracks the background Housekeep runs.
	maint sync.WaitGroup
	// maintMu guards maintaining and again.
	maintMu sync.Mutex
	// maintaining is true while a background Housekeep runs.
	maintaining bool
	// again is set by a rotation while one runs: it runs once more.
	again bool
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
	if opts.MaxTotal <= 0 {
		opts.MaxTotal = DefaultMaxTotal
	}
	if opts.Span <= 0 {
		opts.Span = DefaultSpan
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

// Append writes entries, one line each and in order, with a single write(2),
// and returns once they are durable (fsynced; the fsync may be shared with
// concurrent Appends), so a pair of entries known together (a proposal and
// its decision) costs one sync and other writers' lines never fall between
// them. Each entry is first cut to the bounds of Bound; each with a zero
// Time gets the current time (UTC) and one with an empty Host the Log's
// Host; the caller's entries are not modified. Control, invisible and
// bidirectional characters inside strings are written as \uXXXX escapes
// (still valid JSON, decoded back unchanged) so that reading the raw file
// with cat or less shows them instead of obeying them.
//
// The entries go to one file: rotation happens before the write when the
// lines together would take the file past MaxBytes (a file holding nothing
// takes them whatever their size). When an entry cannot be encoded (see
// Marshal) nothing is written. With no entries Append does nothing and
// returns nil.
func (l *Log) Append(entries ...Entry) error {
	gen, err := l.append(entries, false)
	if err != nil || gen == 0 {
		return err
	}
	return l.syncThrough(gen)
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
	_, err := l.append(entries, true)
	return err
}

// AppendThenSync writes entries at once, like AppendSoon (so a crash of
// this process loses nothing from here on), and returns the function that
// makes them durable: it fsyncs unless another Append, a rotation or Close
// did already, and reports that fsync's error. The caller runs it while it
// does other work — the broker, while it starts a run a rule allowed — and
// waits for it before it reports back. If the caller never runs it, the
// lines are fsynced within SyncDelay, as for AppendSoon.
func (l *Log) AppendThenSync(entries ...Entry) (sync func() error, err error) {
	gen, err := l.append(entries, true)
	if err != nil {
		return nil, err
	}
	return func() error { return l.syncThrough(gen) }, nil
}

// append writes entries as Append documents and returns the write's
// generation (0 when there was nothing to write); with schedule, their
// fsync is scheduled within SyncDelay (AppendSoon), otherwise the caller
// syncs through the generation.
func (l *Log) append(entries []Entry, schedule bool) (uint64, error) {
	if len(entries) == 0 {
		return 0, nil
	}
	lines := make([]byte, 0, 512*len(entries))
	for _, e := range entries {
		e = Bound(e)
		if e.Time.IsZero() {
			e.Time = time.Now().UTC()
		}
		if e.Host == "" {
			e.Host = l.opts.Host
		}
		var err error
		if lines, err = appendEntry(lines, &e); err != nil {
			return 0, err
		}
		lines = append(lines, '\n')
	}
	l.mu.Lock()
	if l.f == nil {
		l.mu.Unlock()
		return 0, ErrClosed
	}
	rotated, err := l.rotateIfNeeded(int64(len(lines)))
	if err != nil {
		l.mu.Unlock()
		return 0, err
	}
	if err := l.syncErr; err != nil {
		l.syncErr = nil
		l.mu.Unlock()
		return 0, err
	}
	if _, err := l.f.Write(lines); err != nil {
		l.mu.Unlock()
		return 0, fmt.Errorf("write the audit log %s: %w", l.path, err)
	}
	l.written++
	gen := l.written
	if schedule && !l.timerSet {
		l.timerSet = true
		time.AfterFunc(SyncDelay, l.syncDeferred)
	}
	l.mu.Unlock()
	if rotated && l.opts.Maintain {
		l.housekeepInBackground()
	}
	return gen, nil
}

// syncThrough returns once every write up to generation gen is durable: at
// once if an fsync (or a rotation, or Close) already covered it; otherwise
// after an fsync of the active file that covers every write made before
// it began. fsyncs run one at a time, so writers arriving during one share
// the next.
func (l *Log) syncThrough(gen uint64) error {
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	l.mu.Lock()
	if l.synced >= gen {
		l.mu.Unlock()
		return nil
	}
	if l.f == nil {
		l.mu.Unlock()
		return fmt.Errorf("sync the audit log %s: %w before the entries were made durable", l.path, ErrClosed)
	}
	f, target := l.f, l.written
	l.mu.Unlock()
	err := f.Sync()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.synced >= gen {
		return nil // a rotation or Close synced it meanwhile (and may have closed f)
	}
	if err != nil {
		return fmt.Errorf("sync the audit log %s: %w", l.path, err)
	}
	if target > l.synced {
		l.synced = target
	}
	return nil
}

// syncDeferred is the fsync AppendSoon scheduled.
func (l *Log) syncDeferred() {
	l.mu.Lock()
	l.timerSet = false
	gen := l.written
	l.mu.Unlock()
	if err := l.syncThrough(gen); err != nil {
		l.mu.Lock()
		l.syncErr = err
		l.mu.Unlock()
	}
}

// syncAllLocked fsyncs l.f if writes wait for it; it is called before l.f
// is closed or replaced. Called with l.mu held.
func (l *Log) syncAllLocked() error {
	if l.synced >= l.written || l.f == nil {
		return nil
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("sync the audit log %s: %w", l.path, err)
	}
	l.synced = l.written
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
// entry), renaming a full file to its rotated name (rotatedName: the
// moment of rotation). It reports whether this call rotated. Called with
// l.mu held.
func (l *Log) rotateIfNeeded(n int64) (bool, error) {
	if err := l.reopenIfRotated(); err != nil {
		return false, err
	}
	fi, err := l.f.Stat()
	if err != nil {
		return false, fmt.Errorf("stat the audit log: %w", err)
	}
	if fi.Size() == 0 || fi.Size()+n <= l.opts.MaxBytes {
		return false, nil
	}
	if err := l.lock.Lock(); err != nil {
		return false, fmt.Errorf("lock the audit log for rotation (%s): %w", l.lock.Path(), err)
	}
	defer l.lock.Unlock()
	// Another process may have rotated while we waited for the lock.
	if err := l.reopenIfRotated(); err != nil {
		return false, err
	}
	if fi, err = l.f.Stat(); err != nil {
		return false, fmt.Errorf("stat the audit log: %w", err)
	}
	if fi.Size() == 0 || fi.Size()+n <= l.opts.MaxBytes {
		return false, nil
	}
	name := rotatedName(l.path, time.Now())
	for {
		if _, err := os.Lstat(name); errors.Is(err, os.ErrNotExist) {
			break
		}
		name = rotatedName(l.path, rotatedTime(l.path, name).Add(time.Nanosecond))
	}
	if err := atomicfile.Rename(l.path, name); err != nil {
		return false, fmt.Errorf("rotate the audit log: %w", err)
	}
	return true, l.reopenLocked()
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
	serr := l.syncAllLocked()
	l.f.Close()
	l.f = f
	return serr
}

// Close fsyncs lines not yet durable, if any, closes the file (later
// Appends return ErrClosed) and waits for a background Housekeep.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.f == nil {
		l.mu.Unlock()
		return nil
	}
	serr := l.syncAllLocked()
	if serr == nil {
		l.synced = l.written
	}
	err := l.f.Close()
	l.f = nil
	l.mu.Unlock()
	l.maint.Wait()
	return errors.Join(serr, err)
}
