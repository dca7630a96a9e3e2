package agentbridge_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentgate/agentgate/agentbridge"
	"github.com/agentgate/agentgate/agentbridge/bridgetest"
	"github.com/agentgate/agentgate/agentbridge/wire"
	"github.com/agentgate/agentgate/exec/platformtest"
	"github.com/agentgate/agentgate/prefs"
)

// shortDir returns a private directory with a short path (sun_path limits).
func shortDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "agl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func TestSecondStartShowsTheRunningApp(t *testing.T) {
	var shown atomic.Int32
	b := bridgetest.Start(t, bridgetest.Options{OnShow: func() { shown.Add(1) }})
	ln, err := agentbridge.Listen(b.Socket)
	if !errors.Is(err, agentbridge.ErrAlreadyRunning) {
		if ln != nil {
			ln.Close()
		}
		t.Fatalf("second Listen = %v, want ErrAlreadyRunning", err)
	}
	if shown.Load() != 1 {
		t.Fatalf("app.show calls = %d, want 1", shown.Load())
	}
	// The first bridge still serves.
	b.Session(t, "")
}

func TestStaleSocketIsReplaced(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("unlink-on-close semantics differ")
	}
	path := filepath.Join(shortDir(t), "bridge.sock")
	stale, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	stale.(*net.UnixListener).SetUnlinkOnClose(false)
	stale.Close() // a crashed app leaves the file behind
	if _, err := os.Lstat(path); err != nil {
		t.Fatalf("stale socket file missing: %v", err)
	}
	start := time.Now()
	ln, err := agentbridge.Listen(path)
	if err != nil {
		t.Fatalf("Listen over a stale socket: %v", err)
	}
	defer ln.Close()
	if d := time.Since(start); d > 2*time.Second {
		t.Logf("replacing the stale socket took %v", d)
	}
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
		}
	}()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatalf("dial the new socket: %v", err)
	}
	c.Close()
}

func TestListenRefusesSharedDirectory(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Unix permissions")
	}
	dir := shortDir(t)
	os.Chmod(dir, 0o755)
	if _, err := agentbridge.Listen(filepath.Join(dir, "bridge.sock")); !wire.IsNotPrivate(err) {
		t.Fatalf("Listen in a 0755 directory = %v, want refused", err)
	}
}

func TestConcurrentStartsYieldOneBridge(t *testing.T) {
	platformtest.RequireUnixSockets(t)
	path := filepath.Join(shortDir(t), "bridge.sock")
	var wg sync.WaitGroup
	var won, lost atomic.Int32
	lns := make(chan *agentbridge.Listener, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ln, err := agentbridge.Listen(path)
			switch {
			case err == nil:
				won.Add(1)
				lns <- ln
			case errors.Is(err, agentbridge.ErrAlreadyRunning):
				lost.Add(1)
			default:
				t.Errorf("Listen: %v", err)
			}
		}()
	}
	wg.Wait()
	close(lns)
	for ln := range lns {
		ln.Close()
	}
	if won.Load() != 1 || lost.Load() != 7 {
		t.Fatalf("%d bridges started, %d declined; want 1 and 7", won.Load(), lost.Load())
	}
}

func TestConnectionCap(t *testing.T) {
	b := bridgetest.Start(t, bridgetest.Options{Settings: func(s *prefs.Settings) { s.MaxConnections = 2 }})
	b.Session(t, "")
	b.Session(t, "")
	c := dialRaw(t, b)
	r := c.recv()
	if r.Error == nil || r.Error.Data == nil || r.Error.Data.Code != wire.RefuseTooManyConns {
		t.Fatalf("third connection got %+v, want too_many_connections", r)
	}
	c.expectClosed()
}

func TestIdleConnectionClosed(t *testing.T) {
	b := bridgetest.Start(t, bridgetest.Options{Settings: func(s *prefs.Settings) { s.IdleTimeout = 200 * time.Millisecond }})
	idle := dialRaw(t, b)
	idle.hello(b)
	idle.expectClosed()

	// A connection with a long poll in flight is not idle.
	b.Allow(t, "sleep")
	c := b.Session(t, "")
	ctx := context.Background()
	res, err := c.Propose(ctx, wire.ProposeParams{Argv: []string{"sleep", "1"}})
	if err != nil {
		t.Fatal(err)
	}
	w, err := c.Wait(ctx, wire.WaitParams{RunID: res.RunID})
	if err != nil || w.State != "exited" {
		t.Fatalf("wait across the idle timeout = %+v, %v", w, err)
	}
}
