package agentbridge

import (
	"context"
	"encoding/json"

	"github.com/agentgate/agentgate/agentbridge/wire"
)

// method is one protocol method's handler and how it is scheduled.
type method struct {
	// needsSession is false only for hello, app.show and app.hand_over.
	needsSession bool
	// inline methods run on the connection's reading goroutine, in order.
	inline bool
	// handle decodes params and does the work.
	handle func(ctx context.Context, c *conn, s *Session, params json.RawMessage) (any, *wire.Error)
}

// methods is the protocol's method table (docs/protocol.md).
var methods = map[string]method{
	wire.MethodHello:    {needsSession: false, inline: true, handle: handleHello},
	wire.MethodShow:     {needsSession: false, inline: true, handle: handleShow},
	wire.MethodHandOver: {needsSession: false, inline: true, handle: handleHandOver},
	wire.MethodPropose:  {needsSession: true, handle: handlePropose},
	wire.MethodWait:     {needsSession: true, handle: handleWait},
	wire.MethodOutput:   {needsSession: true, handle: handleOutput},
	wire.MethodCancel:   {needsSession: true, handle: handleCancel},
	wire.MethodList:     {needsSession: true, handle: handleList},
	wire.MethodHookAsk:  {needsSession: true, handle: handleHookAsk},
}

// handleHello opens the connection's session.
func handleHello(_ context.Context, c *conn, s *Session, params json.RawMessage) (any, *wire.Error) {
	if s != nil {
		return nil, wire.Refuse(wire.RefuseHelloRepeated, "this connection already said hello (session "+s.ID+"); open a new connection for another project or provider")
	}
	var p wire.HelloParams
	if werr := wire.DecodeParams(params, &p); werr != nil {
		return nil, werr
	}
	session, werr := c.srv.b.OpenSession(p, c.peer)
	if werr != nil {
		return nil, werr
	}
	c.mu.Lock()
	c.session = session
	c.mu.Unlock()
	return wire.HelloResult{Session: session.ID, ProjectRoot: session.ProjectRoot, Server: ServerName}, nil
}

// handleShow brings the main window forward.
func handleShow(_ context.Context, c *conn, _ *Session, params json.RawMessage) (any, *wire.Error) {
	var p wire.Empty
	if werr := wire.DecodeParams(params, &p); werr != nil {
		return nil, werr
	}
	if c.srv.opts.OnShow == nil {
		return wire.ShowResult{Shown: false}, nil
	}
	c.srv.opts.OnShow()
	return wire.ShowResult{Shown: true}, nil
}

// handleHandOver starts handing the socket over to the desktop app asking,
// when this bridge serves without windows.
func handleHandOver(_ context.Context, c *conn, _ *Session, params json.RawMessage) (any, *wire.Error) {
	var p wire.Empty
	if werr := wire.DecodeParams(params, &p); werr != nil {
		return nil, werr
	}
	if c.srv.opts.OnHandOver == nil {
		return wire.HandOverResult{HandingOver: false}, nil
	}
	c.srv.opts.OnHandOver()
	return wire.HandOverResult{HandingOver: true}, nil
}

// handlePropose handles exec.propose; with wait_ms it goes on waiting as
// exec.wait does and returns both results in one answer.
func handlePropose(ctx context.Context, _ *conn, s *Session, params json.RawMessage) (any, *wire.Error) {
	var p wire.ProposeParams
	if werr := wire.DecodeParams(params, &p); werr != nil {
		return nil, werr
	}
	if p.WaitMS == nil {
		return result(s.Propose(p))
	}
	// Checked before anything is proposed, so that a bad encoding cannot
	// leave a run behind an error.
	if _, werr := wire.CheckEncoding(p.Encoding); werr != nil {
		return nil, werr
	}
	res, werr := s.Propose(p)
	if werr != nil {
		return nil, werr
	}
	w, werr := s.Wait(ctx, wire.WaitParams{RunID: res.RunID, WaitMS: p.WaitMS, MaxBytes: p.MaxBytes, Encoding: p.Encoding})
	if werr != nil {
		return nil, werr
	}
	res.Wait = &w
	return res, nil
}

// handleWait handles exec.wait.
func handleWait(ctx context.Context, _ *conn, s *Session, params json.RawMessage) (any, *wire.Error) {
	var p wire.WaitParams
	if werr := wire.DecodeParams(params, &p); werr != nil {
		return nil, werr
	}
	return result(s.Wait(ctx, p))
}

// handleOutput handles exec.output.
func handleOutput(ctx context.Context, _ *conn, s *Session, params json.RawMessage) (any, *wire.Error) {
	var p wire.OutputParams
	if werr := wire.DecodeParams(params, &p); werr != nil {
		return nil, werr
	}
	return result(s.Output(ctx, p))
}

// handleCancel handles exec.cancel.
func handleCancel(ctx context.Context, _ *conn, s *Session, params json.RawMessage) (any, *wire.Error) {
	var p wire.RunIDParams
	if werr := wire.DecodeParams(params, &p); werr != nil {
		return nil, werr
	}
	return result(s.Cancel(ctx, p.RunID))
}

// handleList handles exec.list.
func handleList(_ context.Context, _ *conn, s *Session, params json.RawMessage) (any, *wire.Error) {
	var p wire.Empty
	if werr := wire.DecodeParams(params, &p); werr != nil {
		return nil, werr
	}
	return s.List(), nil
}

// handleHookAsk handles hook.ask.
func handleHookAsk(ctx context.Context, _ *conn, s *Session, params json.RawMessage) (any, *wire.Error) {
	var p wire.HookAskParams
	if werr := wire.DecodeParams(params, &p); werr != nil {
		return nil, werr
	}
	return result(s.HookAsk(ctx, p))
}

// result adapts a typed (result, error) pair, so that a nil *wire.Error is
// not returned as a non-nil interface.
func result[T any](r T, werr *wire.Error) (any, *wire.Error) {
	if werr != nil {
		return nil, werr
	}
	return r, nil
}
