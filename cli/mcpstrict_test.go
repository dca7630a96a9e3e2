package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentgate/agentgate/agentbridge/bridgetest"
)

// TestMCPArgumentsStrict: a tool call's argument in another case, unknown
// or given twice is refused, naming it, and nothing is proposed.
func TestMCPArgumentsStrict(t *testing.T) {
	b := bridgetest.Start(t, bridgetest.Options{})
	b.Allow(t, "echo")
	b.Allow(t, "touch")
	m := &mcpServer{e: env{socket: b.Socket, cwd: b.Project}}
	cs := connectMCP(t, m, "test-client")
	for _, tc := range []struct{ args, member string }{
		{`{"argv":["echo","hi"],"argv":["touch","pwned"]}`, `"argv"`},
		{`{"Argv":["touch","pwned"]}`, "Argv"},
		{`{"argv":["echo","hi"],"env":{"LD_PRELOAD":"/tmp/x.so"}}`, "env"},
	} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_command", Arguments: json.RawMessage(tc.args)})
		if err != nil {
			t.Fatalf("%s: %v", tc.args, err)
		}
		text := ""
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				text += tc.Text
			}
		}
		if !res.IsError || !strings.Contains(text, tc.member) {
			t.Errorf("%s: error %v, %q; want a refusal naming %s", tc.args, res.IsError, text, tc.member)
		}
	}
	if entries := b.AuditEntries(t); len(entries) != 0 {
		t.Fatalf("a refused call was proposed: %+v", entries)
	}
}
