//go:build !linux

package cli

import "io"

// flushTerminalInput does nothing here: outside Linux, typed-ahead lines
// are still skipped by time (terminalApprover.ask), but not removed from the terminal.
func flushTerminalInput(io.Reader) {}
