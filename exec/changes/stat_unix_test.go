//go:build unix

package changes

import (
	"crypto/sha256"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHashEntryWhileRewritten: a file rewritten while it is hashed never
// gets the new content's hash under the old stat (the first walk's lazy
// entries are hashed while the first run may already write them; a hash
// of the new content under the old stat hides the change). Bounded
// attempts, each racing one rewrite against one hash.
func TestHashEntryWhileRewritten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "edit")
	old := []byte("old content, long enough to be read in more than no time at all\n")
	oldHash := sha256.Sum256(old)
	for attempt := range 3000 {
		require.NoError(t, os.WriteFile(path, old, 0o644))
		e, err := lstatEntry(path)
		require.NoError(t, err)
		done := make(chan error, 1)
		go func() { done <- os.WriteFile(path, []byte("new\n"), 0o644) }()
		hashEntry(path, &e, 1<<20)
		require.NoError(t, <-done)
		if e.hashed {
			require.Equal(t, oldHash, e.hash, "attempt %d: the hash kept under the old stat is the old content's", attempt)
		}
	}
}
