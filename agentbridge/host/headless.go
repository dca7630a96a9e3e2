package host

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentgate/agentgate/agentbridge"
	"github.com/agentgate/agentgate/agentbridge/client"
	"github.com/agentgate/agentgate/exec"
)

// takeOverPatience bounds how long a desktop app waits for an agentgate
// serving without windows to release the socket after it agreed to hand
// over (it does so at once; the bound is for one that is stuck).
const takeOverPatience = 15 * time.Second

// takeOver asks the agentgate that serves socket without windows to hand
// over, then listens on the socket as soon as it is free.
func takeOver(socket string) (*agentbridge.Listener, error) {
	c, err := client.Dial(socket)
	if err != nil {
		return nil, fmt.Errorf("asking the agentgate that serves %s without windows to hand over: %w", socket, err)
	}
	handing, err := c.HandOver()
	c.Close()
	if err != nil {
		return nil, fmt.Errorf("asking the agentgate that serves %s without windows to hand over: %w", socket, err)
	}
	if !handing {
		return nil, agentbridge.ErrAlreadyRunning
	}
	deadline := time.Now().Add(takeOverPatience)
	for {
		ln, err := agentbridge.Listen(socket)
		switch {
		case err == nil || !errors.Is(err, agentbridge.ErrAlreadyRunning):
			return ln, err
		case !errors.Is(err, agentbridge.ErrRunningWithoutWindows) && windowShown(socket):
			// Another desktop agentgate took the socket first.
			return nil, agentbridge.ErrAlreadyRunning
		case time.Now().After(deadline):
			return nil, fmt.Errorf("the agentgate serving %s without windows agreed to hand over but still holds the socket after %v; end it (`agentgate ps` shows its runs) and start agentgate again", socket, takeOverPatience)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// windowShown reports whether the agentgate serving socket answers app.show
// by showing a window.
func windowShown(socket string) bool {
	c, err := client.Dial(socket)
	if err != nil {
		return false
	}
	defer c.Close()
	shown, err := c.Show()
	return err == nil && shown
}

// HeadlessRefusal is the no_approver refusal of an agentgate serving without
// windows, where why names the display that is missing or unusable
// ("neither DISPLAY nor WAYLAND_DISPLAY is set"): nothing ran, and how a
// person can approve.
func HeadlessRefusal(why string) string {
	return "no allow-list rule allows this command, and agentgate is running without a display to show an approval card on (" + why + "), " +
		"so nobody can approve it here; nothing ran. " +
		"To approve commands, the person starts agentgate in their desktop session (it takes over from this one), " +
		"or runs the command with `agentgate run -- COMMAND` at a terminal; an allow-list rule (`agentgate allow add`) lets it run unattended"
}

// handedOverRefusal is what a proposal to an agentgate that handed over is
// told.
const handedOverRefusal = "this agentgate served without windows and has handed over to the agentgate app in the desktop session; nothing ran: connect again to reach the app"

// RunHeadless serves the gate on opts.Socket without windows, for when no
// window can be opened (why names the missing display), until ctx ends or a
// desktop agentgate asks it to hand over. Nobody is asked: rule- and
// grant-allowed proposals run, every other one is refused at once with
// HeadlessRefusal(why) (code no_approver), so it never holds a pending
// proposal. Its audit lines name host "headless". logf receives what a person reading its log needs (it starts by
// saying it serves without windows, and why).
//
// When ctx ends, it closes as Close does (cancelling its runs). On a
// hand-over it stops accepting at once (the socket and its lock are released
// for the desktop app), refuses new proposals on the connections it still
// has (shutting_down: connect again), lets its running commands finish —
// their records stay visible, and cancellable, in the app's Processes
// window — and gives its agents up to handOverLinger to collect the last
// results and hang up; then it closes and returns nil. If ctx ends meanwhile the remaining
// runs are cancelled. Another agentgate already serving the socket is
// agentbridge.ErrAlreadyRunning.
func RunHeadless(ctx context.Context, opts Options, why string, logf func(format string, args ...any)) error {
	opts.Approver, opts.TakeOver = nil, false
	opts.NoApproverReason = HeadlessRefusal(why)
	opts.AuditHost = "headless"
	h, err := Open(ctx, opts)
	if err != nil {
		return err
	}
	defer h.Close()
	// Said before serving, so whoever reaches the socket finds it in the log.
	logf("agentgate: no display to open windows on (%s): serving agents at %s without windows. Commands an allow-list rule or grant allows run; "+
		"every other proposal is refused at once, naming the missing display. To approve commands, start agentgate in the desktop session "+
		"(it takes over from this one), or use `agentgate run` at a terminal. The tray and notifications are off.", why, opts.Socket)
	handOver := make(chan struct{}, 1)
	h.Serve(agentbridge.ServerOptions{OnHandOver: func() {
		select {
		case handOver <- struct{}{}:
		default:
		}
	}})
	select {
	case <-ctx.Done():
		logf("agentgate: stopping (%v); running commands are cancelled", context.Cause(ctx))
		return nil
	case <-handOver:
	}
	h.Broker.StopTaking(handedOverRefusal, "agentgate handed over to the desktop app before it started")
	h.Server.StopAccepting()
	running := 0
	for _, r := range h.Executor.Runs() {
		if !isDone(r) {
			running++
		}
	}
	logf("agentgate: handed over to the agentgate app in the desktop session; finishing %d running commands (visible and cancellable in its Processes window), then exiting", running)
	// A proposal admitted just before StopTaking may start after a first
	// look: look again until none runs.
	for {
		live := runningRun(h)
		if live == nil {
			break
		}
		select {
		case <-live.Done():
		case <-ctx.Done():
			logf("agentgate: stopping (%v); running commands are cancelled", context.Cause(ctx))
			return nil
		}
	}
	// Its agents may still be collecting the last results: give them up to
	// handOverLinger to hang up.
	linger := time.Now().Add(handOverLinger)
	for h.Server.Connections() > 0 && time.Now().Before(linger) && ctx.Err() == nil {
		time.Sleep(100 * time.Millisecond)
	}
	logf("agentgate: every command of this headless agentgate ended; exiting")
	return nil
}

// handOverLinger is how long an agentgate that handed over keeps serving its
// agents' open connections after its last command ended, so that they can
// read how it ended.
const handOverLinger = 10 * time.Second

// runningRun returns one of h's runs that has not ended, or nil.
func runningRun(h *Host) *exec.Run {
	for _, r := range h.Executor.Runs() {
		if !isDone(r) {
			return r
		}
	}
	return nil
}

// isDone reports whether run r has ended.
func isDone(r *exec.Run) bool {
	select {
	case <-r.Done():
		return true
	default:
		return false
	}
}
