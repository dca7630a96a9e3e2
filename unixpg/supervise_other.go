//go:build !unix

package unixpg

// MaybeSupervise does nothing on this platform: unixpg runs no supervisor
// here (Windows uses package winjob). It exists so that a main package can
// call it unconditionally.
func MaybeSupervise() {}
