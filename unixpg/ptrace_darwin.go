//go:build darwin

package unixpg

import "golang.org/x/sys/unix"

// ptraceDenyAttach makes the calling process refuse debuggers
// (PT_DENY_ATTACH).
func ptraceDenyAttach() error { return unix.PtraceDenyAttach() }
