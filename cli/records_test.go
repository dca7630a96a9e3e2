package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/agentbridge/audit"
	"github.com/agentgate/agentgate/exec/runinfo"
)

// TestLogLineShowsConfinement: `agentgate log` shows a one-time approval
// without write confinement, the confinement a run started with, and the
// files that steer agents and tools a run changed.
func TestLogLineShowsConfinement(t *testing.T) {
	exit := 0
	for _, c := range []struct {
		entry audit.Entry
		want  string
	}{
		{audit.Entry{Kind: audit.KindDecision, RunID: "r1", Decision: audit.DecisionApproved, By: "card", WithoutWriteConfinement: true},
			" → approved by card without write confinement"},
		{audit.Entry{Kind: audit.KindRunStart, RunID: "r1", Argv: []string{"make"},
			Confinement: &runinfo.Confinement{Writes: []string{"project", "temp", "cache"}, Network: "none", NetworkBy: "namespace"}},
			" make (writes: project, temp, cache; network: none)"},
		{audit.Entry{Kind: audit.KindRunEnd, RunID: "r1", State: "exited", ExitCode: &exit, ProtectedChanged: []string{"changed .git/config", "created .mcp.json"}},
			" state=exited exit=0 ⚠ files that steer agents and tools changed: changed .git/config, created .mcp.json"},
	} {
		var out bytes.Buffer
		c.entry.Time = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
		printEntry(env{stdout: &out}, c.entry, false)
		if !strings.HasSuffix(strings.TrimSuffix(out.String(), "\n"), c.want) {
			t.Errorf("%s line %q, want it to end with %q", c.entry.Kind, out.String(), c.want)
		}
	}
}
