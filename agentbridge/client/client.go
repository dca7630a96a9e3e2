// Package client is the Go client of agentgate's bridge, used by every
// adapter in cli/ (mcp, hook, ps, cancel, …). It speaks the protocol of
// docs/protocol.md over the bridge's Unix socket; calls may be made
// concurrently from several goroutines on one Client.
package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/agentgate/agentgate/agentbridge/wire"
)

// Error is a refusal or protocol error returned by the bridge.
type Error struct {
	// Code is the stable refusal code (data.code, e.g. "denied",
	// "not_found"); for standard JSON-RPC errors without data it is
	// "jsonrpc_<number>".
	Code string
	// Message is the bridge's sentence for a person.
	Message string
	// RPCCode is the JSON-RPC error code (-32000 for refusals).
	RPCCode int
}

// Error returns "message (code)".
func (e *Error) Error() string { return e.Message + " (" + e.Code + ")" }

// IsRemote reports whether err is an answer from the bridge (an *Error)
// rather than a failure to reach it.
func IsRemote(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

// Code returns the refusal code of err when it is an *Error, else "".
func Code(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// ErrClosed is returned for calls on a closed Client or after the bridge
// closed the connection.
var ErrClosed = errors.New("the connection to the agentgate bridge is closed")

// Client is a connection to the bridge.
type Client struct {
	// conn is the socket.
	conn net.Conn
	// wmu serialises writes of request frames.
	wmu sync.Mutex
	// mu guards calls, nextID and readErr.
	mu sync.Mutex
	// calls maps request ids to the channel awaiting the response.
	calls map[string]chan *wire.Response
	// nextID numbers requests.
	nextID int64
	// readErr is why the reader stopped (nil while it runs).
	readErr error
	// done is closed when the reader stops.
	done chan struct{}
}

// dialTimeout bounds connecting to the socket.
const dialTimeout = 5 * time.Second

// Dial connects to the bridge at path ("" means wire.SocketPath(): the
// AGENTGATE_SOCKET override, else the per-user default). Where the OS tells
// (Linux, macOS), the process serving the socket must run as the current
// user; a socket served by anyone else is refused, since its answers could
// not be trusted.
func Dial(path string) (*Client, error) {
	if path == "" {
		p, err := wire.SocketPath()
		if err != nil {
			return nil, err
		}
		path = p
	}
	conn, err := net.DialTimeout("unix", path, dialTimeout)
	if err != nil {
		return nil, fmt.Errorf("connect to the agentgate bridge at %s: %w (is the agentgate app running?)", path, err)
	}
	peer, err := wire.PeerOf(conn)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("check who serves %s: %w", path, err)
	}
	if !peer.SameUser() {
		conn.Close()
		return nil, fmt.Errorf("the socket %s is served by uid %d, not by you; refusing to trust it (remove it, or set %s)", path, peer.UID, wire.EnvSocket)
	}
	return New(conn), nil
}

// New wraps an established connection (e.g. one end of net.Pipe in tests).
func New(conn net.Conn) *Client {
	c := &Client{conn: conn, calls: make(map[string]chan *wire.Response), done: make(chan struct{})}
	go c.readLoop()
	return c
}

// Close closes the connection; calls in flight return ErrClosed.
func (c *Client) Close() error {
	err := c.conn.Close()
	<-c.done
	return err
}

// readLoop delivers responses to their callers until the connection ends.
func (c *Client) readLoop() {
	fr := wire.NewFrameReader(c.conn, wire.MaxResponseFrame)
	var err error
	for {
		var frame []byte
		frame, err = fr.Next()
		if err != nil {
			break
		}
		var resp wire.Response
		if json.Unmarshal(frame, &resp) != nil {
			err = fmt.Errorf("the bridge sent a malformed frame: %.80q", frame)
			break
		}
		c.mu.Lock()
		ch, ok := c.calls[string(resp.ID)]
		delete(c.calls, string(resp.ID))
		if !ok && resp.Error != nil && string(resp.ID) == "null" {
			// An error the bridge could not attribute (frame too large, too
			// many connections): fail every caller with it.
			for id, ch := range c.calls {
				r := resp
				ch <- &r
				delete(c.calls, id)
			}
		}
		c.mu.Unlock()
		if ok {
			ch <- &resp
		}
	}
	c.mu.Lock()
	c.readErr = err
	for id, ch := range c.calls {
		close(ch)
		delete(c.calls, id)
	}
	c.mu.Unlock()
	close(c.done)
}

// Call sends one request and decodes its result into result (which may be
// nil). A bridge refusal is an *Error; ctx ending returns ctx.Err() (the
// bridge may still act on the request).
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	c.mu.Lock()
	if c.readErr != nil || isClosed(c.done) {
		c.mu.Unlock()
		return ErrClosed
	}
	c.nextID++
	id := strconv.FormatInt(c.nextID, 10)
	ch := make(chan *wire.Response, 1)
	c.calls[id] = ch
	c.mu.Unlock()

	frame, err := wire.EncodeRequest(json.RawMessage(id), method, params)
	if err == nil {
		c.wmu.Lock()
		_, err = c.conn.Write(frame)
		c.wmu.Unlock()
	}
	if err != nil {
		c.mu.Lock()
		delete(c.calls, id)
		c.mu.Unlock()
		return fmt.Errorf("send %s to the agentgate bridge: %w", method, err)
	}
	select {
	case resp, ok := <-ch:
		if !ok {
			return ErrClosed
		}
		if resp.Error != nil {
			e := &Error{Code: "jsonrpc_" + strconv.Itoa(resp.Error.Code), Message: resp.Error.Message, RPCCode: resp.Error.Code}
			if resp.Error.Data != nil && resp.Error.Data.Code != "" {
				e.Code = resp.Error.Data.Code
			}
			return e
		}
		if result == nil {
			return nil
		}
		if err := json.Unmarshal(resp.Result, result); err != nil {
			return fmt.Errorf("decode the bridge's %s result: %w", method, err)
		}
		return nil
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.calls, id)
		c.mu.Unlock()
		return ctx.Err()
	}
}

// isClosed reports whether ch is closed.
func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// Hello opens the session; it must be the first call.
func (c *Client) Hello(ctx context.Context, p wire.HelloParams) (wire.HelloResult, error) {
	var r wire.HelloResult
	return r, c.Call(ctx, wire.MethodHello, p, &r)
}

// Propose proposes a command; the result's State is running, queued or
// pending.
func (c *Client) Propose(ctx context.Context, p wire.ProposeParams) (wire.ProposeResult, error) {
	var r wire.ProposeResult
	return r, c.Call(ctx, wire.MethodPropose, p, &r)
}

// Wait long-polls a run (see wire.WaitParams); pass the returned
// Stdout.Cursor back to continue reading.
func (c *Client) Wait(ctx context.Context, p wire.WaitParams) (wire.WaitResult, error) {
	var r wire.WaitResult
	return r, c.Call(ctx, wire.MethodWait, p, &r)
}

// Output reads stdout or stderr from a cursor.
func (c *Client) Output(ctx context.Context, p wire.OutputParams) (wire.Output, error) {
	var r wire.Output
	return r, c.Call(ctx, wire.MethodOutput, p, &r)
}

// Cancel withdraws a pending proposal or ends a run.
func (c *Client) Cancel(ctx context.Context, runID string) (wire.CancelResult, error) {
	var r wire.CancelResult
	return r, c.Call(ctx, wire.MethodCancel, wire.RunIDParams{RunID: runID}, &r)
}

// List returns this session's runs.
func (c *Client) List(ctx context.Context) (wire.ListResult, error) {
	var r wire.ListResult
	return r, c.Call(ctx, wire.MethodList, wire.Empty{}, &r)
}

// Show asks the app to bring its main window forward (no hello needed). It
// reports false when the bridge has no window to show (an agentgate serving
// without a display).
func (c *Client) Show() (shown bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), dialTimeout)
	defer cancel()
	var r wire.ShowResult
	err = c.Call(ctx, wire.MethodShow, wire.Empty{}, &r)
	return r.Shown, err
}

// HandOver asks an agentgate serving without windows to hand the socket
// over (no hello needed): it reports true when that bridge stops accepting
// and releases the socket, false when it keeps serving (it has windows).
func (c *Client) HandOver() (handingOver bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), dialTimeout)
	defer cancel()
	var r wire.HandOverResult
	err = c.Call(ctx, wire.MethodHandOver, wire.Empty{}, &r)
	return r.HandingOver, err
}

// Closed reports whether the connection has ended (the bridge closed it,
// or Close was called): a call would fail with ErrClosed before sending.
func (c *Client) Closed() bool { return isClosed(c.done) }

// HookAsk asks the person about a command the agent's own shell will run;
// it blocks until they answer or the question expires.
func (c *Client) HookAsk(ctx context.Context, p wire.HookAskParams) (wire.HookAskResult, error) {
	var r wire.HookAskResult
	return r, c.Call(ctx, wire.MethodHookAsk, p, &r)
}

// WaitDone calls Wait until the run reaches a final state or ctx ends,
// collecting all of stdout (text encoding). Each round waits up to
// wire's default; refusals (denied, expired, …) are returned as *Error.
func (c *Client) WaitDone(ctx context.Context, runID string) (wire.WaitResult, []byte, error) {
	var out []byte
	var cursor int64
	for {
		r, err := c.Wait(ctx, wire.WaitParams{RunID: runID, Cursor: cursor})
		if err != nil {
			return r, out, err
		}
		out = append(out, r.Stdout.Data...)
		cursor = r.Stdout.Cursor
		if isFinal(r.State) && (r.Stdout.EOF || r.Stdout.Data == "") {
			return r, out, nil
		}
	}
}

// isFinal reports whether a protocol state is final.
func isFinal(state string) bool {
	switch state {
	case wire.StatePending, wire.StateQueued, "running", "":
		return false
	}
	return true
}
