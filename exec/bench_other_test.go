//go:build !linux

package exec

import "testing"

// confinedBenchConfig skips: write confinement is Linux-only.
func confinedBenchConfig(b *testing.B) ConfineConfig {
	b.Skip("write confinement is Linux-only")
	return ConfineConfig{}
}
