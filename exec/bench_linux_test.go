//go:build linux

package exec

import (
	"testing"

	"github.com/agentgate/agentgate/unixpg/shimbuild"
)

// confinedBenchConfig confines with the built shim and the default
// settings, or skips the benchmark.
func confinedBenchConfig(b *testing.B) ConfineConfig {
	shim, err := shimbuild.Path()
	if err != nil {
		b.Skip("no confinement shim:", err)
	}
	return ConfineConfig{Shim: shim}
}
