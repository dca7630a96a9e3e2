//go:build linux

package exec

import "golang.org/x/sys/unix"

// ptraceAttach attaches to pid with ptrace (and stays attached until this
// process exits).
func ptraceAttach(pid int) error { return unix.PtraceAttach(pid) }
