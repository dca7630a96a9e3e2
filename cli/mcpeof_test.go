package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// lockedBuffer is a bytes.Buffer safe for one writer and a reader after it.
type lockedBuffer struct {
	// mu guards b.
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) Close() error { return nil }

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestMCPAnswersRequestsReadBeforeEOF: a client that writes initialize,
// initialized and tools/list and closes its end at once (`printf … |
// agentgate mcp`) gets both answers before the server ends. Repeated, since
// without answerBeforeEOF the end of input raced the answers and won about
// half the time.
func TestMCPAnswersRequestsReadBeforeEOF(t *testing.T) {
	input := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"printf","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
	}, "\n") + "\n"
	for i := range 30 {
		out := &lockedBuffer{}
		transport := answerBeforeEOF{&mcp.IOTransport{Reader: io.NopCloser(strings.NewReader(input)), Writer: out}}
		if err := newMCPServer(&mcpServer{e: env{}}).Run(context.Background(), transport); err != nil && !strings.Contains(err.Error(), "EOF") {
			t.Fatalf("run %d: %v", i, err)
		}
		ids := map[float64]bool{}
		for line := range strings.SplitSeq(strings.TrimSpace(out.String()), "\n") {
			var msg struct {
				ID     float64         `json:"id"`
				Result json.RawMessage `json:"result"`
			}
			if json.Unmarshal([]byte(line), &msg) == nil && msg.Result != nil {
				ids[msg.ID] = true
			}
		}
		if !ids[1] || !ids[2] {
			t.Fatalf("run %d: answers to initialize and tools/list missing after end of input; output:\n%s", i, out.String())
		}
	}
}

// scriptedConn is an mcp.Connection that reads msgs and then io.EOF, and
// logs what happens in order.
type scriptedConn struct {
	// mu guards msgs and log.
	mu   sync.Mutex
	msgs []jsonrpc.Message
	log  []string
}

func (s *scriptedConn) Read(context.Context) (jsonrpc.Message, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.msgs) == 0 {
		return nil, io.EOF
	}
	m := s.msgs[0]
	s.msgs = s.msgs[1:]
	return m, nil
}

func (s *scriptedConn) Write(_ context.Context, msg jsonrpc.Message) error {
	s.record("wrote")
	return nil
}

func (s *scriptedConn) record(what string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, what)
}

func (s *scriptedConn) Close() error      { return nil }
func (s *scriptedConn) SessionID() string { return "" }

// connectScripted wraps a scriptedConn reading msgs in answerBeforeEOF.
func connectScripted(t *testing.T, msgs ...jsonrpc.Message) (*scriptedConn, mcp.Connection) {
	t.Helper()
	sc := &scriptedConn{msgs: msgs}
	c, err := answerBeforeEOF{fixedTransport{sc}}.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return sc, c
}

// fixedTransport connects to the one connection it holds.
type fixedTransport struct{ c mcp.Connection }

func (f fixedTransport) Connect(context.Context) (mcp.Connection, error) { return f.c, nil }

// callRequest is a call with id n of method.
func callRequest(t *testing.T, n int64, method string) *jsonrpc.Request {
	id, err := jsonrpc.MakeID(float64(n))
	if err != nil {
		t.Fatal(err)
	}
	return &jsonrpc.Request{ID: id, Method: method}
}

// TestMCPEndOfInputWaitsForAnswersButNotToolCalls: the end of input is
// reported after the answer of a request read before it, at once when only a
// tools/call is unanswered (a closed stdin ends the session and its runs),
// and at once when the connection is closed.
func TestMCPEndOfInputWaitsForAnswersButNotToolCalls(t *testing.T) {
	ctx := context.Background()
	t.Run("answered first", func(t *testing.T) {
		req := callRequest(t, 1, "tools/list")
		sc, c := connectScripted(t, req)
		if _, err := c.Read(ctx); err != nil {
			t.Fatal(err)
		}
		eof := make(chan error)
		go func() {
			_, err := c.Read(ctx)
			sc.record("eof")
			eof <- err
		}()
		if err := c.Write(ctx, &jsonrpc.Response{ID: req.ID}); err != nil {
			t.Fatal(err)
		}
		if err := <-eof; err != io.EOF {
			t.Fatalf("Read after the input ended: %v, want io.EOF", err)
		}
		if strings.Join(sc.log, ",") != "wrote,eof" {
			t.Fatalf("events %v: the end of input came before the answer", sc.log)
		}
	})
	t.Run("tool call not waited for", func(t *testing.T) {
		_, c := connectScripted(t, callRequest(t, 1, "tools/call"))
		c.Read(ctx)
		if _, err := c.Read(ctx); err != io.EOF {
			t.Fatalf("Read: %v, want io.EOF at once", err)
		}
	})
	t.Run("closed", func(t *testing.T) {
		_, c := connectScripted(t, callRequest(t, 1, "ping"))
		c.Read(ctx)
		c.Close()
		if _, err := c.Read(ctx); err != io.EOF {
			t.Fatalf("Read: %v, want io.EOF once closed", err)
		}
	})
}
