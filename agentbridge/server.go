package agentbridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"github.com/agentgate/agentgate/agentbridge/audit"
	"github.com/agentgate/agentgate/agentbridge/wire"
)

// ServerName is sent in hello results: the server and protocol revision.
const ServerName = "agentgate-bridge/1"

// Per-connection bounds that are not settings.
const (
	// maxInFlight caps the requests one connection may have running at once;
	// the connection's reader waits for a free slot (back-pressure).
	maxInFlight = 64
	// writeTimeout bounds writing one response; a client that stops reading
	// is disconnected.
	writeTimeout = 30 * time.Second
)

// ServerOptions configure a Server.
type ServerOptions struct {
	// OnShow brings the app's main window forward (app.show); nil when
	// there is no window (app.show then answers {"shown": false}). It is
	// called on the connection's reading goroutine and must not block
	// (the desktop app hands it to fyne.Do).
	OnShow func()
	// OnHandOver is called when the desktop app asks this bridge to hand the
	// socket over (app.hand_over); nil when it has windows of its own and
	// keeps serving (app.hand_over then answers {"handing_over": false}).
	// Like OnShow it is called on the connection's reading goroutine and
	// must not block.
	OnHandOver func()
	// Logf receives diagnostics (refused connections, write failures); nil
	// means standard error.
	Logf func(format string, args ...any)
}

// Server serves the bridge protocol on a listener, one goroutine per
// connection, with the broker behind it.
type Server struct {
	// b is the broker.
	b *Broker
	// opts are the options.
	opts ServerOptions

	// mu guards the fields below.
	mu sync.Mutex
	// conns are the open connections.
	conns map[*conn]struct{}
	// listeners are the listeners being served.
	listeners []net.Listener
	// closed is set by Close.
	closed bool
	// notAccepting is set by StopAccepting (and Close): Serve returns.
	notAccepting bool
	// wg tracks connection goroutines.
	wg sync.WaitGroup
}

// NewServer returns a server for b.
func NewServer(b *Broker, opts ServerOptions) *Server {
	if opts.Logf == nil {
		opts.Logf = func(format string, args ...any) { fmt.Fprintf(os.Stderr, "agentgate bridge: "+format+"\n", args...) }
	}
	return &Server{b: b, opts: opts, conns: make(map[*conn]struct{})}
}

// ErrServerClosed is returned by Serve after Close.
var ErrServerClosed = errors.New("agentgate bridge: server closed")

// Serve accepts connections on ln until Close (returning ErrServerClosed)
// or an accept error. At accept, the peer's credentials are read (Linux
// SO_PEERCRED, macOS LOCAL_PEERCRED): a connection from another user, or
// whose credentials cannot be read, is closed at once and audited, as is
// one beyond the connection cap (it first gets an error frame,
// too_many_connections).
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closed || s.notAccepting {
		s.mu.Unlock()
		return ErrServerClosed
	}
	s.listeners = append(s.listeners, ln)
	s.mu.Unlock()
	for {
		nc, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			stopped := s.closed || s.notAccepting
			s.mu.Unlock()
			if stopped {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			return fmt.Errorf("accept on the bridge socket: %w", err)
		}
		s.accept(nc)
	}
}

// accept checks a new connection and starts serving it.
func (s *Server) accept(nc net.Conn) {
	peer, err := wire.PeerOf(nc)
	if err != nil || !peer.SameUser() {
		uid := peer.UID
		why := "another user"
		if err != nil {
			why = "credentials unreadable: " + err.Error()
		}
		s.b.record(nil, audit.Entry{Kind: audit.KindConnectionRefused, PeerUID: &uid, PeerPID: peer.PID, PeerExe: peer.Exe, Message: why})
		s.opts.Logf("refused a connection from uid %d pid %d (%s)", peer.UID, peer.PID, why)
		nc.Close()
		return
	}
	settings := s.b.cfg.Settings()
	s.mu.Lock()
	if s.closed || len(s.conns) >= settings.MaxConnections {
		closed := s.closed
		s.mu.Unlock()
		msg := fmt.Sprintf("agentgate already has %d agent connections (the limit); close some and retry", settings.MaxConnections)
		if closed {
			msg = "agentgate is shutting down"
		}
		nc.SetWriteDeadline(time.Now().Add(time.Second))
		nc.Write(wire.EncodeResponse(nil, nil, wire.Refuse(wire.RefuseTooManyConns, msg)))
		s.b.record(nil, audit.Entry{Kind: audit.KindConnectionRefused, PeerPID: peer.PID, PeerExe: peer.Exe, Code: wire.RefuseTooManyConns, Message: msg})
		nc.Close()
		return
	}
	ctx, cancel := context.WithCancel(s.b.ctx)
	c := &conn{srv: s, nc: nc, peer: peer, ctx: ctx, cancel: cancel, idle: settings.IdleTimeout,
		lastActive: time.Now(), slots: make(chan struct{}, maxInFlight)}
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		c.serve()
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
	}()
}

// Connections returns how many agent connections are open.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// StopAccepting closes the listeners while the open connections go on
// being served: for a *Listener the socket file is removed and the
// single-instance lock released, so another agentgate can listen at once.
// Serve then returns ErrServerClosed.
func (s *Server) StopAccepting() {
	s.mu.Lock()
	s.notAccepting = true
	listeners := s.listeners
	s.mu.Unlock()
	for _, ln := range listeners {
		ln.Close()
	}
}

// Close stops accepting, closes every connection (their sessions end:
// pending proposals are withdrawn, queued and running runs cancelled; see
// Session.Close) and waits for the connection goroutines.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	for _, ln := range s.listeners {
		ln.Close()
	}
	for c := range s.conns {
		c.nc.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return nil
}

// conn is one agent connection.
type conn struct {
	// srv is the server.
	srv *Server
	// nc is the socket.
	nc net.Conn
	// peer is what the OS said about the other end.
	peer wire.Peer
	// ctx ends when the connection ends, withdrawing its long polls.
	ctx context.Context
	// cancel ends ctx.
	cancel context.CancelFunc
	// idle is the idle timeout.
	idle time.Duration
	// slots bounds the requests in flight.
	slots chan struct{}
	// wmu serialises response writes.
	wmu sync.Mutex
	// handlers tracks request goroutines.
	handlers sync.WaitGroup

	// mu guards the fields below.
	mu sync.Mutex
	// session is set by hello.
	session *Session
	// inFlight counts requests being handled.
	inFlight int
	// lastActive is when the last request arrived or finished.
	lastActive time.Time
}

// serve reads frames until the connection ends.
func (c *conn) serve() {
	watchdog := time.AfterFunc(c.idle, c.idleCheck)
	defer func() {
		watchdog.Stop()
		c.cancel()
		c.nc.Close()
		c.handlers.Wait()
		if s := c.getSession(); s != nil {
			s.Close()
		}
	}()
	fr := wire.NewFrameReader(c.nc, wire.MaxFrame)
	for {
		frame, err := fr.Next()
		if errors.Is(err, wire.ErrFrameTooLarge) {
			c.reply(nil, &wire.Error{Code: wire.CodeInvalidRequest, Message: fmt.Sprintf("frame too large: a request may be at most %d bytes; the connection is closed", wire.MaxFrame),
				Data: &wire.ErrorData{Code: wire.RefuseFrameTooLarge, Message: fmt.Sprintf("frame too large: a request may be at most %d bytes; the connection is closed", wire.MaxFrame)}})
			return
		}
		if err != nil {
			return
		}
		c.touch(0)
		req, id, rerr := wire.DecodeFrame(frame)
		if rerr != nil {
			c.reply(id, rerr)
			continue
		}
		c.dispatch(req)
	}
}

// getSession returns the session, nil before hello.
func (c *conn) getSession() *Session {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.session
}

// touch records activity and adjusts the in-flight count by delta.
func (c *conn) touch(delta int) {
	c.mu.Lock()
	c.inFlight += delta
	c.lastActive = time.Now()
	c.mu.Unlock()
}

// idleCheck closes the connection when nothing arrived for the idle timeout
// and nothing is in flight, pending, queued or running (closing it would
// end the session's runs); otherwise it checks again later.
func (c *conn) idleCheck() {
	if c.ctx.Err() != nil {
		return
	}
	c.mu.Lock()
	busy := c.inFlight > 0
	quiet := time.Since(c.lastActive)
	s := c.session
	c.mu.Unlock()
	if s != nil {
		busy = busy || s.busy()
	}
	if !busy && quiet >= c.idle {
		c.srv.opts.Logf("closing a connection idle for %v", quiet.Round(time.Second))
		c.nc.Close()
		return
	}
	next := c.idle - quiet
	if busy || next <= 0 {
		next = c.idle
	}
	time.AfterFunc(next, c.idleCheck)
}

// reply writes one response; a write failure closes the connection.
func (c *conn) reply(id json.RawMessage, rerr *wire.Error) {
	c.write(wire.EncodeResponse(id, nil, rerr))
}

// write writes one frame.
func (c *conn) write(frame []byte) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.nc.SetWriteDeadline(time.Now().Add(writeTimeout))
	if _, err := c.nc.Write(frame); err != nil {
		c.nc.Close()
	}
}

// dispatch handles one request: hello, app.show and app.hand_over in order on the reading
// goroutine (so a pipelined request after hello sees the session), every
// other method on a goroutine of its own, so a long poll never holds up the
// connection.
func (c *conn) dispatch(req *wire.Request) {
	m, ok := methods[req.Method]
	if !ok {
		c.answer(req, nil, wire.NewError(wire.CodeMethodNotFound, fmt.Sprintf("method not found: %q; see docs/protocol.md for the methods", req.Method)))
		return
	}
	session := c.getSession()
	if m.needsSession && session == nil {
		c.answer(req, nil, wire.Refuse(wire.RefuseHelloRequired, fmt.Sprintf("%s needs a session: send hello {provider, project_root, client} first on this connection", req.Method)))
		return
	}
	if m.inline {
		result, werr := m.handle(c.ctx, c, session, req.Params)
		c.answer(req, result, werr)
		return
	}
	select {
	case c.slots <- struct{}{}:
	case <-c.ctx.Done():
		return
	}
	c.touch(1)
	c.handlers.Add(1)
	go func() {
		defer func() {
			<-c.slots
			c.touch(-1)
			c.handlers.Done()
		}()
		result, werr := m.handle(c.ctx, c, session, req.Params)
		c.answer(req, result, werr)
	}()
}

// answer replies unless the request is a notification.
func (c *conn) answer(req *wire.Request, result any, werr *wire.Error) {
	if req.IsNotification() {
		return
	}
	c.write(wire.EncodeResponse(req.ID, result, werr))
}
