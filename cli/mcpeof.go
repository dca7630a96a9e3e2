package cli

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// answerBeforeEOF is an mcp.Transport over inner whose connection, when the
// client closes its end of stdin, first answers the requests it has already
// read and then reports the end of input. Without it the SDK cancels every
// request in flight the moment the read fails and refuses to write their
// answers, so `printf '<initialize>\n' | agentgate mcp` printed nothing about
// half the time: the end of input raced the answer.
//
// Tool calls (tools/call) are the exception: a closed stdin is how an MCP
// client ends its session (the MCP specification's stdio shutdown), and a
// session's runs end with it (docs/protocol.md), so a command still waiting
// for a person's decision or still running is not waited for; it is
// cancelled, and its card withdrawn, as for any agent that hangs up. The
// other requests (initialize, tools/list, ping, …) are answered at once, so
// waiting for them never delays the exit noticeably.
type answerBeforeEOF struct {
	// inner is the transport read and written.
	inner mcp.Transport
}

// Connect connects inner and wraps its connection.
func (t answerBeforeEOF) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &eofAnsweringConn{Connection: c, unanswered: map[jsonrpc.ID]bool{}, changed: make(chan struct{})}, nil
}

// eofAnsweringConn is the connection of answerBeforeEOF.
type eofAnsweringConn struct {
	mcp.Connection
	// mu guards unanswered, changed and stopped.
	mu sync.Mutex
	// unanswered holds the IDs of the calls read, other than tools/call, whose
	// answer has not been written yet.
	unanswered map[jsonrpc.ID]bool
	// changed is closed (and replaced) whenever unanswered shrinks or stopped
	// is set.
	changed chan struct{}
	// stopped is set by Close and by a failed write: nothing more can be
	// answered, so the end of input is reported at once.
	stopped bool
}

// Read reads the next message. When the input has ended (io.EOF), it
// returns that only once every call already read (but tools/call) has been
// answered, the connection was closed, a write failed, or ctx is done.
func (c *eofAnsweringConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err == nil {
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() && req.Method != "tools/call" {
			c.mu.Lock()
			c.unanswered[req.ID] = true
			c.mu.Unlock()
		}
		return msg, nil
	}
	if !errors.Is(err, io.EOF) {
		return nil, err
	}
	for {
		c.mu.Lock()
		done, changed := c.stopped || len(c.unanswered) == 0, c.changed
		c.mu.Unlock()
		if done {
			return nil, err
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, err
		}
	}
}

// Write writes msg; a response marks its call answered once written.
func (c *eofAnsweringConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	resp, isResponse := msg.(*jsonrpc.Response)
	if err == nil && !isResponse {
		return nil
	}
	c.update(func() {
		if err != nil {
			c.stopped = true
		} else {
			delete(c.unanswered, resp.ID)
		}
	})
	return err
}

// Close closes the connection and ends a Read waiting for answers.
func (c *eofAnsweringConn) Close() error {
	c.update(func() { c.stopped = true })
	return c.Connection.Close()
}

// update applies change under mu and wakes a Read waiting for answers.
func (c *eofAnsweringConn) update(change func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	change()
	close(c.changed)
	c.changed = make(chan struct{})
}
