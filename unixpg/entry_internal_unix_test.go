//go:build unix

package unixpg

import (
	"errors"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/exec/procspec"
)

// TestStartNeedsExplicitEntry: a process whose main never called
// MaybeSupervise runs nothing (its binary would not become a supervisor),
// and the error says what to fix.
func TestStartNeedsExplicitEntry(t *testing.T) {
	entryCalled.Store(false)
	defer entryCalled.Store(true)
	p, err := Start(procspec.Spec{Path: "/bin/true", Args: []string{"true"}})
	if err == nil {
		p.Wait()
		t.Fatal("Start ran a command in a process that never called MaybeSupervise")
	}
	if !errors.Is(err, procspec.ErrContainment) || !strings.Contains(err.Error(), "MaybeSupervise") {
		t.Fatalf("error = %v; want one wrapping ErrContainment that names MaybeSupervise", err)
	}
}
