package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestMCPJSONUsesTheLeanExecutable: `setup mcp-json` writes agentgate-mcp
// (no arguments) when it sits beside agentgate, `agentgate mcp` otherwise,
// and rewrites an entry written the other way when that changes.
func TestMCPJSONUsesTheLeanExecutable(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "agentgate")
	writeExecutable(t, exe)
	entry := func(doc []byte) (string, []string) {
		var v struct {
			MCPServers map[string]struct {
				Command string   `json:"command"`
				Args    []string `json:"args"`
			} `json:"mcpServers"`
		}
		if err := json.Unmarshal(doc, &v); err != nil {
			t.Fatalf("%v: %s", err, doc)
		}
		e := v.MCPServers["agentgate"]
		return e.Command, e.Args
	}
	doc, same, err := mcpJSONEdit([]byte("{}"), exe)
	if cmd, args := entry(doc); err != nil || same || cmd != exe || strings.Join(args, " ") != "mcp" {
		t.Fatalf("without agentgate-mcp: %s %q (%v, %v)", cmd, args, same, err)
	}
	lean := filepath.Join(dir, executableFileName("agentgate-mcp"))
	writeExecutable(t, lean)
	doc, same, err = mcpJSONEdit(doc, exe)
	if cmd, args := entry(doc); err != nil || same || cmd != lean || len(args) != 0 {
		t.Fatalf("with agentgate-mcp beside: %s %q (%v, %v)", cmd, args, same, err)
	}
	if _, same, err = mcpJSONEdit(doc, exe); !same || err != nil {
		t.Errorf("a second setup changed the entry again (%v)", err)
	}
}
