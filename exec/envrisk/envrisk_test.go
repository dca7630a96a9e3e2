package envrisk

import (
	"slices"
	"testing"
)

func TestSteers(t *testing.T) {
	cases := []struct {
		name     string
		foldCase bool
		want     bool
	}{
		{"LD_PRELOAD", false, true},
		{"LD_LIBRARY_PATH", false, true},
		{"DYLD_INSERT_LIBRARIES", false, true},
		{"BASH_ENV", false, true},
		{"ENV", false, true},
		{"BASH_FUNC_ls%%", false, true},
		{"GIT_CONFIG_GLOBAL", false, true},
		{"GIT_CONFIG_KEY_0", false, true},
		{"GIT_CONFIG", false, true},
		{"GIT_SSH_COMMAND", false, true},
		{"NODE_OPTIONS", false, true},
		{"PYTHONSTARTUP", false, true},
		{"PERL5OPT", false, true},
		{"RUBYOPT", false, true},
		{"JAVA_TOOL_OPTIONS", false, true},
		{"PATH", false, true},
		{"npm_config_script_shell", false, true},
		{"NPM_CONFIG_USERCONFIG", false, true},
		{"GOFLAGS", false, true},
		{"TAR_OPTIONS", false, true},
		{"RIPGREP_CONFIG_PATH", false, true},
		{"OPENSSL_CONF", false, true},
		{"DOTNET_STARTUP_HOOKS", false, true},
		{"CORECLR_PROFILER_PATH", false, true},
		{"KUBECONFIG", false, true},
		{"VIMINIT", false, true},
		{"RSYNC_RSH", false, true},
		{"ld_preload", false, false}, // the loader reads LD_PRELOAD only
		{"ld_preload", true, true},   // Windows names fold case
		{"Path", true, true},
		{"LANG", false, false},
		{"TERM", false, false},
		{"USER", false, false},
		{"CI", false, false},
		{"GITHUB_TOKEN", false, false},
		{"", false, false},
		{"ENVIRONMENT", false, false}, // whole names, not prefixes
		{"PATHS", false, false},
	}
	for _, c := range cases {
		if got := steers(c.name, c.foldCase); got != c.want {
			t.Errorf("steers(%q, fold=%v) = %v, want %v", c.name, c.foldCase, got, c.want)
		}
	}
}

func TestFilter(t *testing.T) {
	kept, removed := Filter([]string{"LANG=C.UTF-8", "LD_PRELOAD=/tmp/x.so", "malformed", "TERM=xterm", "BASH_ENV=/tmp/rc"})
	if want := []string{"LANG=C.UTF-8", "TERM=xterm"}; !slices.Equal(kept, want) {
		t.Errorf("kept = %q, want %q", kept, want)
	}
	if want := []string{"LD_PRELOAD", "BASH_ENV"}; !slices.Equal(removed, want) {
		t.Errorf("removed = %q, want %q", removed, want)
	}
}
