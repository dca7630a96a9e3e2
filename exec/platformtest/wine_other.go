//go:build !windows

package platformtest

// underWine is false: Wine runs Windows programs only.
const underWine = false
