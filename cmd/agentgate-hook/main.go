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

// growStack grows the goroutine's stack once, while it is shallow, to
// 32 KiB: otherwise it doubles from 8 KiB deep in the shell parser's
// recursion, and each doubling copies the stack and rewrites its frames.
// A larger pad costs more than it saves, since the pad is zeroed and its
// pages faulted in on every call: with 96 KiB (a 128 KiB stack) the hook
// took 1.85x hello-world's CPU, with this one 1.81x (1,500 alternated
// runs, 2026-12-02; BENCHMARKS.md). A deeper parse still grows the stack
// as it needs.
//
//go:noinline
func growStack() {
	var pad [24 << 10]byte
	touch(pad[:])
}

// touch keeps pad alive so that the compiler cannot drop the frame.
//
//go:noinline
func touch(b []byte) { b[len(b)-1] = 1 }
