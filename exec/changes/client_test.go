package changes

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/gofrs/flock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// needKeeperProcess skips where hosts keep their own index (no keeper
// process).
func needKeeperProcess(t *testing.T) {
	if !keeperProcesses {
		t.Skip("the keeper runs in-process on " + runtime.GOOS)
	}
}

// gone reports whether no keeper answers for stateDir any more, waiting up
// to a while for it to go.
func gone(stateDir string) bool {
	for range 200 {
		c, err := dial(stateDir)
		if err != nil {
			return true
		}
		c.Close()
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

// TestClientStartsAndSharesTheKeeper: the first host starts the keeper
// process; two hosts (clients) share it and each gets its runs' summaries;
// the keeper ends when its state directory is removed.
func TestClientStartsAndSharesTheKeeper(t *testing.T) {
	needKeeperProcess(t)
	state := t.TempDir()
	exe, err := os.Executable()
	require.NoError(t, err)
	root := tree(t, map[string]string{"node_modules/p/index.js": "x", "src/a.js": "a"})

	a, closeA, err := Open(state, exe)
	require.NoError(t, err)
	defer closeA.Close()
	b, closeB, err := Open(state, exe)
	require.NoError(t, err)
	defer closeB.Close()

	ma := a.Begin(root, root)
	write(t, root, map[string]string{"node_modules/p/new.js": "n"})
	sa := ma.Finish()
	assert.Equal(t, want([]string{"node_modules/p/new.js"}, nil, nil), got(sa), sa.Reason)
	assert.True(t, sa.Cover.Watched)
	assert.Equal(t, 6, sa.Cover.Entries)

	mb := b.Begin(root, filepath.Join(root, "src"))
	write(t, root, map[string]string{"src/a.js": "edited"})
	sb := mb.Finish()
	assert.Equal(t, want(nil, []string{"a.js"}, nil), got(sb), sb.Reason)

	// A second run on a known project does not wait for the keeper's answer
	// at Begin, and is still summarised.
	mc := a.Begin(root, root)
	require.NoError(t, os.Remove(filepath.Join(root, "src", "a.js")))
	assert.Equal(t, want(nil, nil, []string{"src/a.js"}), got(mc.Finish()))

	require.NoError(t, os.RemoveAll(state))
	assert.True(t, gone(state), "the keeper must end once its state directory is gone")
}

// TestKeeperProcessEndsWhenIdle: with no host connected and nothing to do
// the keeper process ends after AGENTGATE_CHANGES_IDLE; a host then starts
// a new one, which reads the index its predecessor saved.
func TestKeeperProcessEndsWhenIdle(t *testing.T) {
	needKeeperProcess(t)
	t.Setenv("AGENTGATE_CHANGES_IDLE", "300ms")
	state := t.TempDir()
	exe, err := os.Executable()
	require.NoError(t, err)
	root := tree(t, map[string]string{"a": "a"})
	tr, closer, err := Open(state, exe)
	require.NoError(t, err)
	tr.Begin(root, root).Finish()
	closer.Close()
	assert.True(t, keeperEnded(state), "an idle keeper must end")
	_, err = os.Stat(filepath.Join(state, "changes"))
	require.NoError(t, err)

	tr, closer, err = Open(state, exe)
	require.NoError(t, err)
	m := tr.Begin(root, root)
	write(t, root, map[string]string{"b": "b"})
	s := m.Finish()
	assert.Equal(t, want([]string{"b"}, nil, nil), got(s), s.Reason)
	assert.False(t, s.Incomplete, s.Reason)
	closer.Close()
	// The second keeper saves its index as it ends; the test's temp dir is
	// removed only after that (CI once removed it under the keeper's write).
	assert.True(t, keeperEnded(state), "the second idle keeper must end")
}

// keeperEnded waits up to 10 s for the keeper of state to release its lock,
// which it does as its last act, and reports whether it did. It does not
// dial (a connection would keep the keeper).
func keeperEnded(state string) bool {
	lock := flock.New(filepath.Join(state, "changes", "keeper.lock"))
	for range 200 {
		if ok, _ := lock.TryLock(); ok {
			lock.Unlock()
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

// TestClientWithoutKeeper: when no keeper can be started, the run still
// runs and its summary says why it is missing.
func TestClientWithoutKeeper(t *testing.T) {
	needKeeperProcess(t)
	tr, closer, err := Open(t.TempDir(), filepath.Join(t.TempDir(), "no-such-agentgate"))
	require.NoError(t, err)
	defer closer.Close()
	s := tr.Begin("/", "/").Finish()
	assert.True(t, s.Incomplete)
	assert.Contains(t, s.Reason, "change keeper could not be reached")
}
