//go:build unix && !linux

package unixpg_test

// runHelperMode returns at once: the ptrace helpers are Linux-only.
func runHelperMode() {}
