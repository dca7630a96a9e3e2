package exec

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// patternBytes returns n bytes of a deterministic pseudo-random pattern with
// every byte value, NULs and invalid UTF-8 included.
func patternBytes(n int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// chunkedReader returns at most n bytes per Read, to exercise partial reads.
type chunkedReader struct {
	r io.Reader
	n int
}

func (c chunkedReader) Read(p []byte) (int, error) { return c.r.Read(p[:min(len(p), c.n)]) }

// readAll reads a stream from cursor to its end through read.
func readAll(t *testing.T, s *retained, cursor int64, step int) ([]byte, bool) {
	t.Helper()
	var out []byte
	dropped := false
	for {
		c, err := s.read(cursor, step)
		require.NoError(t, err)
		dropped = dropped || c.Dropped
		out = append(out, c.Data...)
		if c.EOF {
			return out, dropped
		}
		require.Greater(t, c.Next, cursor, "progress")
		cursor = c.Next
	}
}

func TestRetainedWindow(t *testing.T) {
	cases := []struct {
		name     string
		memTail  int
		spillCap int64
		size     int
		chunk    int
	}{
		{"empty", 64, 256, 0, 7},
		{"fits in memory", 1024, 4096, 500, 13},
		{"fits in memory, too big for the record", 8192, 16384, inlineOutputMax + 1, 13},
		{"spills", 64, 4096, 3000, 13},
		{"wraps", 64, 1000, 5000, 13},
		{"wraps, big chunks", 100, 250, 10000, 4096},
		{"cap smaller than tail", 512, 100, 5000, 333},
	}
	for _, tc := range cases {
		for _, source := range pumpSources {
			t.Run(tc.name+"/"+source.name, func(t *testing.T) {
				data := patternBytes(tc.size)
				testRetainedWindow(t, tc.memTail, tc.spillCap, data, source.open(t, data, tc.chunk))
			})
		}
	}
}

// pumpSources are the kinds of stream a retained is pumped from: a plain
// reader, and an OS pipe as a run's output comes, which on Linux is moved
// into the spill file with splice once the stream spills.
var pumpSources = []struct {
	name string
	open func(t *testing.T, data []byte, chunk int) io.Reader
}{
	{"reader", func(_ *testing.T, data []byte, chunk int) io.Reader {
		return chunkedReader{bytes.NewReader(data), chunk}
	}},
	{"os pipe", osPipeOf},
}

// osPipeOf returns the read end of an output pipe (newOutputPipe) that a
// goroutine fills with data, chunk bytes per write, and then closes.
func osPipeOf(t *testing.T, data []byte, chunk int) io.Reader {
	r, w, err := newOutputPipe()
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	go writeChunks(w, data, chunk)
	return r
}

// writeChunks writes data to w, chunk bytes per write, until done or a
// write fails, and closes w.
func writeChunks(w io.WriteCloser, data []byte, chunk int) {
	defer w.Close()
	for off := 0; off < len(data); off += chunk {
		if _, err := w.Write(data[off:min(off+chunk, len(data))]); err != nil {
			return
		}
	}
}

// testRetainedWindow pumps data from src into a retained stream and checks
// what every reader of it gets.
func testRetainedWindow(t *testing.T, memTail int, spillCap int64, data []byte, src io.Reader) {
	size := len(data)
	s := newRetained(filepath.Join(t.TempDir(), "out"), memTail, spillCap)
	require.NoError(t, s.pump(src))
	// At most inlineOutputMax bytes that never spilled stay in
	// memory and go into the record, with no spill file.
	inline := size > 0 && size <= inlineOutputMax && size <= memTail
	total, dropped, done := s.stats()
	assert.Equal(t, int64(size), total)
	assert.True(t, done)
	oldest := max(0, int64(size)-spillCap)
	assert.Equal(t, oldest > 0, dropped)

	// Finished, then settled (everything in the file): reads agree.
	for _, settled := range []bool{false, true} {
		if settled {
			s.settle()
			s.mu.Lock()
			if inline {
				assert.True(t, bytes.Equal(data, s.tail), "a small settled stream keeps its bytes for the record")
			} else {
				assert.Nil(t, s.tail, "a settled stream holds no buffer")
			}
			assert.Nil(t, s.file, "a settled stream holds no descriptor")
			s.mu.Unlock()
		}
		// From 0: data from the oldest retained byte, Dropped iff any gone.
		got, gotDropped := readAll(t, s, 0, 97)
		assert.Equal(t, oldest > 0, gotDropped)
		assert.True(t, bytes.Equal(data[oldest:], got), "read from 0 (settled %v)", settled)

		// From the middle of the retained window.
		mid := oldest + (int64(size)-oldest)/2
		got, gotDropped = readAll(t, s, mid, 50)
		assert.False(t, gotDropped)
		assert.True(t, bytes.Equal(data[mid:], got), "read from the middle (settled %v)", settled)

		// Past the end.
		c, err := s.read(int64(size)+10, 10)
		require.NoError(t, err)
		assert.Empty(t, c.Data)
		assert.True(t, c.EOF)
	}

	// The record's copy or the spill-file reader used for other
	// hosts' records agrees.
	_, err := os.Stat(s.path)
	if inline {
		assert.True(t, bytes.Equal(data, s.inlined()), "the record carries a small stream")
		assert.ErrorIs(t, err, os.ErrNotExist, "a small stream makes no spill file")
		rec := Record{State: StateExited, StdoutBytes: int64(size), StdoutInline: s.inlined(), SpillCap: spillCap}
		for _, from := range []int64{0, int64(size) / 3} {
			c, err := ReadRecorded(rec, Stdout, from, 97)
			require.NoError(t, err)
			assert.Equal(t, data[from:min(int64(size), from+97)], c.Data)
			assert.Equal(t, from+97 >= int64(size), c.EOF)
		}
	} else if size > 0 {
		assert.Nil(t, s.inlined())
		c, err := readFinished(s.path, spillCap, int64(size), 0, size)
		require.NoError(t, err)
		assert.True(t, bytes.Equal(data[oldest:], c.Data))
		assert.Equal(t, oldest > 0, c.Dropped)
		assert.True(t, c.EOF)
	}
}

func TestRetainedNegativeCursor(t *testing.T) {
	s := newRetained(filepath.Join(t.TempDir(), "out"), 64, 64)
	_, err := s.read(-1, 10)
	assert.ErrorContains(t, err, "negative")
}

// TestRetainedConcurrentReaders reads a stream that wraps its ring while it
// is written, from four readers, through an in-process pipe and through an
// OS pipe (on Linux moved into the ring by splice): no reader sees a gap
// without Dropped, or a byte that is not the stream's.
func TestRetainedConcurrentReaders(t *testing.T) {
	data := patternBytes(3 << 20)
	sources := map[string]func() io.Reader{
		"io pipe": func() io.Reader {
			pr, pw := io.Pipe()
			go writeChunks(pw, data, 7000)
			return pr
		},
		"os pipe": func() io.Reader { return osPipeOf(t, data, 7000) },
	}
	for name, open := range sources {
		t.Run(name, func(t *testing.T) { testConcurrentReaders(t, data, open()) })
	}
}

// testConcurrentReaders pumps data from src while four readers follow it.
func testConcurrentReaders(t *testing.T, data []byte, src io.Reader) {
	const spillCap = 1 << 20
	s := newRetained(filepath.Join(t.TempDir(), "out"), 16<<10, spillCap)
	var wg sync.WaitGroup
	for reader := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cursor := int64(0)
			for {
				c, err := s.read(cursor, 1000+reader*5000)
				if !assert.NoError(t, err) {
					return
				}
				start := c.Next - int64(len(c.Data))
				if !c.Dropped && !assert.Equal(t, cursor, start, "no gap without Dropped") {
					return
				}
				if !assert.True(t, bytes.Equal(data[start:c.Next], c.Data), "bytes at %d", start) {
					return
				}
				if c.EOF {
					assert.Equal(t, int64(len(data)), c.Next)
					return
				}
				cursor = c.Next
			}
		}()
	}
	require.NoError(t, s.pump(src))
	wg.Wait()
}
