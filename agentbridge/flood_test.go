package agentbridge_test

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/agentgate/agentgate/agentbridge/audit"
	"github.com/agentgate/agentgate/agentbridge/bridgetest"
	"github.com/agentgate/agentgate/agentbridge/client"
	"github.com/agentgate/agentgate/agentbridge/wire"
	"github.com/agentgate/agentgate/prefs"
)

// TestAuditFloodKeepsHistory is the flood of issue #13: agents send
// hundreds of proposals, each carrying a huge argv, that are all refused. Before, 420 of them pushed every earlier entry out of the
// audit log and all its kept copies. Now every entry is bounded and
// repeated refusals are coalesced: the earlier entries stay, the log stays
// small, and every refusal is still accounted for (the counts add up).
func TestAuditFloodKeepsHistory(t *testing.T) {
	b := bridgetest.Start(t, bridgetest.Options{NoApprover: true, Settings: func(s *prefs.Settings) {
		// The smallest cap the settings allow: a flood of unbounded
		// entries would fill it eight times over.
		s.AuditMaxBytes, s.AuditMaxTotalBytes = 1<<20, 8<<20
	}})
	b.Allow(t, "true")
	ctx := ctxT(t)
	early := b.Session(t, "")
	marker, err := early.Propose(ctx, wire.ProposeParams{Argv: []string{"true", "before-the-flood"}})
	if err != nil {
		t.Fatal(err)
	}

	// 200 refused proposals of 256 KiB each: 50 MiB, six times the cap.
	const agents, each, size = 4, 50, 256 << 10
	huge := strings.Repeat("A", size)
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[string]int{}
	for range agents {
		c := b.Session(t, "")
		wg.Add(1)
		go func() {
			defer wg.Done()
			var inner sync.WaitGroup
			for i := range each {
				inner.Add(1)
				go func() {
					defer inner.Done()
					argv := []string{"no-such-program-xyz", huge}
					if i%2 == 1 {
						argv[0] = "ls" // found, but nobody can be asked: no_approver
					}
					_, err := c.Propose(context.Background(), wire.ProposeParams{Argv: argv})
					mu.Lock()
					codes[refusalCodeOf(err)]++
					mu.Unlock()
				}()
			}
			inner.Wait()
		}()
	}
	wg.Wait()
	if codes["executable_not_found"]+codes[wire.RefuseNoApprover] != agents*each {
		t.Fatalf("refusals by code: %v; want %d refused", codes, agents*each)
	}

	entries := b.AuditEntries(t)
	found, refusals, refusalEntries := false, 0, 0
	for _, e := range entries {
		if e.RunID == marker.RunID && e.Kind == audit.KindProposal {
			found = true
		}
		if e.Kind == audit.KindRefusal {
			refusalEntries++
			refusals += max(e.Count, 1)
			if len(e.Argv) > 0 && e.ArgvSHA256 == "" {
				t.Fatalf("a huge argv was logged without abbreviation (%d bytes)", audit.ArgvSize(e.Argv))
			}
		}
	}
	if !found {
		t.Fatal("the flood pushed the entry from before it out of the audit log")
	}
	if refusals != agents*each {
		t.Fatalf("the refusal entries account for %d refusals, want %d", refusals, agents*each)
	}
	files, _ := audit.Files(b.AuditPath)
	var total int64
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil {
			total += fi.Size()
		}
	}
	t.Logf("%d refused proposals (%d MiB of argv) took %d audit entries, %d KiB in %d file(s)", agents*each, agents*each*size>>20, refusalEntries, total>>10, len(files))
	// Each entry is bounded (about 4 KiB of argv), and a burst of refusals
	// costs one entry a second: at most a few KiB per refused proposal,
	// however large, and far less when they come fast.
	if perProposal := total / (agents * each); perProposal > 6<<10 {
		t.Fatalf("the flood grew the audit log by %d bytes per refused proposal (%d in all)", perProposal, total)
	}
}

// refusalCodeOf returns a bridge refusal's code, "accepted" for none.
func refusalCodeOf(err error) string {
	if err == nil {
		return "accepted"
	}
	return client.Code(err)
}

// TestRepeatedRefusalsCoalesced: the first refusal of a burst is audited
// alone, with its proposal; the ones that follow within RefusalWindow are
// audited as one entry with their count, written before any of them is
// answered.
func TestRepeatedRefusalsCoalesced(t *testing.T) {
	b := bridgetest.Start(t, bridgetest.Options{NoApprover: true})
	c := b.Session(t, "")
	ctx := ctxT(t)
	if _, err := c.Propose(ctx, wire.ProposeParams{Argv: []string{"no-such-program-xyz", "first"}}); refusalCode(t, err) != "executable_not_found" {
		t.Fatalf("first: %v", err)
	}
	if got := len(b.AuditEntries(t)); got != 2 {
		t.Fatalf("after the first refusal the log holds %d entries, want its proposal and refusal", got)
	}
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := c.Propose(ctx, wire.ProposeParams{Argv: []string{"no-such-program-xyz", strings.Repeat("n", i+1)}})
			if client.Code(err) != "executable_not_found" {
				t.Errorf("repeat %d: %v", i, err)
				return
			}
			// Answered only once the coalesced entry is written.
			for _, e := range b.AuditEntries(t) {
				if e.Count > 0 {
					return
				}
			}
			t.Errorf("repeat %d was answered before its refusal was audited", i)
		}()
	}
	wg.Wait()
	entries := b.AuditEntries(t)
	counted := 0
	for _, e := range entries[2:] {
		if e.Kind != audit.KindRefusal || e.Count == 0 || e.Since.IsZero() || e.ArgvSHA256 == "" || e.Code != "executable_not_found" {
			t.Fatalf("not a coalesced refusal: %+v", e)
		}
		counted += e.Count
	}
	if counted != 3 || len(entries) > 4 {
		t.Fatalf("%d entries after the first two, counting %d refusals; want 3 refusals in one or two entries", len(entries)-2, counted)
	}
}
