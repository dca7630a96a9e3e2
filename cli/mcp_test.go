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

// TestMCPFollowsTheBridgeToItsSuccessor: the bridge `agentgate mcp` talks to
// hands over (an agentgate without windows to the desktop app) or hangs up;
// the next run_command reaches whoever serves the socket now, without an
// error for the model: nothing ran on the old bridge.
func TestMCPFollowsTheBridgeToItsSuccessor(t *testing.T) {
	first := bridgetest.Start(t, bridgetest.Options{})
	first.Allow(t, "echo")
	m := &mcpServer{e: env{socket: first.Socket, cwd: first.Project}}
	cs := connectMCP(t, m, "Claude Code")
	if res, _, text := callTool(t, cs, "run_command", map[string]any{"argv": []string{"echo", "one"}}); res.IsError {
		t.Fatalf("run_command on the first bridge: %s", text)
	}

	// A hand-over: the first bridge keeps the connection but takes nothing new.
	first.Broker.StopTaking("handed over (test)", "handed over (test)")
	first.Server.StopAccepting()
	second := bridgetest.Start(t, bridgetest.Options{Socket: first.Socket})
	second.Allow(t, "echo")
	res, out, text := callTool(t, cs, "run_command", map[string]any{"argv": []string{"echo", "two"}})
	if res.IsError || out.Stdout != "two\n" {
		t.Fatalf("run_command after the hand-over: error %v, %s %+v", res.IsError, text, out)
	}
	if !strings.Contains(auditArgv(t, second), "two") {
		t.Fatalf("the second bridge did not run it")
	}

	// A hang-up: the second bridge closes its connections and goes.
	second.Server.Close()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		m.mu.Lock()
		gone := m.bridge == nil || m.bridge.Closed()
		m.mu.Unlock()
		if gone {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the client never noticed the bridge hung up")
		}
	}
	third := bridgetest.Start(t, bridgetest.Options{Socket: first.Socket})
	third.Allow(t, "echo")
	res, out, text = callTool(t, cs, "run_command", map[string]any{"argv": []string{"echo", "three"}})
	if res.IsError || out.Stdout != "three\n" {
		t.Fatalf("run_command after the bridge hung up: error %v, %s %+v", res.IsError, text, out)
	}
}

// auditArgv returns every argv word the bridge's audit log holds, joined.
func auditArgv(t *testing.T, b *bridgetest.Bridge) string {
	var words []string
	for _, e := range b.AuditEntries(t) {
		words = append(words, e.Argv...)
	}
	return strings.Join(words, " ")
}
