// Command agentgate-mcp is `agentgate mcp` in an executable of its own: an
// MCP client starts it for every session and waits for it, and leaving out
// the desktop UI that agentgate links (Fyne, cgo, libGL/X11, and their
// initialisation: about 110 ms before main runs) makes it start in a few
// milliseconds. Its behaviour is that of `agentgate mcp` exactly (package
// cli); it starts the desktop app (agentgate, beside it) when none runs, and
// `agentgate setup mcp-json` writes it as the server command when it sits
// beside agentgate.
package main

import (
	"os"

	"github.com/agentgate/agentgate/cli"
)

func main() {
	os.Exit(cli.MainMCP(os.Args[1:]))
}
