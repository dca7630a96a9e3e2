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
	growStack()
	os.Exit(hook.Main(os.Args[1:]))
}

// growStack grows the goroutine's stack once, while it is shallow, to the
// size the shell parser's recursion reaches: otherwise it doubles several
// times deep in the parse, and each doubling copies the stack and rewrites
// its frames, which showed as 7 % of the hook's CPU.
//
//go:noinline
func growStack() {
	var pad [96 << 10]byte
	touch(pad[:])
}

// touch keeps pad alive so that the compiler cannot drop the frame.
//
//go:noinline
func touch(b []byte) { b[len(b)-1] = 1 }
