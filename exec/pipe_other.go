//go:build !linux

package exec

import (
	"io"
	"os"
)

// enlargePipe does nothing where pipe capacity cannot be set.
func enlargePipe(*os.File) {}

// newOutputPipe returns a pipe for one output stream: r is read by the
// host, w goes to the process.
func newOutputPipe() (r, w *os.File, err error) { return os.Pipe() }

// spliceChunk is unused where there is no splice.
const spliceChunk = 0

// spliceToFile is unavailable here: ok is always false and nothing moves.
func spliceToFile(io.Reader, *os.File, int64, int) (moved int, ok bool, err error) {
	return 0, false, nil
}
