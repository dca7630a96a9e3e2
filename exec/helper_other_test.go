//go:build !linux

package exec

import "errors"

// ptraceAttach is not implemented off Linux.
func ptraceAttach(int) error { return errors.New("ptrace helper: Linux only") }
