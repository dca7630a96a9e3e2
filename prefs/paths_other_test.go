//go:build !windows

package prefs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/adrg/xdg"
)

// TestDefaultPathsAgreeWithXDG: outside Windows DefaultPaths lays out
// agentgate's places without initialising github.com/adrg/xdg; for every
// environment here it gives the places xdg gives — except that a relative
// $HOME, for which xdg answers a path relative to the working directory,
// gives no place.
func TestDefaultPathsAgreeWithXDG(t *testing.T) {
	home := t.TempDir()
	unset := "\x00unset"
	cases := []struct {
		name                 string
		home, config, state  string
		relativeHomeNoPlaces bool
	}{
		{name: "defaults", home: home, config: unset, state: unset},
		{name: "absolute variables", home: home, config: "/srv/cfg", state: "/srv/state"},
		{name: "empty variables", home: home, config: "", state: ""},
		{name: "relative variables are ignored", home: home, config: "cfg", state: "state"},
		{name: "~ expanded", home: home, config: "~/c", state: "~/s"},
		{name: "$HOME expanded", home: home, config: "$HOME/c", state: "$HOME/s"},
		{name: "HOME unset", home: unset, config: unset, state: unset},
		{name: "HOME unset, ~ expanded to /", home: unset, config: "~/c", state: unset},
		{name: "HOME empty", home: "", config: unset, state: unset},
		{name: "relative HOME", home: "rel", config: unset, state: unset, relativeHomeNoPlaces: true},
		{name: "relative HOME, absolute variables", home: "rel", config: "/srv/cfg", state: "/srv/state"},
	}
	set := func(name, v string) {
		t.Setenv(name, "")
		if v == unset {
			os.Unsetenv(name)
		} else {
			os.Setenv(name, v)
		}
	}
	t.Cleanup(xdg.Reload)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			set("HOME", c.home)
			set("XDG_CONFIG_HOME", c.config)
			set("XDG_STATE_HOME", c.state)
			xdg.Reload()
			got := DefaultPaths()
			want := Paths{ConfigDir: filepath.Join(xdg.ConfigHome, "agentgate"), StateDir: filepath.Join(xdg.StateHome, "agentgate")}
			if c.relativeHomeNoPlaces {
				if want.ConfigDir != "agentgate" {
					t.Fatalf("xdg now gives %q for a relative HOME; this case expected a relative answer", want.ConfigDir)
				}
				want = Paths{}
			}
			if got != want {
				t.Fatalf("HOME=%q XDG_CONFIG_HOME=%q XDG_STATE_HOME=%q: DefaultPaths() = %+v, xdg lays out %+v", c.home, c.config, c.state, got, want)
			}
		})
	}
}
