//go:build !linux

package cli

import "os"

// mcpStdin returns what `agentgate mcp` reads its requests from: os.Stdin
// here (Linux reopens a stdin pipe for the runtime poller; see
// mcpstdin_linux.go).
func mcpStdin() *os.File { return os.Stdin }
