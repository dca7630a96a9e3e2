// Command agentgate stands between AI coding agents and the person's machine.
//
// With no arguments it starts the desktop app (the bridge, approval cards and
// the Processes window); with --background the same app with no window shown
// until one is needed (how it starts at login); with a subcommand it is the
// terminal host and the agents' adapters (see `agentgate help`).
package main

import (
	"os"

	"github.com/agentgate/agentgate/cli"
	"github.com/agentgate/agentgate/ui"
	"github.com/agentgate/agentgate/unixpg"
)

func main() {
	// The executor re-executes this binary as each run's supervisor
	// (docs/lifetime.md); such a process serves runs here and never
	// returns. Anything else returns at once.
	unixpg.MaybeSupervise()
	if len(os.Args) == 2 && os.Args[1] == ui.BackgroundFlag {
		os.Exit(ui.Main(true))
	}
	if len(os.Args) > 1 {
		os.Exit(cli.Main(os.Args[1:]))
	}
	os.Exit(ui.Main(false))
}
