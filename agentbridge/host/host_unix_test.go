//go:build unix

package host_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/agentbridge"
	"github.com/agentgate/agentgate/agentbridge/audit"
	"github.com/agentgate/agentgate/agentbridge/client"
	"github.com/agentgate/agentgate/agentbridge/host"
	"github.com/agentgate/agentgate/agentbridge/wire"
	"github.com/agentgate/agentgate/exec"
	"github.com/agentgate/agentgate/exec/changes"
	"github.com/agentgate/agentgate/prefs"
	"github.com/agentgate/agentgate/unixpg"
)

func TestMain(m *testing.M) {
	unixpg.MaybeSupervise() // the executor re-executes this binary as each run's supervisor
	os.Exit(m.Run())
}

// options returns host options over fresh private directories and a short
// socket path (sun_path holds 104–108 bytes).
func options(t *testing.T) host.Options {
	t.Helper()
	base := t.TempDir()
	sockDir, err := os.MkdirTemp("", "agh")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	state := filepath.Join(base, "state")
	// The hosts share the keeper process they start; it ends before the
	// state directory is removed.
	t.Cleanup(func() { changes.StopKeeper(state) })
	return host.Options{
		Paths:     prefs.Paths{ConfigDir: filepath.Join(base, "config"), StateDir: state},
		Kind:      exec.HostApp,
		AuditHost: "app",
		Socket:    filepath.Join(sockDir, "bridge.sock"),
		Env:       os.Environ(),
	}
}

// session dials the host's socket and says hello for a fresh project.
func session(t *testing.T, socket string) *client.Client {
	t.Helper()
	c, err := client.Dial(socket)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	project, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Hello(context.Background(), wire.HelloParams{ProjectRoot: project, Client: "host_test"}); err != nil {
		t.Fatalf("hello: %v", err)
	}
	return c
}

// TestHostServesTheGate assembles a serving host with no approver: a
// rule-allowed command runs, another is refused at once with the host's
// reason, a second host on the same socket is turned away, and after Close
// the socket is free for the next one.
func TestHostServesTheGate(t *testing.T) {
	opts := options(t)
	opts.NoApproverReason = "nobody can be asked here (test)"
	h, err := host.Open(context.Background(), opts)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer h.Close()
	if h.SettingsErr != nil || h.Listener == nil || h.Server != nil {
		t.Fatalf("settings error %v, listener %v, server %v before Serve", h.SettingsErr, h.Listener, h.Server)
	}
	h.Serve(agentbridge.ServerOptions{})
	if _, err := h.Store.Add(prefs.ScopeGlobal, "", "", []string{"echo"}); err != nil {
		t.Fatal(err)
	}
	c := session(t, opts.Socket)
	ctx := context.Background()
	res, err := c.Propose(ctx, wire.ProposeParams{Argv: []string{"echo", "hi"}})
	if err != nil {
		t.Fatalf("propose echo: %v", err)
	}
	w, out, err := c.WaitDone(ctx, res.RunID)
	if err != nil || w.State != "exited" || string(out) != "hi\n" {
		t.Fatalf("echo: %+v %q %v", w, out, err)
	}
	_, err = c.Propose(ctx, wire.ProposeParams{Argv: []string{"true"}})
	if client.Code(err) != wire.RefuseNoApprover || !strings.Contains(err.Error(), "nobody can be asked here (test)") {
		t.Fatalf("unallowed command: %v, want no_approver with the host's reason", err)
	}

	if _, err := host.Open(context.Background(), opts); !errors.Is(err, agentbridge.ErrAlreadyRunning) {
		t.Fatalf("second host on the same socket: %v, want ErrAlreadyRunning", err)
	}

	h.Close()
	h.Close() // idempotent
	refused := false
	for e, err := range audit.Entries(h.AuditPath, audit.OldestFirst) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Kind == audit.KindRefusal && e.Code == wire.RefuseNoApprover && e.Host == "app" {
			refused = true
		}
	}
	if !refused {
		t.Fatalf("the refusal is not in the audit log")
	}
	next, err := host.Open(context.Background(), opts)
	if err != nil {
		t.Fatalf("a host after Close: %v", err)
	}
	next.Close()
}

// TestCloseEndsRunsAndRecordsThem starts a long run and closes the host:
// Close returns only after the run was cancelled and its final record
// written, so the next start has nothing to mark lost.
func TestCloseEndsRunsAndRecordsThem(t *testing.T) {
	opts := options(t)
	opts.Socket = "" // an in-process host, as `agentgate run` is
	h, err := host.Open(context.Background(), opts)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	h.Serve(agentbridge.ServerOptions{}) // no socket: nothing to serve
	if h.Listener != nil || h.Server != nil {
		t.Fatalf("a host without a socket listens")
	}
	if _, err := h.Store.Add(prefs.ScopeGlobal, "", "", []string{"sleep"}); err != nil {
		t.Fatal(err)
	}
	project, _ := filepath.EvalSymlinks(t.TempDir())
	s, werr := h.Broker.OpenSession(wire.HelloParams{ProjectRoot: project}, wire.Peer{PID: os.Getpid()})
	if werr != nil {
		t.Fatal(werr)
	}
	res, werr := s.Propose(wire.ProposeParams{Argv: []string{"sleep", "60"}})
	if werr != nil || res.State != "running" {
		t.Fatalf("propose sleep: %+v %v", res, werr)
	}
	h.Close()
	recs, err := exec.ListRecords(opts.Paths.StateDir)
	if err != nil || len(recs) != 1 {
		t.Fatalf("records: %v %v", recs, err)
	}
	if recs[0].State != exec.StateCancelled || recs[0].HostKind != exec.HostApp {
		t.Fatalf("record after Close: state %s host %s, want cancelled app", recs[0].State, recs[0].HostKind)
	}
}
