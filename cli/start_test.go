package cli

import (
	"slices"
	"strings"
	"testing"
)

// TestAppEnv: the app `agentgate mcp` starts takes agentgate's own state
// directory and socket from the MCP server's environment (checked before
// the start), but nothing that steers programs, and neither the cache
// directory (where its runs may write) nor the data directory.
func TestAppEnv(t *testing.T) {
	inherited := []string{"XDG_STATE_HOME=/s", "AGENTGATE_SOCKET=/a.sock", "XDG_RUNTIME_DIR=/r", "LANG=C.UTF-8",
		"XDG_CACHE_HOME=/repo", "XDG_DATA_HOME=/repo/data", "XDG_CONFIG_HOME=/repo/cfg", "LD_PRELOAD=/repo/x.so", "HOME=/repo/home"}
	env := appEnv(inherited)
	names := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		names[k] = v
	}
	tests := []struct {
		name string
		want string // "" when it must be absent
	}{
		{"XDG_STATE_HOME", "/s"},
		{"AGENTGATE_SOCKET", "/a.sock"},
		{"XDG_RUNTIME_DIR", "/r"},
		{"LANG", "C.UTF-8"},
		{"XDG_CACHE_HOME", ""},
		{"XDG_DATA_HOME", ""},
		{"XDG_CONFIG_HOME", ""},
		{"LD_PRELOAD", ""},
	}
	for _, tc := range tests {
		if got, ok := names[tc.name]; tc.want == "" && ok || tc.want != "" && got != tc.want {
			t.Errorf("%s = %q (present %v), want %q", tc.name, got, ok, tc.want)
		}
	}
	if names["HOME"] == "/repo/home" {
		t.Errorf("HOME came from the MCP server's environment")
	}
	if !slices.Equal(inherited[:1], []string{"XDG_STATE_HOME=/s"}) {
		t.Errorf("appEnv changed its argument: %q", inherited)
	}
}
