//go:build linux && !amd64

package unixpg_test

import "errors"

// ptraceInjectSupported is false: injectClearSubreaper is written for amd64.
const ptraceInjectSupported = false

// injectClearSubreaper is not implemented on this architecture.
func injectClearSubreaper(int) error { return errors.New("not implemented on this architecture") }
