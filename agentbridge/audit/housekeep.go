package audit

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentgate/agentgate/exec/atomicfile"
)

// rotatedTimeLayout names rotated files after the moment of their rotation,
// UTC, to the nanosecond, so that names sort as times:
// audit.log.20261130T101500.123456789Z, and .gz once compressed.
const rotatedTimeLayout = "20060102T150405.000000000Z"

// gzSuffix ends the name of a compressed rotated file.
const gzSuffix = ".gz"

// rotatedName returns the rotated file name for a rotation at t.
func rotatedName(path string, t time.Time) string {
	return path + "." + t.UTC().Format(rotatedTimeLayout)
}

// rotatedTime returns the rotation time in a rotated file's name (plain or
// compressed), or the zero time when name is not one.
func rotatedTime(path, name string) time.Time {
	rest, ok := strings.CutPrefix(name, path+".")
	if !ok {
		return time.Time{}
	}
	t, err := time.Parse(rotatedTimeLayout, strings.TrimSuffix(rest, gzSuffix))
	if err != nil {
		return time.Time{}
	}
	return t
}

// logFile is one rotated file of the log.
type logFile struct {
	// name is the file's path.
	name string
	// when is its rotation time (no entry in it is newer); for a file of
	// the former numbered naming, its modification time.
	when time.Time
	// legacy is N for a file of the former naming audit.log.N, else 0.
	legacy int
	// gz is true for a compressed file.
	gz bool
	// size is its size on disk.
	size int64
}

// listRotated returns the rotated files of the log at path, oldest first:
// those of the former naming (audit.log.N … audit.log.1), then the
// timestamped ones by time. When a rotation is present both plain and
// compressed (compression is being committed), only the compressed one is
// listed. Lock files, temporary files and anything else are left out.
func listRotated(path string) ([]logFile, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("list the audit log files: %w", err)
	}
	var files []logFile
	compressed := make(map[string]bool)
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), base+".")
		if !ok || !e.Type().IsRegular() {
			continue
		}
		name := filepath.Join(dir, e.Name())
		f := logFile{name: name}
		if n, err := strconv.Atoi(rest); err == nil && n > 0 && strconv.Itoa(n) == rest {
			f.legacy = n
		} else if f.when = rotatedTime(path, name); f.when.IsZero() {
			continue
		}
		f.gz = strings.HasSuffix(rest, gzSuffix)
		if f.gz {
			compressed[strings.TrimSuffix(name, gzSuffix)] = true
		}
		info, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		f.size = info.Size()
		if f.legacy > 0 {
			f.when = info.ModTime()
		}
		files = append(files, f)
	}
	files = slices.DeleteFunc(files, func(f logFile) bool { return !f.gz && compressed[f.name] })
	slices.SortFunc(files, func(a, b logFile) int {
		switch {
		case a.legacy > 0 && b.legacy > 0:
			return b.legacy - a.legacy
		case a.legacy > 0:
			return -1
		case b.legacy > 0:
			return 1
		}
		return a.when.Compare(b.when)
	})
	return files, nil
}

// CapEvent reports that the disk cap made Housekeep remove entries younger
// than the span: more was written in the span than the cap holds.
type CapEvent struct {
	// Files are the removed files.
	Files []string
	// Through is the newest of the removed files' rotation times: entries
	// up to then are gone.
	Through time.Time
	// MaxTotal is the cap.
	MaxTotal int64
	// Span is the span that could not be kept.
	Span time.Duration
}

// Message is a sentence for a person saying what happened and what to do.
func (c CapEvent) Message() string {
	return fmt.Sprintf("the audit log reached its disk cap of %d MiB: %d older file(s) with entries up to %s were removed although younger than the %v kept at least (history_span); something wrote more than the cap holds in that time — look at the newest entries, and raise audit_max_total_bytes to keep more",
		c.MaxTotal>>20, len(c.Files), c.Through.UTC().Format(time.RFC3339), c.Span)
}

// Housekeep keeps the log within its bounds, under the cross-process
// rotation lock for each change (another process may append meanwhile):
//  1. files of the former naming (audit.log.N) get the timestamped naming;
//  2. every rotated file but the newest (which a process that has not yet
//     noticed the rotation may still append to) is compressed with gzip:
//     written beside it, synced, renamed into place, then the plain file
//     removed;
//  3. while all the files together (the active one included) take more
//     than MaxTotal, the oldest rotated file is removed. If a removed file
//     held entries younger than Span, a history_cap entry says so (it is
//     audited, then OnCap is called).
//
// Logs with Options.Maintain run it after each rotation; a long-lived host
// calls it at start as well. It is safe to run from several processes at
// once.
func (l *Log) Housekeep() error {
	if err := l.migrateLegacy(); err != nil {
		return err
	}
	files, err := listRotated(l.path)
	if err != nil {
		return err
	}
	for i, f := range files {
		if !f.gz && i < len(files)-1 {
			if err := l.compress(f); err != nil {
				return err
			}
		}
	}
	event, err := l.enforceCap()
	if err != nil || event == nil {
		return err
	}
	if err := l.Append(Entry{Kind: KindHistoryCap, Message: event.Message()}); err != nil && !errors.Is(err, ErrClosed) {
		return err
	}
	if l.opts.OnCap != nil {
		l.opts.OnCap(*event)
	}
	return nil
}

// housekeepInBackground runs Housekeep in a goroutine (Close waits for it);
// a call while one runs makes it run once more afterwards.
func (l *Log) housekeepInBackground() {
	l.maintMu.Lock()
	defer l.maintMu.Unlock()
	if l.maintaining {
		l.again = true
		return
	}
	l.maintaining = true
	l.maint.Add(1)
	go func() {
		defer l.maint.Done()
		for {
			if err := l.Housekeep(); err != nil {
				fmt.Fprintf(os.Stderr, "agentgate: audit log housekeeping: %v\n", err)
			}
			l.maintMu.Lock()
			if !l.again {
				l.maintaining = false
				l.maintMu.Unlock()
				return
			}
			l.again = false
			l.maintMu.Unlock()
		}
	}()
}

// migrateLegacy renames files of the former naming (audit.log.N, N = 1
// newest) to timestamped names after their modification times, keeping
// their order.
func (l *Log) migrateLegacy() error {
	files, err := listRotated(l.path)
	if err != nil || len(files) == 0 || files[0].legacy == 0 {
		return err
	}
	if err := l.lock.Lock(); err != nil {
		return fmt.Errorf("lock the audit log (%s): %w", l.lock.Path(), err)
	}
	defer l.lock.Unlock()
	if files, err = listRotated(l.path); err != nil {
		return err
	}
	var last time.Time
	for _, f := range files {
		if f.legacy == 0 {
			break
		}
		when := f.when
		if !when.After(last) {
			when = last.Add(time.Nanosecond)
		}
		last = when
		if err := atomicfile.Rename(f.name, rotatedName(l.path, when)); err != nil {
			return fmt.Errorf("rename %s to the timestamped naming: %w", f.name, err)
		}
	}
	return nil
}

// compress replaces the plain rotated file f by its gzip-compressed copy.
// The copy is made without the lock; the switch is made under it, and only
// if f is still there.
func (l *Log) compress(f logFile) error {
	src, err := atomicfile.Open(f.name)
	if errors.Is(err, os.ErrNotExist) {
		return nil // another process compressed or removed it
	}
	if err != nil {
		return fmt.Errorf("compress %s: %w", f.name, err)
	}
	defer src.Close()
	tmp, err := os.CreateTemp(filepath.Dir(f.name), "."+filepath.Base(f.name)+".gz.tmp-*")
	if err != nil {
		return fmt.Errorf("compress %s: %w", f.name, err)
	}
	tmpName := tmp.Name()
	fail := func(err error) error {
		tmp.Close()
		os.Remove(tmpName)
		return fmt.Errorf("compress %s: %w", f.name, err)
	}
	buf := bufio.NewWriterSize(tmp, 256<<10)
	zw := gzip.NewWriter(buf)
	if _, err := io.Copy(zw, src); err != nil {
		return fail(err)
	}
	if err := zw.Close(); err != nil {
		return fail(err)
	}
	if err := buf.Flush(); err != nil {
		return fail(err)
	}
	if err := tmp.Sync(); err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		return fail(err)
	}
	if err := l.lock.Lock(); err != nil {
		os.Remove(tmpName)
		return fmt.Errorf("lock the audit log (%s): %w", l.lock.Path(), err)
	}
	defer l.lock.Unlock()
	if _, err := os.Stat(f.name); err != nil {
		os.Remove(tmpName)
		return nil // compressed or removed by another process meanwhile
	}
	if err := atomicfile.Rename(tmpName, f.name+gzSuffix); err != nil {
		os.Remove(tmpName)
		return fmt.Errorf("compress %s: %w", f.name, err)
	}
	if err := atomicfile.SyncDir(filepath.Dir(f.name)); err != nil {
		return fmt.Errorf("compress %s: %w", f.name, err)
	}
	if err := atomicfile.Retry(func() error { return os.Remove(f.name) }); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("compress %s: remove the plain file: %w", f.name, err)
	}
	return nil
}

// enforceCap removes the oldest rotated files while all the files together
// take more than MaxTotal. It returns a CapEvent when a removed file held
// entries younger than Span, else nil.
func (l *Log) enforceCap() (*CapEvent, error) {
	if err := l.lock.Lock(); err != nil {
		return nil, fmt.Errorf("lock the audit log (%s): %w", l.lock.Path(), err)
	}
	defer l.lock.Unlock()
	files, err := listRotated(l.path)
	if err != nil {
		return nil, err
	}
	total := int64(0)
	if fi, err := os.Stat(l.path); err == nil {
		total = fi.Size()
	}
	for _, f := range files {
		total += f.size
	}
	var event *CapEvent
	horizon := time.Now().Add(-l.opts.Span)
	for len(files) > 0 && total > l.opts.MaxTotal {
		f := files[0]
		files = files[1:]
		if err := atomicfile.Retry(func() error { return os.Remove(f.name) }); err != nil && !errors.Is(err, os.ErrNotExist) {
			return event, fmt.Errorf("remove %s to keep the audit log under its cap: %w", f.name, err)
		}
		total -= f.size
		if f.when.After(horizon) {
			if event == nil {
				event = &CapEvent{MaxTotal: l.opts.MaxTotal, Span: l.opts.Span}
			}
			event.Files = append(event.Files, f.name)
			event.Through = f.when
		}
	}
	return event, nil
}
