// Command agentgate stands between AI coding agents and the person's machine.
//
// With no arguments it starts the desktop app (the bridge, approval cards and
// the Processes window); with a subcommand it is the terminal host and the
// agents' adapters (see `agentgate help`).
package main

import (
	"os"

	"github.com/agentgate/agentgate/cli"
	"github.com/agentgate/agentgate/ui"
)

func main() {
	if len(os.Args) > 1 {
		os.Exit(cli.Main(os.Args[1:]))
	}
	os.Exit(ui.Main())
}
