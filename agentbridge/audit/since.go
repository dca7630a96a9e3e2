package audit

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// Position is a place in the audit log, just after a complete line, that
// survives rotation: it names the file by a digest of its first line (every
// line holds a nanosecond time, so two files never share it) and counts the
// bytes of that file already read. A reader that keeps a Position reads
// only what was appended since (ReadSince). The zero Position is the start
// of the log.
type Position struct {
	// First is the hex SHA-256 of the first line of the file holding the
	// position; "" for the start of the log.
	First string `json:"first"`
	// Offset counts the bytes of that file up to and including the last
	// newline read.
	Offset int64 `json:"offset"`
}

// sinceChunk is ReadSince's read buffer; longer lines are gathered across
// reads.
const sinceChunk = 256 << 10

// ReadSince reads the audit log at path from pos: it calls fn, oldest
// first, with every entry after pos whose line contains match (all entries
// when match is empty; the test on the raw line lets a caller that wants a
// few entries skip decoding the rest), and returns the position after the
// last complete line. A line still being written (no newline yet) is left
// for the next call. Lines that do not decode are skipped.
//
// The file pos names is looked for among the log's files, newest first; its
// remainder is read, then every newer file. When it is no longer there (it
// was rotated away, or the log was replaced) or pos is the zero Position,
// the whole log is read from its oldest file and reset is true: the caller
// must forget what it gathered from earlier calls. On an error reading a
// file, the position returned is pos and reset is false.
func ReadSince(path string, pos Position, match []byte, fn func(Entry)) (next Position, reset bool, err error) {
	files, err := Files(path)
	if err != nil {
		return pos, false, err
	}
	start, offset := -1, int64(0)
	if pos.First != "" {
		for i := len(files) - 1; i >= 0; i-- {
			first, err := firstLineDigest(files[i])
			if err != nil {
				return pos, false, err
			}
			if first == pos.First {
				start, offset = i, pos.Offset
				break
			}
		}
	}
	if start < 0 {
		start, offset, reset = 0, 0, true
	}
	next = pos
	if reset {
		next = Position{}
	}
	want := ""
	if !reset {
		want = pos.First
	}
	for i := start; i < len(files); i++ {
		end, first, err := readLinesFrom(files[i], want, offset, match, fn)
		if errors.Is(err, errMoved) {
			// Rotated between listing and reading (nothing was passed to
			// fn yet): start over from the whole log.
			return ReadSince(path, Position{}, match, fn)
		}
		if err != nil {
			return pos, false, err
		}
		if end > 0 {
			next = Position{First: first, Offset: end}
		}
		want, offset = "", 0
	}
	return next, reset, nil
}

// errMoved says the file at a position's name is no longer the file the
// position is in.
var errMoved = errors.New("the audit log file was rotated while being read")

// firstLineDigest returns the hex SHA-256 of the first line of file ("" for
// an empty file, one with no complete line yet, or one rotated away).
func firstLineDigest(file string) (string, error) {
	r, err := openLogFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read the audit log: %w", err)
	}
	defer r.Close()
	return digestFirstLine(r), nil
}

// digestFirstLine returns the hex SHA-256 of the first line r holds ("" when
// it holds no complete line).
func digestFirstLine(r io.Reader) string {
	br := bufio.NewReaderSize(r, 4096)
	h := sha256.New()
	for {
		part, err := br.ReadSlice('\n')
		h.Write(part)
		switch {
		case err == nil:
			return hex.EncodeToString(h.Sum(nil))
		case err != bufio.ErrBufferFull:
			return ""
		}
	}
}

// readLinesFrom reads file from offset and calls fn for every complete
// line containing match that decodes. It returns the offset just after the
// last newline (offset itself when there was none) and the digest of the
// file's first line. When want is not "" the file must be the one whose
// first line has that digest and be at least offset bytes long, else
// nothing is read and the error is errMoved.
func readLinesFrom(file, want string, offset int64, match []byte, fn func(Entry)) (end int64, first string, err error) {
	lf, err := openLogFile(file)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return 0, "", fmt.Errorf("read the audit log: %w", err)
	}
	if err != nil { // removed since listing
		if want != "" {
			return 0, "", errMoved
		}
		return 0, "", nil
	}
	defer lf.Close()
	var src io.Reader
	if lf.gz {
		// Compressed (an older file): positions count decompressed bytes,
		// so the first line is read and the rest up to offset skipped.
		br := bufio.NewReaderSize(lf, sinceChunk)
		head, err := br.Peek(sinceChunk)
		if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
			return 0, "", fmt.Errorf("read the audit log: %w", err)
		}
		first = digestFirstLine(bytes.NewReader(head))
		if want != "" && first != want {
			return 0, "", errMoved
		}
		if n, _ := io.CopyN(io.Discard, br, offset); n < offset {
			return 0, "", errMoved
		}
		src = br
	} else {
		info, err := lf.f.Stat()
		if err != nil {
			return 0, "", fmt.Errorf("read the audit log: %w", err)
		}
		first = digestFirstLine(io.NewSectionReader(lf.f, 0, info.Size()))
		if want != "" && (first != want || info.Size() < offset) {
			return 0, "", errMoved
		}
		if _, err := lf.f.Seek(offset, io.SeekStart); err != nil {
			return 0, "", fmt.Errorf("read the audit log: %w", err)
		}
		src = lf.f
	}
	end = offset
	r := bufio.NewReaderSize(src, sinceChunk)
	var long []byte // a line longer than the buffer, gathered
	for {
		line, err := r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long, line...)
			continue
		}
		if err == io.EOF {
			return end, first, nil // an unfinished line waits for the next call
		}
		if err != nil {
			return 0, "", fmt.Errorf("read the audit log: %w", err)
		}
		if long != nil {
			line, long = append(long, line...), nil
		}
		end += int64(len(line))
		if len(match) == 0 || bytes.Contains(line, match) {
			var e Entry
			if json.Unmarshal(line, &e) == nil {
				fn(e)
			}
		}
	}
}
