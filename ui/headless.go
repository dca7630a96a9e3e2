package ui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/agentgate/agentgate/agentbridge"
	"github.com/agentgate/agentgate/agentbridge/host"
	"github.com/agentgate/agentgate/agentbridge/wire"
	"github.com/agentgate/agentgate/exec"
	"github.com/agentgate/agentgate/prefs/agents"
)

// runHeadless serves the bridge without windows (host.RunHeadless) because
// why says no window can be opened, until SIGINT, SIGTERM or SIGHUP, or
// until the desktop app takes over. It logs on standard error and returns
// the exit code: 0, also when another agentgate already serves the socket.
// Fyne is never started, so nothing talks to D-Bus either.
func runHeadless(why string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	paths, sock, err := wire.ResolveDirs()
	if err != nil {
		fmt.Fprintln(os.Stderr, "agentgate:", err)
		return 1
	}
	go func() {
		for _, w := range agents.CheckWired(ctx, paths.StateDir) {
			fmt.Fprintln(os.Stderr, "agentgate:", w)
		}
	}()
	err = host.RunHeadless(ctx, host.Options{Paths: paths, Kind: exec.HostApp, Socket: sock}, why,
		func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) })
	switch {
	case errors.Is(err, agentbridge.ErrAlreadyRunning):
		fmt.Fprintf(os.Stderr, "agentgate: no display to open windows on (%s), and an agentgate already serves %s; nothing to do.\n", why, sock)
		return 0
	case err != nil:
		fmt.Fprintln(os.Stderr, "agentgate:", err)
		return 1
	}
	return 0
}
