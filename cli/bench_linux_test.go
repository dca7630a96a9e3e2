//go:build linux

package cli

import (
	"context"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentgate/agentgate/agentbridge/bridgetest"
)

// newCLISandboxB is newCLISandbox for benchmarks.
func newCLISandboxB(b *testing.B, rules string) *cliSandbox {
	b.Helper()
	home := b.TempDir()
	s := &cliSandbox{home: home, project: filepath.Join(home, "project")}
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(s.project, ".git"), 0o755))
	s.project, _ = filepath.EvalSymlinks(s.project)
	must(os.MkdirAll(filepath.Join(home, "config", "agentgate"), 0o700))
	must(os.WriteFile(filepath.Join(home, "config", "agentgate", "allow.list"), []byte(rules), 0o600))
	s.environ = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, "config"),
		"XDG_STATE_HOME=" + filepath.Join(home, "state"), "AGENTGATE_SOCKET=" + filepath.Join(home, "none.sock"), asCLIEnv + "=1"}
	return s
}

// mcpConnect starts a stdio MCP server with cmd and returns its session
// and the start-up time (connect and initialize).
func mcpConnect(b *testing.B, cmd *osexec.Cmd) (*mcp.ClientSession, time.Duration) {
	b.Helper()
	start := time.Now()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatalf("connecting to %v: %v", cmd.Args, err)
	}
	return cs, time.Since(start)
}

// mcpCall makes one tool call and returns its latency.
func mcpCall(b *testing.B, cs *mcp.ClientSession, tool string, args map[string]any) time.Duration {
	t0 := time.Now()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil || res.IsError {
		b.Fatalf("%s: %v %+v", tool, err, res)
	}
	return time.Since(t0)
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	return sorted[int(p*float64(len(sorted)-1))]
}

// BenchmarkMCPRunCommand: 100 sequential run_command calls of an
// allow-listed echo through `agentgate mcp` (against a real bridge), next to
// the same calls through the ungated npm package mcp-server-commands 0.5.0
// when npx is available, the two servers' calls alternating; p50/p99 and
// start-up are reported.
func BenchmarkMCPRunCommand(b *testing.B) {
	const calls = 100
	br := bridgetest.Start(b, bridgetest.Options{})
	br.Allow(b, "echo")
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	npx, npxErr := osexec.LookPath("npx")
	if npxErr != nil {
		b.Log("npx not installed: no mcp-server-commands comparison")
	}
	agArgs := map[string]any{"argv": []string{"echo", "hi"}}
	peerArgs := map[string]any{"command": "echo hi"}
	for i := 0; i < b.N; i++ {
		cmd := osexec.Command(exe, "mcp", "--project", br.Project)
		cmd.Env = append(os.Environ(), asCLIEnv+"=1", "AGENTGATE_SOCKET="+br.Socket)
		ag, startup := mcpConnect(b, cmd)
		var peer *mcp.ClientSession
		if npxErr == nil {
			peer, _ = mcpConnect(b, osexec.Command(npx, "-y", "mcp-server-commands@0.5.0"))
			mcpCall(b, peer, "run_command", peerArgs) // warm up node's code paths
		}
		// The two servers' calls alternate, so that both see the same load.
		lat := make([]time.Duration, 0, calls)
		peerLat := make([]time.Duration, 0, calls)
		for range calls {
			lat = append(lat, mcpCall(b, ag, "run_command", agArgs))
			if peer != nil {
				peerLat = append(peerLat, mcpCall(b, peer, "run_command", peerArgs))
			}
		}
		ag.Close()
		slices.Sort(lat)
		b.ReportMetric(float64(startup.Microseconds())/1000, "agentgate-startup-ms")
		b.ReportMetric(float64(percentile(lat, 0.5).Microseconds())/1000, "agentgate-p50-ms")
		b.ReportMetric(float64(percentile(lat, 0.99).Microseconds())/1000, "agentgate-p99-ms")
		if peer == nil {
			continue
		}
		peer.Close()
		slices.Sort(peerLat)
		b.ReportMetric(float64(percentile(peerLat, 0.5).Microseconds())/1000, "peer-p50-ms")
		b.ReportMetric(float64(percentile(peerLat, 0.99).Microseconds())/1000, "peer-p99-ms")
		b.ReportMetric(float64(percentile(lat, 0.5))/float64(percentile(peerLat, 0.5)), "p50-ratio")
	}
}
