package cli

import (
	osexec "os/exec"
	"testing"
	"time"

	"github.com/agentgate/agentgate/agentbridge/bridgetest"
	"github.com/agentgate/agentgate/prefs"
)

// TestMCPHonoursGrants: `agentgate mcp` runs a command a card grant allows
// for its provider without asking anyone (the bridge here has no
// approver), and is refused once the grant is revoked.
func TestMCPHonoursGrants(t *testing.T) {
	b := bridgetest.Start(t, bridgetest.Options{NoApprover: true})
	echo, err := osexec.LookPath("echo")
	if err != nil {
		t.Skip("no echo on PATH")
	}
	g, err := b.Grants.Give(prefs.GrantRequest{Kind: prefs.GrantProgram, Argv: []string{"echo"}, Executable: echo,
		Project: b.Project, Provider: "claude-code", By: "card", For: 15 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	cs := connectMCP(t, &mcpServer{e: env{socket: b.Socket, cwd: b.Project}}, "Claude Code")
	res, out, text := callTool(t, cs, "run_command", map[string]any{"argv": []string{"echo", "granted"}})
	if res.IsError || out.State != "exited" || out.Stdout != "granted\n" {
		t.Fatalf("run_command under a grant: %s %+v", text, out)
	}
	if err := b.Grants.Revoke(g.ID); err != nil {
		t.Fatal(err)
	}
	if res, _, text := callTool(t, cs, "run_command", map[string]any{"argv": []string{"echo", "granted"}}); !res.IsError {
		t.Fatalf("run_command after revoke ran: %s", text)
	}
}
