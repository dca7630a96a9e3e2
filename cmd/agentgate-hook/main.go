// Command agentgate-hook is `agentgate hook claude-code|gemini|codex` in an
// executable of its own: an agent runs it before every tool call, and
// leaving out the desktop UI (Fyne, cgo, libGL/X11) and the MCP SDK that
// agentgate links saves their start-up cost on every call. Its behaviour is
// that of `agentgate hook` exactly (package cli/hook); `agentgate setup`
// writes it as the hook command when it sits beside agentgate.
package main

import (
	"os"

	"github.com/agentgate/agentgate/cli/hook"
)

func main() {
	os.Exit(hook.Main(os.Args[1:]))
}
