//go:build linux

package cli

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	osexec "os/exec"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/agentbridge/bridgetest"
)

// inspectorPackage is the pinned real MCP client used end to end.
const inspectorPackage = "@modelcontextprotocol/inspector@2.12.0"

// runInspector runs the inspector's CLI against this test binary acting as
// `agentgate mcp` and returns its exit code and stdout. The inspector hands
// the server only a minimal environment, so the socket and the test switch
// are passed with -e.
func runInspector(t *testing.T, socket, project string, args ...string) (int, string) {
	t.Helper()
	npx, err := osexec.LookPath("npx")
	if err != nil {
		t.Skip("npx is not installed (make test installs node and npm); skipping the end-to-end test with the real MCP inspector")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	full := append([]string{"-y", inspectorPackage, "--cli", "-e", asCLIEnv + "=1", "-e", "AGENTGATE_SOCKET=" + socket,
		exe, "mcp", "--project", project}, args...)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := osexec.CommandContext(ctx, npx, full...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var exitErr *osexec.ExitError
	switch {
	case err == nil:
		return 0, stdout.String()
	case errors.As(err, &exitErr):
		t.Logf("inspector stderr: %s", stderr.String())
		return exitErr.ExitCode(), stdout.String()
	}
	t.Fatalf("npx %v: %v\n%s", full, err, stderr.String())
	return 0, ""
}

func TestMCPWithRealInspector(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the end-to-end test with the real MCP inspector")
	}
	b := bridgetest.Start(t, bridgetest.Options{})
	b.Allow(t, "echo")

	code, out := runInspector(t, b.Socket, b.Project, "--method", "tools/list")
	if code != 0 {
		t.Fatalf("tools/list: exit %d: %s", code, out)
	}
	var list struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("tools/list output %q: %v", out, err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	if strings.Join(names, ",") != "cancel_command,command_output,list_commands,run_command" {
		t.Errorf("tools %v", names)
	}

	code, out = runInspector(t, b.Socket, b.Project, "--method", "tools/call", "--tool-name", "run_command", "--tool-arg", `argv=["echo","hello from agentgate"]`)
	if code != 0 || !strings.Contains(out, `hello from agentgate\n`) || !strings.Contains(out, `"exited"`) {
		t.Errorf("allow-listed echo: exit %d: %s", code, out)
	}

	// A refused command (a redirection token) is a tool error: the
	// inspector's exit code 5.
	code, out = runInspector(t, b.Socket, b.Project, "--method", "tools/call", "--tool-name", "run_command", "--tool-arg", `argv=["echo",">","f"]`)
	if code != 5 {
		t.Errorf("refused command: exit %d, want 5 (tool error): %s", code, out)
	}
}
