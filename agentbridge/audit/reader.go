package audit

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"strings"
	"time"

	"github.com/agentgate/agentgate/exec/atomicfile"
	"github.com/agentgate/agentgate/prefs"
)

// Order is the order in which Entries yields entries.
type Order int

// The orders.
const (
	OldestFirst Order = iota // audit.log.N … audit.log.1, audit.log, each top to bottom
	NewestFirst              // the reverse
)

// LineError reports a line that is not a valid entry (a torn write after a
// crash, a hand edit). Iteration goes on after it.
type LineError struct {
	// File is the file holding the line.
	File string
	// Line is the line's number, counting from 1.
	Line int
	// Err is the decoding error.
	Err error
}

// Error returns "file:line: audit entry unreadable: err".
func (e *LineError) Error() string {
	return fmt.Sprintf("%s:%d: audit entry unreadable: %v", e.File, e.Line, e.Err)
}

// Unwrap returns the decoding error.
func (e *LineError) Unwrap() error { return e.Err }

// Files returns the audit log files that exist for the active path, oldest
// first: the rotated ones (compressed or not, see listRotated), then the
// active file.
func Files(path string) ([]string, error) {
	rotatedFiles, err := listRotated(path)
	if err != nil {
		return nil, err
	}
	files := make([]string, 0, len(rotatedFiles)+1)
	for _, f := range rotatedFiles {
		files = append(files, f.name)
	}
	if _, err := os.Stat(path); err == nil {
		files = append(files, path)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("list the audit log files: %w", err)
	}
	return files, nil
}

// readLogFile returns the content of one audit log file, decompressed when
// it is a .gz file. A plain rotated file compressed since it was listed is
// read from its compressed copy.
func readLogFile(name string) ([]byte, error) {
	r, err := openLogFile(name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		return data, fmt.Errorf("read the audit log %s: %w", name, err)
	}
	return data, nil
}

// logReader reads one audit log file's lines, decompressed.
type logReader struct {
	io.Reader
	// f is the open file.
	f *os.File
	// gz is true when the file is compressed (Reader decompresses).
	gz bool
}

// Close closes the file.
func (r *logReader) Close() error { return r.f.Close() }

// openLogFile opens one audit log file for reading its lines: a .gz file
// through a gzip reader; a plain rotated file compressed since it was
// listed through its compressed copy. A missing file is os.ErrNotExist.
func openLogFile(name string) (*logReader, error) {
	f, err := atomicfile.Open(name)
	if errors.Is(err, os.ErrNotExist) && !strings.HasSuffix(name, gzSuffix) {
		name += gzSuffix
		f, err = atomicfile.Open(name)
	}
	if err != nil {
		return nil, err
	}
	if !strings.HasSuffix(name, gzSuffix) {
		return &logReader{Reader: f, f: f}, nil
	}
	zr, err := gzip.NewReader(bufio.NewReaderSize(f, 64<<10))
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("read the audit log %s: %w", name, err)
	}
	return &logReader{Reader: zr, f: f, gz: true}, nil
}

// Entries yields the entries of the audit log at path (the active file and
// its rotated predecessors, compressed or not) in the given order. A line that does not decode
// yields a zero Entry with a *LineError and iteration continues; the active
// file's last line is yielded once its newline is written (an entry being
// appended is not an unreadable one); a file that cannot be read yields its
// error and iteration stops. Each file is read
// whole when its turn comes, so memory is bounded by the rotation size. A
// rotation that happens while iterating may make an entry appear twice or
// not at all.
func Entries(path string, order Order) iter.Seq2[Entry, error] {
	return func(yield func(Entry, error) bool) {
		files, err := Files(path)
		if err != nil {
			yield(Entry{}, err)
			return
		}
		if order == NewestFirst {
			for l, r := 0, len(files)-1; l < r; l, r = l+1, r-1 {
				files[l], files[r] = files[r], files[l]
			}
		}
		for _, file := range files {
			data, err := readLogFile(file)
			if errors.Is(err, os.ErrNotExist) {
				continue // removed since listing
			}
			if err != nil {
				yield(Entry{}, fmt.Errorf("read the audit log: %w", err))
				return
			}
			lines := bytes.Split(data, []byte{'\n'})
			if file == path {
				// The active file's last line without its newline is an
				// entry still being appended (as Follow, deliver a line
				// once its newline is written); a torn write after a crash
				// is reported once the next entry ends it.
				lines = lines[:len(lines)-1]
			}
			for k := range lines {
				i := k
				if order == NewestFirst {
					i = len(lines) - 1 - k
				}
				if len(bytes.TrimSpace(lines[i])) == 0 {
					continue
				}
				var e Entry
				if err := json.Unmarshal(lines[i], &e); err != nil {
					if !yield(Entry{}, &LineError{File: file, Line: i + 1, Err: err}) {
						return
					}
					continue
				}
				if !yield(e, nil) {
					return
				}
			}
		}
	}
}

// PastCommands returns up to limit (≤ 0: all) proposed commands from the
// audit log, newest first, for the rule preview (prefs.PreviewRule): every
// proposal entry that carries an argv (hook requests that were one simple
// command included). Unreadable lines are skipped.
func PastCommands(path string, limit int) ([]prefs.PastCommand, error) {
	var past []prefs.PastCommand
	for e, err := range Entries(path, NewestFirst) {
		var lineErr *LineError
		if errors.As(err, &lineErr) {
			continue
		}
		if err != nil {
			return past, err
		}
		if e.Kind != KindProposal || len(e.Argv) == 0 {
			continue
		}
		past = append(past, prefs.PastCommand{Argv: e.Argv, Provider: e.Provider, Project: e.ProjectRoot, Time: e.Time})
		if limit > 0 && len(past) >= limit {
			break
		}
	}
	return past, nil
}

// FollowPoll is how often Follow looks for new entries.
const FollowPoll = 200 * time.Millisecond

// Follow calls fn for each entry appended to the audit log at path after the
// call (like tail -f), following rotation: when the active file is replaced,
// what remains in the old file is read and then the new file from its
// start (a file rotated in and out again between two polls, FollowPoll
// apart, is skipped). A line is delivered once its newline has been written. A line that
// does not decode is passed with a *LineError. Follow returns nil when fn
// returns false, ctx.Err() when ctx ends, or an error reading the file.
func Follow(ctx context.Context, path string, fn func(Entry, error) bool) error {
	f, err := atomicfile.Open(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("follow the audit log: %w", err)
	}
	if f != nil {
		if _, err := f.Seek(0, io.SeekEnd); err != nil {
			f.Close()
			return fmt.Errorf("follow the audit log: %w", err)
		}
	}
	defer func() {
		if f != nil {
			f.Close()
		}
	}()
	var partial []byte
	buf := make([]byte, 64<<10)
	line := 0
	ticker := time.NewTicker(FollowPoll)
	defer ticker.Stop()
	for {
		if f != nil {
			for {
				n, err := f.Read(buf)
				partial = append(partial, buf[:n]...)
				for {
					i := bytes.IndexByte(partial, '\n')
					if i < 0 {
						break
					}
					raw := partial[:i]
					line++
					if len(bytes.TrimSpace(raw)) > 0 {
						var e Entry
						var lerr error
						if err := json.Unmarshal(raw, &e); err != nil {
							lerr = &LineError{File: path, Line: line, Err: err}
						}
						if !fn(e, lerr) {
							return nil
						}
					}
					partial = partial[i+1:]
				}
				if err == io.EOF || n == 0 {
					break
				}
				if err != nil {
					return fmt.Errorf("follow the audit log: %w", err)
				}
			}
		}
		// Switch files when the path now names another file (rotated) and
		// the old one is drained.
		if pathInfo, err := os.Stat(path); err == nil {
			var same bool
			if f != nil {
				fdInfo, ferr := f.Stat()
				same = ferr == nil && os.SameFile(pathInfo, fdInfo)
			}
			if !same {
				nf, err := atomicfile.Open(path)
				if err == nil {
					if f != nil {
						f.Close()
					}
					f, partial, line = nf, partial[:0], 0
					continue
				}
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ticker.C:
		}
	}
}
