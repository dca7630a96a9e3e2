package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/agentgate/agentgate/agentbridge/wire"
)

// fakeServer answers requests on the other end of a pipe with handle,
// replying to a batch of n requests in reverse order to check matching.
func fakeServer(t *testing.T, conn net.Conn, n int, handle func(req *wire.Request) []byte) {
	t.Helper()
	go func() {
		defer conn.Close()
		fr := wire.NewFrameReader(conn, 0)
		for {
			var batch [][]byte
			for range n {
				frame, err := fr.Next()
				if err != nil {
					return
				}
				req, id, rerr := wire.DecodeFrame(frame)
				if rerr != nil {
					batch = append(batch, wire.EncodeResponse(id, nil, rerr))
					continue
				}
				batch = append(batch, handle(req))
			}
			for i := len(batch) - 1; i >= 0; i-- {
				conn.Write(batch[i])
			}
		}
	}()
}

func TestConcurrentCallsMatchedByID(t *testing.T) {
	server, conn := net.Pipe()
	const n = 8
	fakeServer(t, server, n, func(req *wire.Request) []byte {
		var p wire.RunIDParams
		wire.DecodeParams(req.Params, &p)
		return wire.EncodeResponse(req.ID, wire.CancelResult{State: "state-of-" + p.RunID}, nil)
	})
	c := New(conn)
	defer c.Close()
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := string(rune('a' + i))
			r, err := c.Cancel(context.Background(), id)
			if err != nil || r.State != "state-of-"+id {
				t.Errorf("cancel %s = %+v, %v", id, r, err)
			}
		}()
	}
	wg.Wait()
}

func TestRefusalIsTypedError(t *testing.T) {
	server, conn := net.Pipe()
	fakeServer(t, server, 1, func(req *wire.Request) []byte {
		if req.Method == wire.MethodList {
			return wire.EncodeResponse(req.ID, nil, wire.NewError(wire.CodeMethodNotFound, "method not found"))
		}
		return wire.EncodeResponse(req.ID, nil, wire.Refuse(wire.RefuseDenied, "The person denied this command."))
	})
	c := New(conn)
	defer c.Close()
	_, err := c.Propose(context.Background(), wire.ProposeParams{Argv: []string{"x"}})
	var e *Error
	if !errors.As(err, &e) || e.Code != "denied" || e.RPCCode != wire.CodeApplication || e.Message != "The person denied this command." {
		t.Fatalf("err = %#v", err)
	}
	if !IsRemote(err) || Code(err) != "denied" {
		t.Fatalf("IsRemote/Code wrong for %v", err)
	}
	_, err = c.List(context.Background())
	if Code(err) != "jsonrpc_-32601" {
		t.Fatalf("standard error code = %q", Code(err))
	}
	if IsRemote(errors.New("x")) || Code(errors.New("x")) != "" {
		t.Fatalf("a local error counted as remote")
	}
}

func TestContextAndClose(t *testing.T) {
	server, conn := net.Pipe()
	go func() { // reads requests, never answers, until closed
		r := bufio.NewReader(server)
		for {
			if _, err := r.ReadBytes('\n'); err != nil {
				return
			}
		}
	}()
	c := New(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := c.List(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want deadline", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.Wait(context.Background(), wire.WaitParams{RunID: "r"})
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	server.Close()
	select {
	case err := <-done:
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("err after close = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("call did not end when the connection closed")
	}
	c.Close()
	if err := c.Call(context.Background(), "x", nil, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("call on closed client = %v", err)
	}
}

func TestUnattributedErrorFailsCallers(t *testing.T) {
	server, conn := net.Pipe()
	go func() {
		r := bufio.NewReader(server)
		r.ReadBytes('\n')
		server.Write(wire.EncodeResponse(json.RawMessage("null"), nil, wire.Refuse(wire.RefuseTooManyConns, "too many")))
		server.Close()
	}()
	c := New(conn)
	defer c.Close()
	_, err := c.List(context.Background())
	if Code(err) != wire.RefuseTooManyConns {
		t.Fatalf("err = %v", err)
	}
}

func TestWaitDoneCollectsOutput(t *testing.T) {
	server, conn := net.Pipe()
	calls := 0
	fakeServer(t, server, 1, func(req *wire.Request) []byte {
		var p wire.WaitParams
		wire.DecodeParams(req.Params, &p)
		calls++
		switch calls {
		case 1:
			return wire.EncodeResponse(req.ID, wire.WaitResult{State: "running", Stdout: wire.Output{Data: "ab", Cursor: 2}}, nil)
		case 2:
			if p.Cursor != 2 {
				t.Errorf("cursor = %d, want 2", p.Cursor)
			}
			return wire.EncodeResponse(req.ID, wire.WaitResult{State: "exited", Stdout: wire.Output{Data: "cd", Cursor: 4}}, nil)
		default:
			return wire.EncodeResponse(req.ID, wire.WaitResult{State: "exited", Stdout: wire.Output{Data: "", Cursor: 4, EOF: true}}, nil)
		}
	})
	c := New(conn)
	defer c.Close()
	r, out, err := c.WaitDone(context.Background(), "r")
	if err != nil || string(out) != "abcd" || r.State != "exited" {
		t.Fatalf("WaitDone = %+v %q %v", r, out, err)
	}
}
