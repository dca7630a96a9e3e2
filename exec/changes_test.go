package exec

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDiffSnapshots(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	file := func(size int64, mod time.Time, hash string) fileState {
		return fileState{Size: size, ModTime: mod, Hash: hash}
	}
	dir := fileState{Kind: os.ModeDir, ModTime: t0}
	snap := func(complete bool, files map[string]fileState) snapshot {
		return snapshot{files: files, complete: complete, reason: "stopped after 2 files"}
	}
	lim := ChangeLimits{MaxListed: 2}.withDefaults()
	cases := []struct {
		name                       string
		before, after              snapshot
		created, modified, deleted []string
		incomplete                 string
	}{
		{"nothing", snap(true, map[string]fileState{"a": file(1, t0, "h")}), snap(true, map[string]fileState{"a": file(1, t0, "h")}), nil, nil, nil, ""},
		{"same hash, new mtime (touch)", snap(true, map[string]fileState{"a": file(1, t0, "h")}), snap(true, map[string]fileState{"a": file(1, t0.Add(time.Second), "h")}), nil, nil, nil, ""},
		{"hash differs, same size and mtime", snap(true, map[string]fileState{"a": file(1, t0, "h1")}), snap(true, map[string]fileState{"a": file(1, t0, "h2")}), nil, []string{"a"}, nil, ""},
		{"unhashed, size differs", snap(true, map[string]fileState{"big": file(1, t0, "")}), snap(true, map[string]fileState{"big": file(2, t0, "")}), nil, []string{"big"}, nil, ""},
		{"unhashed, mtime differs", snap(true, map[string]fileState{"big": file(1, t0, "")}), snap(true, map[string]fileState{"big": file(1, t0.Add(1), "")}), nil, []string{"big"}, nil, ""},
		{"file became dir", snap(true, map[string]fileState{"x": file(1, t0, "h")}), snap(true, map[string]fileState{"x": dir}), nil, []string{"x/"}, nil, ""},
		{"dir mtime ignored", snap(true, map[string]fileState{"d": dir}), snap(true, map[string]fileState{"d": {Kind: os.ModeDir, ModTime: t0.Add(5)}}), nil, nil, nil, ""},
		{"created and deleted", snap(true, map[string]fileState{"old": file(1, t0, "h"), "od": dir}), snap(true, map[string]fileState{"new": file(1, t0, "h"), "nd": dir}), []string{"nd/", "new"}, nil, []string{"od/", "old"}, ""},
		{"before incomplete: no created", snap(false, map[string]fileState{"a": file(1, t0, "h")}), snap(true, map[string]fileState{"a": file(1, t0, "h2"), "b": file(1, t0, "h")}), nil, []string{"a"}, nil, "before the run: stopped after 2 files"},
		{"after incomplete: no deleted", snap(true, map[string]fileState{"a": file(1, t0, "h"), "b": file(1, t0, "h")}), snap(false, map[string]fileState{"a": file(1, t0, "h"), "c": file(1, t0, "h")}), []string{"c"}, nil, nil, "after the run: stopped after 2 files"},
		{"list capped", snap(true, map[string]fileState{}), snap(true, map[string]fileState{"a": file(1, t0, ""), "b": file(1, t0, ""), "c": file(1, t0, "")}), []string{"a", "b"}, nil, nil, "more than 2 entries in one list"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cs := diffSnapshots(tc.before, tc.after, lim, "m")
			assert.Equal(t, orEmpty(tc.created), cs.Created)
			assert.Equal(t, orEmpty(tc.modified), cs.Modified)
			assert.Equal(t, orEmpty(tc.deleted), cs.Deleted)
			assert.Equal(t, tc.incomplete != "", cs.Incomplete)
			assert.Equal(t, tc.incomplete, cs.Reason)
			assert.Equal(t, "m", cs.Method)
		})
	}
}

// orEmpty turns nil into an empty list, as summaries never hold nil lists.
func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func TestTakeSnapshotBounds(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{"a", "b", "c", "d"} {
		require.NoError(t, os.WriteFile(filepath.Join(root, name), []byte(name), 0o644))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".git", "objects"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, ".git", "objects", "x"), nil, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "large"), make([]byte, 100), 0o644))

	s := takeSnapshot(root, ChangeLimits{MaxHashSize: 10}.withDefaults())
	assert.True(t, s.complete)
	assert.Contains(t, s.files, ".git", "the .git directory itself is listed")
	assert.NotContains(t, s.files, ".git/objects", "its content is skipped")
	assert.Len(t, s.files, 6)
	if runtime.GOOS != "windows" {
		assert.NotEmpty(t, s.files["a"].Hash)
		assert.Empty(t, s.files["large"].Hash, "larger than MaxHashSize: size and mtime only")
	}

	s = takeSnapshot(root, ChangeLimits{MaxFiles: 3}.withDefaults())
	assert.False(t, s.complete)
	assert.Equal(t, "stopped after 3 files", s.reason)
	assert.Len(t, s.files, 3)

	s = takeSnapshot(root, ChangeLimits{MaxDuration: time.Nanosecond}.withDefaults())
	assert.False(t, s.complete)
	assert.True(t, strings.HasPrefix(s.reason, "stopped after"), s.reason)

	s = takeSnapshot(filepath.Join(root, "missing"), ChangeLimits{}.withDefaults())
	assert.False(t, s.complete)
	assert.Contains(t, s.reason, "could not read")
}

func TestTakeSnapshotSymlinks(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks")
	}
	root := t.TempDir()
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "out")))
	lim := ChangeLimits{}.withDefaults()
	before := takeSnapshot(root, lim)
	assert.NotContains(t, before.files, "out/secret", "links are not followed")
	require.NoError(t, os.Remove(filepath.Join(root, "out")))
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret"), filepath.Join(root, "out")))
	cs := diffSnapshots(before, takeSnapshot(root, lim), lim, changeMethod)
	assert.Equal(t, []string{"out"}, cs.Modified, "a retargeted link is modified")
}
