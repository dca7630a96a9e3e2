package exec

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestPlanWritesCache: the host's cache directory (XDG_CACHE_HOME, which
// whoever started the host chose) is writable only when it cannot hand a
// run the home directory or a place programs start from later; otherwise
// it is dropped, saying why, and the rest of the plan stands.
func TestPlanWritesCache(t *testing.T) {
	home := filepath.FromSlash("/home/sam")
	root := filepath.Join(home, "src", "webshop")
	tmp := filepath.FromSlash("/tmp/agentgate-run-1")
	for _, tc := range []struct {
		name, cache string
		writable    bool
	}{
		{"the default", filepath.Join(home, ".cache"), true},
		{"elsewhere in home", filepath.Join(home, ".local", "cache"), true},
		{"outside home", filepath.FromSlash("/var/cache/sam"), true},
		{"inside .config", filepath.Join(home, ".config", "cache"), true},
		{"home itself", home, false},
		{"above home", filepath.FromSlash("/home"), false},
		{"the root", filepath.FromSlash("/"), false},
		{".config", filepath.Join(home, ".config"), false},
		{".local (holds .local/bin)", filepath.Join(home, ".local"), false},
		{".local/share", filepath.Join(home, ".local", "share"), false},
		{".ssh", filepath.Join(home, ".ssh"), false},
		{"bin", filepath.Join(home, "bin"), false},
		// As the environment may give it: compared cleaned.
		{"home, with a trailing slash", home + "/", false},
		{".ssh, unclean", home + "//x/../.ssh/.", false},
		{"the default, unclean", home + "/./.cache/", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := planWrites(confineInputs{root: root, tmp: tmp, cache: tc.cache, home: home})
			var granted []string
			for _, w := range p.writable {
				granted = append(granted, w.label)
			}
			if tc.writable {
				assert.Equal(t, []string{"project", "temp", "cache"}, granted)
				assert.Empty(t, p.dropped)
				return
			}
			assert.Equal(t, []string{"project", "temp"}, granted)
			if assert.Len(t, p.dropped, 1) {
				assert.Regexp(t, `^cache \((it is or contains the home directory|it contains .*, from which programs start later)`, p.dropped[0])
			}
		})
	}
}

// TestIsWithin: a path is within a directory when it is the directory or
// below it, element by element — never by a common prefix of bytes.
func TestIsWithin(t *testing.T) {
	for _, tc := range []struct {
		dir, path string
		want      bool
	}{
		{"/home/sam", "/home/sam", true},
		{"/home/sam", "/home/sam/.ssh", true},
		{"/home/sam", "/home/sam/a/b/c", true},
		{"/home/sam", "/home/samuel", false},
		{"/home/sam", "/home/sa", false},
		{"/home/sam", "/home", false},
		{"/home/sam", "/", false},
		{"/", "/", true},
		{"/", "/etc", true},
		{"/home/sam/.cache", "/home/sam/.cache2/x", false},
		{"/a", "/a-b", false},
	} {
		assert.Equal(t, tc.want, isWithin(tc.dir, tc.path), "isWithin(%q, %q)", tc.dir, tc.path)
		_, rel := within(tc.dir, tc.path)
		assert.Equal(t, rel, isWithin(tc.dir, tc.path), "isWithin agrees with within for %q, %q", tc.dir, tc.path)
	}
}
