//go:build unix && !linux && !darwin

package unixpg

// ptraceDenyAttach does nothing: only macOS has PT_DENY_ATTACH.
func ptraceDenyAttach() error { return nil }
