package hook

import (
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/exec/platformtest"
)

// TestHookExecutableStaysLean: the agentgate-hook executable must not link
// the desktop UI, the MCP SDK, the rest of package cli, the executor or the
// per-OS supervisors (unixpg, winjob); each would add start-up cost to every
// tool call an agent makes, and a supervisor has no business in a process
// that runs nothing (see ARCHITECTURE.md). Nor may agentgate-mcp link the
// desktop UI. Checked for the build of this machine and for Windows and
// macOS, whose per-OS files differ.
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
	checkLean(t, goTool, "./cmd/agentgate-hook", forbidden)
	// agentgate-mcp (the MCP server an agent starts for every session) may
	// link package cli and the MCP SDK, but not the desktop UI: Fyne's
	// initialisation is what it exists to skip.
	checkLean(t, goTool, "./cmd/agentgate-mcp", func(dep string) bool {
		return strings.HasPrefix(dep, "fyne.io/") || dep == "github.com/agentgate/agentgate/ui"
	})
}

// checkLean fails t when the command pkg depends, for this machine,
// Windows or macOS, on a package forbidden reports.
func checkLean(t *testing.T, goTool, pkg string, forbidden func(string) bool) {
	for _, goos := range []string{"", "windows", "darwin"} {
		cmd := osexec.Command(goTool, "list", "-deps", pkg)
		cmd.Dir = "../.."
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if goos != "" {
			cmd.Env = append(cmd.Env, "GOOS="+goos)
		}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("GOOS=%s go list -deps %s: %v", goos, pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			if forbidden(dep) {
				t.Errorf("%s (GOOS=%s) depends on %s", pkg, goos, dep)
			}
		}
	}
}

// TestHookShellParserStartsLazily: the hook as `make build` builds it (in
// the workspace scripts/fyne-work.sh makes) links the copy of
// mvdan.cc/sh/v3 whose package fileutil compiles its regular expressions on
// first use, not at every start of the process (scripts/sh-lazy-regexp.patch;
// about a sixth of the hook's user-space instructions). Without a built
// hook (a plain `go test`) there is nothing to check.
func TestHookShellParserStartsLazily(t *testing.T) {
	platformtest.RequirePatchedModule(t, filepath.Join("..", "..", "bin", "agentgate-hook"),
		"mvdan.cc/sh/v3", "fileutil/file.go", "sync.OnceValue", "sh-lazy-regexp.patch")
}
