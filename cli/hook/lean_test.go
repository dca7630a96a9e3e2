package hook

import (
	"os"
	osexec "os/exec"
	"strings"
	"testing"
)

// TestHookExecutableStaysLean: the agentgate-hook executable must not link
// the desktop UI, the MCP SDK or the rest of package cli; each would add
// start-up cost to every tool call an agent makes (see ARCHITECTURE.md).
func TestHookExecutableStaysLean(t *testing.T) {
	goTool, err := osexec.LookPath("go")
	if err != nil {
		t.Skip("the go tool is not on PATH")
	}
	cmd := osexec.Command(goTool, "list", "-deps", "./cmd/agentgate-hook")
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep == "github.com/agentgate/agentgate/cli" || dep == "github.com/agentgate/agentgate/ui" ||
			strings.HasPrefix(dep, "fyne.io/") || strings.HasPrefix(dep, "github.com/modelcontextprotocol/") {
			t.Errorf("cmd/agentgate-hook depends on %s", dep)
		}
	}
}
