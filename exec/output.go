package exec

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/agentgate/agentgate/exec/atomicfile"
)

// firstTailSize is the size of a stream's in-memory tail when it is first
// allocated (at the pump's first read, output or not); it doubles up to
// the configured MemTail, so a run printing a line, or nothing, costs 4 KiB
// per stream rather than a full MemTail (or, at 32 KiB, two thirds of all
// the bytes a run of `true` allocated, and the garbage collections they
// brought).
const firstTailSize = 4 << 10

// retained holds one output stream of a run with flat memory: the newest
// bytes in an in-memory tail, older ones in a spill file used as a ring of
// spillCap bytes (logical offset o lives at file position o % spillCap).
// Retained are the logical bytes [fileStart, total): [fileStart, memStart)
// in the file and [memStart, total) in the tail. Bytes before fileStart were
// dropped.
//
// One goroutine (pump) writes; any number read. The spill file is created
// on first spill; after settle (shortly after finish, off the run's path)
// all bytes are in the file, the tail is freed and the file is closed
// (reads reopen it), so finished runs hold no descriptors and no buffers —
// except a stream of at most inlineOutputMax bytes that never spilled,
// which keeps them in memory and in the run's record, with no file.
type retained struct {
	// path is the spill file's path.
	path string
	// memTail is the largest size of the in-memory tail.
	memTail int
	// spillCap is the size of the spill file's ring, in bytes.
	spillCap int64

	// mu guards every field below, and tail[:len(tail)].
	mu sync.Mutex
	// tail holds the logical bytes [memStart, total); the pump reads into
	// tail[len(tail):cap(tail)] without the lock, which readers never touch.
	tail []byte
	// file is the open spill file, nil before the first spill and after
	// finish.
	file *os.File
	// fileStart, memStart and total are logical offsets (see the type doc).
	fileStart, memStart, total int64
	// done is set once the stream has ended and everything is in the file.
	done bool
	// err is the first error writing the spill file; the stream keeps
	// counting bytes but retains no more.
	err error
	// inline is set when the stream was settled without a spill file: it
	// ended with at most inlineOutputMax bytes, never spilled, and tail
	// holds them all for good (never written again), for the run's record
	// to carry (Record.StdoutInline).
	inline bool
}

// inlineOutputMax is the largest finished stream kept in the run's record
// instead of a spill file. Most commands an agent runs print a few lines;
// a spill file per stream was an inode allocation each, which on ext4 with
// many recently deleted files costs a millisecond of kernel time, taken
// just when the agent's next command starts. A finished run so keeps at
// most this many bytes per stream in memory while its host holds it.
const inlineOutputMax = 4 << 10

// newRetained returns an empty stream spilling to path.
func newRetained(path string, memTail int, spillCap int64) *retained {
	return &retained{path: path, memTail: memTail, spillCap: spillCap}
}

// pump reads src until EOF or an error, retaining what it reads. It returns
// nil at EOF and at a read deadline (the bounded drain after the process
// tree ended) and the read error otherwise; either way the stream is
// finished when it returns.
//
// Once the stream has spilled (it outgrew the in-memory tail) and where the
// platform allows, the rest moves from the pipe into the spill file in the
// kernel (spliceToFile), one copy instead of two; the tail then stays
// empty. A write that wraps the ring first moves fileStart past the bytes
// it may overwrite, as spillLocked does; when it moves fewer, up to that
// many of the oldest retained bytes read as dropped until the stream ends.
func (s *retained) pump(src io.Reader) error {
	var readErr error
	canSplice, spliced := spliceChunk > 0, false
	for {
		s.mu.Lock()
		if canSplice && s.file != nil && s.err == nil && len(s.tail) == 0 {
			done, served, err := s.spliceLocked(src)
			canSplice, spliced = served, spliced || served
			if done {
				readErr = err
				break
			}
			continue
		}
		if len(s.tail) == cap(s.tail) {
			s.makeRoomLocked()
		}
		buf := s.tail[len(s.tail):cap(s.tail)]
		s.mu.Unlock()
		n, err := src.Read(buf)
		if n > 0 {
			s.mu.Lock()
			s.tail = s.tail[:len(s.tail)+n]
			s.total += int64(n)
			s.mu.Unlock()
		}
		if err != nil {
			readErr = endOfStream(err)
			break
		}
	}
	if spliced {
		s.mu.Lock()
		if s.err == nil && len(s.tail) == 0 {
			// Nothing is written any more: the ring holds exactly the newest
			// spillCap bytes, whatever a short splice reserved.
			s.fileStart = max(0, s.total-s.spillCap)
		}
		s.mu.Unlock()
	}
	s.finish()
	return readErr
}

// endOfStream returns nil for the errors that end a stream normally (end of
// file, the drain's read deadline, the pipe closed) and err otherwise.
func endOfStream(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, os.ErrClosed) {
		return nil
	}
	return err
}

// spliceLocked moves the next bytes from src into the spill file's ring
// with spliceToFile, at most to the ring's end. Called with mu held; it
// returns with mu released. done reports that the stream ended (end of
// file, or err, a read error); served is false, with nothing moved,
// when splice cannot serve the stream. A write error is kept in s.err like
// spillLocked's, and the stream goes on counting through Read.
func (s *retained) spliceLocked(src io.Reader) (done, served bool, err error) {
	pos := s.total % s.spillCap
	n := min(int64(spliceChunk), s.spillCap-pos)
	before := s.fileStart
	s.fileStart = max(s.fileStart, s.total+n-s.spillCap)
	f := s.file
	s.mu.Unlock()
	moved, ok, err := spliceToFile(src, f, pos, int(n))
	s.mu.Lock()
	defer s.mu.Unlock()
	if !ok {
		s.fileStart = before // nothing was written
		return false, false, nil
	}
	s.total += int64(moved)
	s.memStart = s.total
	switch {
	case err == nil:
		return moved == 0, true, nil
	case endOfStream(err) == nil:
		return true, true, nil
	default:
		// splice reports the pipe's errors and the file's alike; keep it as
		// the file's, as a write error: reading on through Read meets a
		// read error again and ends the stream with it.
		s.err = fmt.Errorf("writing output spill file %s: %w", f.Name(), err)
		s.fileStart = s.memStart
		return false, true, nil
	}
}

// makeRoomLocked grows the tail up to memTail, or spills it to the file and
// empties it. Called with mu held.
func (s *retained) makeRoomLocked() {
	if cap(s.tail) < s.memTail {
		size := min(max(2*cap(s.tail), firstTailSize), s.memTail)
		grown := make([]byte, len(s.tail), size)
		copy(grown, s.tail)
		s.tail = grown
		return
	}
	s.spillLocked()
}

// spillLocked writes the tail to the ring file and empties it. On a file
// error the tail's bytes are dropped and the error kept. Called with mu
// held: readers of the file check fileStart after reading, so moving it
// before the write makes them discard anything this write overwrites.
func (s *retained) spillLocked() {
	data := s.tail
	s.tail = s.tail[:0]
	s.memStart += int64(len(data))
	if s.err != nil || len(data) == 0 {
		s.fileStart = max(s.fileStart, s.memStart-s.spillCap)
		if s.err != nil {
			s.fileStart = s.memStart
		}
		return
	}
	if s.file == nil {
		f, err := os.OpenFile(s.path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			s.err = err
			s.fileStart = s.memStart
			return
		}
		s.file = f
	}
	start := s.memStart - int64(len(data))
	if int64(len(data)) > s.spillCap {
		data = data[int64(len(data))-s.spillCap:]
		start = s.memStart - s.spillCap
	}
	s.fileStart = max(s.fileStart, s.memStart-s.spillCap)
	if err := writeRing(s.file, s.spillCap, start, data); err != nil {
		s.err = err
		s.fileStart = s.memStart
	}
}

// writeRing writes data, whose first byte has logical offset start, into a
// ring file of ringSize bytes, wrapping at the end.
func writeRing(f *os.File, ringSize, start int64, data []byte) error {
	for len(data) > 0 {
		pos := start % ringSize
		n := min(int64(len(data)), ringSize-pos)
		if _, err := f.WriteAt(data[:n], pos); err != nil {
			return fmt.Errorf("writing output spill file %s: %w", f.Name(), err)
		}
		data = data[n:]
		start += n
	}
	return nil
}

// finish marks the stream complete. A stream that has a spill file writes
// the rest of its tail there and closes it: from now on it is read from the
// file alone. A stream that never spilled keeps its bytes in memory, copied
// to their exact size, until settle: creating the file (and the run's
// output directory) costs two inode allocations, which on some file systems
// take hundreds of microseconds of kernel time, and a run's end should not
// wait for them. The persister settles a run's streams before it writes the
// run's record (see persister.loop).
func (s *retained) finish() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return
	}
	s.done = true
	if s.file == nil && s.err == nil {
		if len(s.tail) == 0 {
			s.tail = nil
		} else {
			s.tail = append([]byte(nil), s.tail...)
		}
		return
	}
	s.settleLocked()
}

// settle writes what a finished stream still holds in memory to its spill
// file, frees it and closes the file, so that a finished run holds no
// buffer or descriptor for its output and the file its record names is
// complete. It does nothing while the stream is being written or once it
// is settled. Called with mu not held.
func (s *retained) settle() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		s.settleLocked()
	}
}

// settleLocked is settle with mu held. A stream that never spilled and
// holds at most inlineOutputMax bytes keeps them in memory instead of
// making its spill file (retained.inline).
func (s *retained) settleLocked() {
	if s.done && s.file == nil && s.err == nil && s.memStart == 0 && len(s.tail) <= inlineOutputMax {
		s.inline = len(s.tail) > 0
		return
	}
	if len(s.tail) > 0 {
		s.spillLocked()
	}
	s.tail = nil
	if s.file != nil {
		if err := s.file.Close(); err != nil && s.err == nil {
			s.err = err
		}
		s.file = nil
	}
}

// inlined returns the whole stream when it was settled without a spill
// file (retained.inline), else nil. The slice is never written again.
func (s *retained) inlined() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.inline {
		return nil
	}
	return s.tail
}

// stats returns the stream's total length, whether bytes were dropped, and
// whether it has ended.
func (s *retained) stats() (total int64, dropped, done bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total, s.fileStart > 0, s.done
}

// read returns up to max bytes from cursor. A cursor before the oldest
// retained byte yields data from that byte with Dropped set; a cursor at or
// past the end yields no data (and EOF once the stream ended). max <= 0
// means 64 KiB.
func (s *retained) read(cursor int64, maxBytes int) (Chunk, error) {
	if cursor < 0 {
		return Chunk{}, fmt.Errorf("cursor %d is negative; start at 0", cursor)
	}
	if maxBytes <= 0 {
		maxBytes = 64 << 10
	}
	s.mu.Lock()
	fileStart, memStart, total, done := s.fileStart, s.memStart, s.total, s.done
	var c Chunk
	if cursor < fileStart {
		cursor = fileStart
		c.Dropped = true
	}
	if cursor >= total {
		s.mu.Unlock()
		c.Next = max(cursor, total)
		c.EOF = done
		return c, nil
	}
	end := min(total, cursor+int64(maxBytes))
	if cursor >= memStart {
		c.Data = append([]byte(nil), s.tail[cursor-memStart:end-memStart]...)
		s.mu.Unlock()
		c.Next = end
		c.EOF = done && end == total
		return c, nil
	}
	s.mu.Unlock()
	// The file part: read without the lock, then check that the writer did
	// not move past what was read.
	end = min(end, memStart)
	data, err := readRingFile(s.path, s.spillCap, cursor, end)
	if err != nil {
		return Chunk{}, err
	}
	s.mu.Lock()
	nowStart := s.fileStart
	s.mu.Unlock()
	if nowStart > cursor {
		skip := min(nowStart-cursor, int64(len(data)))
		data = data[skip:]
		cursor += skip
		c.Dropped = true
	}
	c.Data = data
	c.Next = cursor + int64(len(data))
	c.EOF = done && c.Next == total
	return c, nil
}

// readRingFile reads logical bytes [from, to) from the ring file at path of
// ringSize bytes.
func readRingFile(path string, ringSize, from, to int64) ([]byte, error) {
	f, err := atomicfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading retained output %s: %w", path, err)
	}
	defer f.Close()
	data := make([]byte, to-from)
	for off := int64(0); off < int64(len(data)); {
		pos := (from + off) % ringSize
		n := min(int64(len(data))-off, ringSize-pos)
		if _, err := f.ReadAt(data[off:off+n], pos); err != nil {
			return nil, fmt.Errorf("reading retained output %s at %d: %w", path, pos, err)
		}
		off += n
	}
	return data, nil
}

// readFinished reads a finished stream from its spill file alone, given the
// facts a run record keeps: total length and ring size. It serves records
// of runs hosted by other processes.
func readFinished(path string, ringSize, total, cursor int64, maxBytes int) (Chunk, error) {
	return readEnded(ringSize, total, cursor, maxBytes, func(from, to int64) ([]byte, error) {
		return readRingFile(path, ringSize, from, to)
	})
}

// readEnded reads up to maxBytes (64 KiB when <= 0) from cursor of an ended
// stream of total bytes of which the last ringSize are retained, getting
// the logical bytes [from, to) from read.
func readEnded(ringSize, total, cursor int64, maxBytes int, read func(from, to int64) ([]byte, error)) (Chunk, error) {
	if cursor < 0 {
		return Chunk{}, fmt.Errorf("cursor %d is negative; start at 0", cursor)
	}
	if maxBytes <= 0 {
		maxBytes = 64 << 10
	}
	var c Chunk
	oldest := max(0, total-ringSize)
	if cursor < oldest {
		cursor = oldest
		c.Dropped = true
	}
	if cursor >= total {
		return Chunk{Next: max(cursor, total), Dropped: c.Dropped, EOF: true}, nil
	}
	end := min(total, cursor+int64(maxBytes))
	data, err := read(cursor, end)
	if err != nil {
		return Chunk{}, err
	}
	c.Data, c.Next, c.EOF = data, end, end == total
	return c, nil
}
