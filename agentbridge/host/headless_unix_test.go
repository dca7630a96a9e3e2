//go:build unix

package host_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgate/agentgate/agentbridge"
	"github.com/agentgate/agentgate/agentbridge/audit"
	"github.com/agentgate/agentgate/agentbridge/client"
	"github.com/agentgate/agentgate/agentbridge/host"
	"github.com/agentgate/agentgate/agentbridge/wire"
	"github.com/agentgate/agentgate/exec"
	"github.com/agentgate/agentgate/prefs"
)

// headless runs host.RunHeadless for the test; wait returns its result.
type headless struct {
	// log collects what it logs.
	mu  sync.Mutex
	log []string
	// done receives RunHeadless's result.
	done chan error
	// stop ends its context.
	stop context.CancelFunc
}

// startHeadless starts a headless host on opts and waits for its socket.
func startHeadless(t *testing.T, opts host.Options) *headless {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	hl := &headless{done: make(chan error, 1), stop: stop}
	go func() {
		hl.done <- host.RunHeadless(ctx, opts, "test: no DISPLAY", func(format string, args ...any) {
			hl.mu.Lock()
			hl.log = append(hl.log, fmt.Sprintf(format, args...))
			hl.mu.Unlock()
		})
	}()
	t.Cleanup(func() {
		stop()
		<-hl.done
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		if c, err := client.Dial(opts.Socket); err == nil {
			c.Close()
			return hl
		}
		if time.Now().After(deadline) {
			t.Fatalf("the headless host never served %s", opts.Socket)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// logged returns what the headless host logged, one line per call.
func (hl *headless) logged() string {
	hl.mu.Lock()
	defer hl.mu.Unlock()
	return strings.Join(hl.log, "\n")
}

// allow writes a global rule for tokens, as a person would.
func allow(t *testing.T, opts host.Options, tokens ...string) {
	t.Helper()
	store, err := prefs.Open(opts.Paths)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Add(prefs.ScopeGlobal, "", "", tokens); err != nil {
		t.Fatal(err)
	}
}

// TestHeadlessRunsAllowedAndRefusesTheRestAtOnce: without windows, a
// rule-allowed command runs, any other proposal or hook question is refused
// at once with a reason naming the missing display, and the audit log says
// so.
func TestHeadlessRunsAllowedAndRefusesTheRestAtOnce(t *testing.T) {
	opts := options(t)
	allow(t, opts, "echo")
	hl := startHeadless(t, opts)
	// The socket accepts as soon as it listens; the log line follows.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if log := hl.logged(); strings.Contains(log, "no display to open windows on (test: no DISPLAY)") && strings.Contains(log, "without windows") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the log does not say it serves without windows: %q", hl.logged())
		}
	}
	c := session(t, opts.Socket)
	ctx := context.Background()
	res, err := c.Propose(ctx, wire.ProposeParams{Argv: []string{"echo", "hi"}})
	if err != nil {
		t.Fatalf("propose echo: %v", err)
	}
	if w, out, err := c.WaitDone(ctx, res.RunID); err != nil || w.State != "exited" || string(out) != "hi\n" {
		t.Fatalf("echo: %+v %q %v", w, out, err)
	}
	_, err = c.Propose(ctx, wire.ProposeParams{Argv: []string{"true"}})
	if client.Code(err) != wire.RefuseNoApprover || !strings.Contains(err.Error(), "without a display to show an approval card on (test: no DISPLAY)") ||
		!strings.Contains(err.Error(), "desktop session") || !strings.Contains(err.Error(), "agentgate run") {
		t.Fatalf("unallowed proposal: %v, want no_approver naming the display and the ways to approve", err)
	}
	_, err = c.HookAsk(ctx, wire.HookAskParams{CommandLine: "rm -rf build", Cwd: "/"})
	if client.Code(err) != wire.RefuseNoApprover || !strings.Contains(err.Error(), "without a display") {
		t.Fatalf("hook question: %v, want no_approver naming the display", err)
	}
	if shown, err := c.Show(); err != nil || shown {
		t.Fatalf("app.show: shown %v, %v; want false (no window)", shown, err)
	}

	hl.stop()
	if err := <-hl.done; err != nil {
		t.Fatalf("RunHeadless: %v", err)
	}
	hl.done <- nil // for the cleanup
	refusals := 0
	for e, err := range audit.Entries(audit.Path(opts.Paths.StateDir), audit.OldestFirst) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Kind == audit.KindRefusal && e.Code == wire.RefuseNoApprover {
			if e.Host != "headless" || !strings.Contains(e.Message, "without a display") {
				t.Fatalf("refusal entry: %+v", e)
			}
			refusals++
		}
	}
	if refusals != 2 {
		t.Fatalf("%d no_approver refusals in the audit log, want 2", refusals)
	}
}

// TestHandOverToTheDesktopApp: a desktop host takes the socket over from a
// headless one that runs a command. The headless host stops taking
// proposals at once, keeps serving its running command to its agent, and
// exits once the command ends — here cancelled from the desktop host, as the
// Processes window would.
func TestHandOverToTheDesktopApp(t *testing.T) {
	opts := options(t)
	allow(t, opts, "sleep")
	hl := startHeadless(t, opts)
	c := session(t, opts.Socket)
	ctx := context.Background()
	res, err := c.Propose(ctx, wire.ProposeParams{Argv: []string{"sleep", "60"}})
	if err != nil || res.State != "running" {
		t.Fatalf("propose sleep: %+v %v", res, err)
	}

	if _, err := host.Open(ctx, opts); !errors.Is(err, agentbridge.ErrRunningWithoutWindows) {
		t.Fatalf("a host that does not take over: %v, want ErrRunningWithoutWindows", err)
	}
	desk := opts
	desk.TakeOver = true
	app, err := host.Open(ctx, desk)
	if err != nil {
		t.Fatalf("taking over: %v", err)
	}
	defer app.Close()
	app.Serve(agentbridge.ServerOptions{OnShow: func() {}})

	// The old connection: no new proposal, but the running one is served.
	if _, err := c.Propose(ctx, wire.ProposeParams{Argv: []string{"sleep", "1"}}); client.Code(err) != wire.RefuseShuttingDown {
		t.Fatalf("a proposal after the hand-over: %v, want shutting_down", err)
	}
	zero := int64(0)
	if w, err := c.Wait(ctx, wire.WaitParams{RunID: res.RunID, WaitMS: &zero}); err != nil || w.State != "running" {
		t.Fatalf("the handed-over run: %+v %v", w, err)
	}
	// A new connection reaches the desktop host.
	c2 := session(t, opts.Socket)
	if shown, err := c2.Show(); err != nil || !shown {
		t.Fatalf("app.show on the new bridge: %v %v", shown, err)
	}
	select {
	case err := <-hl.done:
		t.Fatalf("the headless host exited with a command still running: %v", err)
	default:
	}

	// Cancelled from the desktop host, as the Processes window does once
	// it shows the run's record (written in the background).
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if recs, _ := exec.ListRecords(opts.Paths.StateDir); len(recs) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the handed-over run's record never appeared")
		}
	}
	if err := app.Broker.CancelRun(res.RunID); err != nil {
		t.Fatalf("cancel from the app: %v", err)
	}
	w, _, err := c.WaitDone(ctx, res.RunID)
	if err != nil || w.State != string(exec.StateCancelled) {
		t.Fatalf("the handed-over run after cancel: %+v %v", w, err)
	}
	c.Close() // the agent hangs up
	select {
	case err := <-hl.done:
		if err != nil {
			t.Fatalf("RunHeadless: %v", err)
		}
		hl.done <- nil
	case <-time.After(60 * time.Second):
		t.Fatalf("the headless host did not exit after its last command ended; log:\n%s", hl.logged())
	}
	if !strings.Contains(hl.logged(), "handed over") {
		t.Fatalf("the log does not tell of the hand-over:\n%s", hl.logged())
	}
	recs, err := exec.ListRecords(opts.Paths.StateDir)
	if err != nil || len(recs) != 1 || recs[0].State != exec.StateCancelled {
		t.Fatalf("records: %+v %v", recs, err)
	}
}
