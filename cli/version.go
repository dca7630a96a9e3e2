package cli

import (
	"fmt"
	"io"

	"github.com/agentgate/agentgate/agentbridge/wire"
)

// version and commit (also reported to MCP clients) are set at link time by the Makefile and
// scripts/package.sh (-X), from FyneApp.toml's [Details] Version — the one
// place the version lives — and from git. A plain `go build` leaves them.
var (
	version = "dev"
	commit  = "unknown"
)

// Version returns "agentgate <version> (<commit>)", what --version prints.
func Version() string { return fmt.Sprintf("agentgate %s (%s)", version, commit) }

// runSocketPath prints the bridge socket path this user's app listens on:
// AGENTGATE_SOCKET when set, else the per-user default (docs/protocol.md).
func runSocketPath(args []string, stdout, stderr io.Writer) int {
	if len(args) != 0 {
		fmt.Fprintln(stderr, "agentgate socket-path: takes no arguments")
		return 2
	}
	p, err := wire.SocketPath()
	if err != nil {
		fmt.Fprintf(stderr, "agentgate socket-path: %v\n", err)
		return 2
	}
	fmt.Fprintln(stdout, p)
	return 0
}
