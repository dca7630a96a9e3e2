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
