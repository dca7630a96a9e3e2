//go:build linux

package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentgate/agentgate/exec"
	"github.com/agentgate/agentgate/exec/changes/changestest"
)

// TestRunIn100kTreeReportsTheFileItCreated: `agentgate run` in a git work
// tree of 100,000 files (80,000 under a gitignored node_modules/) records a
// change summary that names exactly the one file the command created under
// node_modules/, and says it covered the whole project.
func TestRunIn100kTreeReportsTheFileItCreated(t *testing.T) {
	tree := changestest.Tree(t, true)
	name := "node_modules/pkg0042/lib1/created-by-agentgate-test.js"
	path := filepath.Join(tree, filepath.FromSlash(name))
	os.Remove(path) // left by a test that was killed
	t.Cleanup(func() { os.Remove(path) })

	s := newCLISandbox(t, "sh\n")
	s.project = tree
	code, _, stderr := runCLI(t, s, "run", "--", "sh", "-c", "echo created > "+name)
	if code != 0 {
		t.Fatalf("agentgate run: exit %d: %s", code, stderr)
	}
	recs, err := exec.ListRecords(s.paths.StateDir)
	if err != nil || len(recs) != 1 {
		t.Fatalf("records: %v, %v", recs, err)
	}
	ch := recs[0].Changes
	if recs[0].ChangesPending || ch == nil {
		t.Fatalf("the run record has no change summary: %+v", recs[0])
	}
	if len(ch.Created) != 1 || ch.Created[0] != name || len(ch.Modified) != 0 || len(ch.Deleted) != 0 || ch.Incomplete {
		t.Fatalf("changes = %+v, want exactly %s created", ch, name)
	}
	if ch.Cover == nil || ch.Cover.Entries < changestest.Files || len(ch.Cover.Skipped) != 0 {
		t.Fatalf("cover = %+v, want the whole project (at least %d entries)", ch.Cover, changestest.Files)
	}
}
