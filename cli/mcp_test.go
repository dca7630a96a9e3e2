package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentgate/agentgate/agentbridge/approvertest"
	"github.com/agentgate/agentgate/agentbridge/bridgetest"
)

// connectMCP serves an mcpServer over in-memory transports and returns a
// connected client session.
func connectMCP(t *testing.T, m *mcpServer, clientName string) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := newMCPServer(m).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: clientName, Version: "1.0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, commandOut, string) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	var out commandOut
	if !res.IsError && res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &out)
	}
	return res, out, text.String()
}

func TestMCPToolsListed(t *testing.T) {
	cs := connectMCP(t, &mcpServer{e: env{}}, "test-client")
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if len(tool.Description) < 80 || tool.InputSchema == nil {
			t.Errorf("tool %s: description %q / schema %v: want a description written for a model and a schema", tool.Name, tool.Description, tool.InputSchema)
		}
	}
	if strings.Join(names, ",") != "cancel_command,command_output,list_commands,run_command" {
		t.Errorf("tools %v", names)
	}
}

func TestMCPAllowedCommandOutput(t *testing.T) {
	b := bridgetest.Start(t, bridgetest.Options{})
	b.Allow(t, "echo")
	m := &mcpServer{e: env{socket: b.Socket, cwd: b.Project}}
	cs := connectMCP(t, m, "Claude Code")
	res, out, text := callTool(t, cs, "run_command", map[string]any{"argv": []string{"echo", "hi"}})
	if res.IsError {
		t.Fatalf("run_command: %s", text)
	}
	if out.State != "exited" || !out.Done || out.ExitCode == nil || *out.ExitCode != 0 || out.Stdout != "hi\n" || out.RunID == "" {
		t.Fatalf("result %+v", out)
	}
	if _, _, text := callTool(t, cs, "list_commands", map[string]any{}); !strings.Contains(text, out.RunID) {
		t.Errorf("list_commands does not list %s: %s", out.RunID, text)
	}
	// The provider came from the client's declared name.
	found := false
	for _, e := range b.AuditEntries(t) {
		if e.Provider == "claude-code" && strings.Contains(e.Client, "Claude Code") {
			found = true
		}
	}
	if !found {
		t.Errorf("no audit entry with provider claude-code from the client name")
	}
	res, out2, text := callTool(t, cs, "command_output", map[string]any{"run_id": out.RunID, "cursor": 0})
	if res.IsError || out2.Stdout != "hi\n" || !out2.Done {
		t.Errorf("command_output: %s %+v", text, out2)
	}
	// The exit came at once; the change summary comes with a later call.
	if out.Changes == nil && !out.ChangesPending {
		t.Errorf("run_command result has neither changes nor changes_pending: %s", text)
	}
	for i := 0; out2.ChangesPending && i < 500; i++ {
		time.Sleep(10 * time.Millisecond)
		_, out2, text = callTool(t, cs, "command_output", map[string]any{"run_id": out.RunID, "cursor": 3})
	}
	changes, _ := out2.Changes.(map[string]any)
	if out2.ChangesPending || changes == nil || changes["cover"] == nil || len(changes["created"].([]any)) != 0 {
		t.Errorf("command_output after the summary: %s", text)
	}
}

func TestMCPRefusals(t *testing.T) {
	b := bridgetest.Start(t, bridgetest.Options{Steps: []approvertest.Step{approvertest.Deny("use make test instead")}})
	m := &mcpServer{e: env{socket: b.Socket, cwd: b.Project}, provider: "tester"}
	cs := connectMCP(t, m, "test-client")
	res, _, text := callTool(t, cs, "run_command", map[string]any{"argv": []string{"touch", "x"}})
	if !res.IsError || !strings.Contains(text, "refused (denied)") || !strings.Contains(text, "use make test instead") || !strings.Contains(text, "do not retry") {
		t.Errorf("denied: error %v, text %q", res.IsError, text)
	}
	res, _, text = callTool(t, cs, "run_command", map[string]any{"argv": []string{"echo", ">", "f"}})
	if !res.IsError || !strings.Contains(text, "refused (redirection_token)") {
		t.Errorf("redirection: error %v, text %q", res.IsError, text)
	}
}

func TestMCPAppNotRunningFailsClosed(t *testing.T) {
	dir := t.TempDir()
	m := &mcpServer{e: env{socket: dir + "/none.sock", cwd: dir}}
	cs := connectMCP(t, m, "test-client")
	res, _, text := callTool(t, cs, "run_command", map[string]any{"argv": []string{"true"}})
	if !res.IsError || !strings.Contains(text, "not running") || !strings.Contains(text, "run `agentgate`") {
		t.Errorf("error %v, text %q", res.IsError, text)
	}
}

func TestProviderFromClientName(t *testing.T) {
	for in, want := range map[string]string{
		"Claude Code": "claude-code", "gemini-cli-mcp-client": "gemini-cli-mcp-client", "codex_mcp": "codex_mcp",
		"  ": "", "Cursor (1.2)": "cursor-1.2", "../x": "x",
	} {
		if got := providerFromClientName(in); got != want {
			t.Errorf("providerFromClientName(%q) = %q, want %q", in, got, want)
		}
	}
}
