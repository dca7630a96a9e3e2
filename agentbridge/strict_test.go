package agentbridge_test

import (
	"strings"
	"testing"

	"github.com/agentgate/agentgate/agentbridge/bridgetest"
	"github.com/agentgate/agentgate/agentbridge/wire"
)

// TestStrictMembersOverTheSocket: a proposal whose member is in another
// case, repeated or unknown is refused with invalid_params naming the
// member, and nothing is proposed, audited or run.
func TestStrictMembersOverTheSocket(t *testing.T) {
	b := bridgetest.Start(t, bridgetest.Options{})
	b.Allow(t, "true")
	c := dialRaw(t, b)
	c.hello(b)
	frames := []struct{ frame, member string }{
		{`{"jsonrpc":"2.0","id":1,"method":"exec.propose","params":{"Argv":["true"]}}`, `"Argv"`},
		{`{"jsonrpc":"2.0","id":2,"method":"exec.propose","params":{"argv":["true"],"argv":["rm","-rf","x"]}}`, `"argv"`},
		{`{"jsonrpc":"2.0","id":3,"method":"exec.propose","params":{"argv":["true"],"env":{"LD_PRELOAD":"/tmp/x.so"}}}`, `"env"`},
		{`{"jsonrpc":"2.0","id":4,"method":"exec.propose","Params":{"argv":["true"]}}`, `"Params"`},
		{`{"jsonrpc":"2.0","id":5,"method":"exec.propose","method":"exec.list","params":{"argv":["true"]}}`, `"method"`},
	}
	for _, f := range frames {
		c.send(f.frame)
		resp := c.recv()
		if resp.Error == nil || resp.Error.Code != wire.CodeInvalidParams || resp.Error.Data == nil ||
			resp.Error.Data.Code != wire.RefuseInvalidParams || !strings.Contains(resp.Error.Message, f.member) {
			t.Errorf("%s: response %+v, want invalid_params naming %s", f.frame, resp.Error, f.member)
		}
	}
	if entries := b.AuditEntries(t); len(entries) != 0 {
		t.Fatalf("a refused request was audited or proposed: %+v", entries)
	}
	if runs := b.Executor.Runs(); len(runs) != 0 {
		t.Fatalf("a refused request ran: %d runs", len(runs))
	}
}
