// Package cli is agentgate's terminal host and the agents' adapters: run,
// allow, ps, cancel, log, mcp, hook and setup.
package cli

import (
	"fmt"
	"io"
	"os"
)

// Main runs the subcommand named by args[0] with the rest of args and returns
// the process exit code.
func Main(args []string) int {
	return dispatch(args, os.Stdout, os.Stderr)
}

func dispatch(args []string, stdout, stderr io.Writer) int {
	switch args[0] {
	case "help", "-h", "--help":
		usage(stdout)
		return 0
	default:
		fmt.Fprintf(stderr, "agentgate: unknown command %q\n", args[0])
		usage(stderr)
		return 2
	}
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage: agentgate [command]

With no command, agentgate starts the desktop app.

Commands:
  help    show this help
`)
}
