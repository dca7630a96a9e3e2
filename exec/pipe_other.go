//go:build !linux

package exec

import "os"

// enlargePipe does nothing where pipe capacity cannot be set.
func enlargePipe(*os.File) {}

// newOutputPipe returns a pipe for one output stream: r is read by the
// host, w goes to the process.
func newOutputPipe() (r, w *os.File, err error) { return os.Pipe() }
