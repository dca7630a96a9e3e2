package exec

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGitDirsOutside: a project whose .git is a file (a worktree or a
// submodule) names git directories that its run must not write, when they
// lie outside the project; a .git directory, no .git, or a gitdir inside the
// project name none.
func TestGitDirsOutside(t *testing.T) {
	outside := t.TempDir()
	common := filepath.Join(outside, "repo.git")
	worktreeDir := filepath.Join(common, "worktrees", "w")
	require.NoError(t, os.MkdirAll(worktreeDir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(worktreeDir, "commondir"), []byte("../..\n"), 0o644))
	plainDir := filepath.Join(outside, "plain.git")
	require.NoError(t, os.MkdirAll(plainDir, 0o755))

	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, root string)
		want  []string
	}{
		{"no repository", func(*testing.T, string) {}, nil},
		{".git is a directory", func(t *testing.T, root string) { require.NoError(t, os.Mkdir(filepath.Join(root, ".git"), 0o755)) }, nil},
		{"a gitdir outside, no commondir", func(t *testing.T, root string) {
			require.NoError(t, os.WriteFile(filepath.Join(root, ".git"), []byte("gitdir: "+plainDir+"\n"), 0o644))
		}, []string{plainDir}},
		{"a worktree: its gitdir and the common directory", func(t *testing.T, root string) {
			require.NoError(t, os.WriteFile(filepath.Join(root, ".git"), []byte("gitdir: "+worktreeDir+"\n"), 0o644))
		}, []string{worktreeDir, common}},
		{"a relative gitdir inside the project", func(t *testing.T, root string) {
			require.NoError(t, os.MkdirAll(filepath.Join(root, "modules", "m"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(root, ".git"), []byte("gitdir: modules/m\n"), 0o644))
		}, nil},
		{"not a gitdir line", func(t *testing.T, root string) {
			require.NoError(t, os.WriteFile(filepath.Join(root, ".git"), []byte("something else\n"), 0o644))
		}, nil},
		{".git a symlink to a gitdir file", func(t *testing.T, root string) {
			if runtime.GOOS == "windows" {
				// Wine makes the link, then finds nothing behind it (nor
				// would ReadFile); Windows needs a privilege for links.
				t.Skip("symlinks are a Unix case")
			}
			link := filepath.Join(outside, "dotgit-"+filepath.Base(root))
			require.NoError(t, os.WriteFile(link, []byte("gitdir: "+plainDir+"\n"), 0o644))
			if err := os.Symlink(link, filepath.Join(root, ".git")); err != nil {
				t.Skip("no symlinks here:", err)
			}
		}, []string{plainDir}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			tc.setup(t, root)
			assert.Equal(t, tc.want, gitDirsOutside(root))
		})
	}
}
