package agentbridge_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/agentbridge/bridgetest"
	"github.com/agentgate/agentgate/agentbridge/client"
	"github.com/agentgate/agentgate/agentbridge/wire"
)

// eventually is the generous bound for things that must happen on a busy
// shared machine.
const eventually = 10 * time.Second

// ctxT returns a context bounded by eventually.
func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*eventually)
	t.Cleanup(cancel)
	return ctx
}

// refusalCode returns err's refusal code, failing the test when err is not a
// bridge refusal.
func refusalCode(t *testing.T, err error) string {
	t.Helper()
	if err == nil {
		t.Fatalf("expected a refusal, got success")
	}
	if !client.IsRemote(err) {
		t.Fatalf("expected a refusal, got %v", err)
	}
	return client.Code(err)
}

// rawConn is a connection that speaks frames by hand.
type rawConn struct {
	t  *testing.T
	nc net.Conn
	r  *bufio.Reader
}

// dialRaw connects without the client package.
func dialRaw(t *testing.T, b *bridgetest.Bridge) *rawConn {
	t.Helper()
	nc, err := net.Dial("unix", b.Socket)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { nc.Close() })
	return &rawConn{t: t, nc: nc, r: bufio.NewReaderSize(nc, 1<<20)}
}

// send writes one line.
func (c *rawConn) send(line string) {
	c.t.Helper()
	if _, err := c.nc.Write([]byte(line + "\n")); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// recv reads one response frame.
func (c *rawConn) recv() wire.Response {
	c.t.Helper()
	c.nc.SetReadDeadline(time.Now().Add(eventually))
	line, err := c.r.ReadBytes('\n')
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	var resp wire.Response
	if err := json.Unmarshal(line, &resp); err != nil {
		c.t.Fatalf("response %q is not JSON: %v", line, err)
	}
	if resp.JSONRPC != "2.0" {
		c.t.Fatalf("response without jsonrpc 2.0: %s", line)
	}
	return resp
}

// expectClosed checks the server closed the connection.
func (c *rawConn) expectClosed() {
	c.t.Helper()
	c.nc.SetReadDeadline(time.Now().Add(eventually))
	if line, err := c.r.ReadBytes('\n'); err == nil {
		c.t.Fatalf("connection still open; got %q", line)
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		c.t.Fatalf("connection not closed within %v", eventually)
	}
}

// hello sends a hello for the bridge's project on a raw connection.
func (c *rawConn) hello(b *bridgetest.Bridge) {
	c.t.Helper()
	p, _ := json.Marshal(wire.HelloParams{ProjectRoot: b.Project, Client: "raw"})
	c.send(`{"jsonrpc":"2.0","id":"h","method":"hello","params":` + string(p) + `}`)
	if resp := c.recv(); resp.Error != nil {
		c.t.Fatalf("hello: %v", resp.Error)
	}
}

// auditKinds summarises the audit entries of one run as "kind[/detail]".
func auditKinds(t *testing.T, b *bridgetest.Bridge, runID string) []string {
	var out []string
	for _, e := range b.AuditEntries(t) {
		if e.RunID != runID {
			continue
		}
		k := string(e.Kind)
		switch {
		case e.Decision != "":
			k += "/" + e.Decision
		case e.Code != "":
			k += "/" + e.Code
		case e.State != "":
			k += "/" + e.State
		}
		out = append(out, k)
	}
	return out
}

// joined is strings.Join with ",".
func joined(s []string) string { return strings.Join(s, ",") }

// awaitAudit waits until the audit entries of runID read want (entries
// after a run's end or a withdrawal are written just after the agent can
// see the state).
func awaitAudit(t *testing.T, b *bridgetest.Bridge, runID, want string) {
	t.Helper()
	deadline := time.Now().Add(eventually)
	for {
		got := joined(auditKinds(t, b, runID))
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("audit of %s = %s, want %s", runID, got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
