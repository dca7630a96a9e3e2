package hook

import (
	"os"
	osexec "os/exec"
	"strings"
	"testing"
)

// TestHookExecutableStaysLean: the agentgate-hook executable must not link
// the desktop UI, the MCP SDK, the rest of package cli, the executor or the
// per-OS supervisors (unixpg, winjob); each would add start-up cost to every
// tool call an agent makes, and a supervisor has no business in a process
// that runs nothing (see ARCHITECTURE.md). Checked for the build of this
// machine and for Windows and macOS, whose per-OS files differ.
func TestHookExecutableStaysLean(t *testing.T) {
	goTool, err := osexec.LookPath("go")
	if err != nil {
		t.Skip("the go tool is not on PATH")
	}
	forbidden := func(dep string) bool {
		switch dep {
		case "github.com/agentgate/agentgate/cli", "github.com/agentgate/agentgate/ui",
			"github.com/agentgate/agentgate/exec", "github.com/agentgate/agentgate/unixpg",
			"github.com/agentgate/agentgate/winjob":
			return true
		}
		return strings.HasPrefix(dep, "fyne.io/") || strings.HasPrefix(dep, "github.com/modelcontextprotocol/")
	}
	for _, goos := range []string{"", "windows", "darwin"} {
		cmd := osexec.Command(goTool, "list", "-deps", "./cmd/agentgate-hook")
		cmd.Dir = "../.."
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if goos != "" {
			cmd.Env = append(cmd.Env, "GOOS="+goos)
		}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("GOOS=%s go list -deps: %v", goos, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			if forbidden(dep) {
				t.Errorf("cmd/agentgate-hook (GOOS=%s) depends on %s", goos, dep)
			}
		}
	}
}
