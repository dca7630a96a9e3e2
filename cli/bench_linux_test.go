//go:build linux

package cli

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/agentgate/agentgate/agentbridge/bridgetest"
	"github.com/agentgate/agentgate/exec/changes"
	"github.com/agentgate/agentgate/exec/changes/changestest"
	"github.com/agentgate/agentgate/exec/platformtest"
	"github.com/agentgate/agentgate/unixpg/shimbuild"
)

// builtBinary returns the executable env names (set by scripts/bench.sh to
// what `make build` made), or builds pkg (with cgo and the UI's tags when
// cgo) into a temporary directory and settles it as `make build` does
// (platformtest.SettleExecutable).
func builtBinary(b *testing.B, env, pkg string, cgo bool) string {
	b.Helper()
	if p := os.Getenv(env); p != "" {
		abs, err := filepath.Abs(p)
		if err != nil {
			b.Fatal(err)
		}
		return abs
	}
	out := filepath.Join(b.TempDir(), filepath.Base(pkg))
	args := []string{"build", "-o", out}
	setting := "CGO_ENABLED=0"
	if cgo {
		args, setting = append(args, "-tags", "migrated_fynedo"), "CGO_ENABLED=1"
	}
	cmd := osexec.Command("go", append(args, pkg)...)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), setting)
	if msg, err := cmd.CombinedOutput(); err != nil {
		b.Skipf("cannot build %s here (%v): %s", pkg, err, msg)
	}
	platformtest.SettleExecutable(b, out)
	return out
}

// benchHome is a private home for agentgate processes: its own
// configuration (allow-list rules), state, and a socket no app listens on.
type benchHome struct {
	// paths are its agentgate directories.
	paths prefsPaths
	// environ is the environment of processes run in it.
	environ []string
}

// prefsPaths are the directories of a benchHome.
type prefsPaths struct{ config, state string }

// newBenchHome makes a benchHome allowing rules; the change keeper its
// hosts start is stopped before it is removed.
func newBenchHome(b *testing.B, rules string) *benchHome {
	b.Helper()
	home := b.TempDir()
	h := &benchHome{paths: prefsPaths{filepath.Join(home, "config", "agentgate"), filepath.Join(home, "state", "agentgate")}}
	if err := os.MkdirAll(h.paths.config, 0o700); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.paths.config, "allow.list"), []byte(rules), 0o600); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { changes.StopKeeper(h.paths.state) })
	h.environ = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, "config"),
		"XDG_STATE_HOME=" + filepath.Join(home, "state"), "AGENTGATE_SOCKET=" + filepath.Join(home, "none.sock")}
	return h
}

// BenchmarkAgentgateRun measures `agentgate run -- true` (allow-listed) as
// a person or script runs it: the built agentgate binary as a process, wall
// time from spawn to exit, in an empty project and in the 100,000-file tree,
// each a separate run (target: tree100k ≤ 1.2× empty). The change keeper
// process the first run starts is given time to index and hash the project
// before anything is timed, as it would be after the first command of a
// session.
func BenchmarkAgentgateRun(b *testing.B) {
	bin := builtBinary(b, "AGENTGATE_BIN", ".", true)
	for _, project := range changestest.Projects {
		b.Run(project.Name, func(b *testing.B) {
			root := project.Root(b)
			h := newBenchHome(b, "true\n")
			run := func() {
				cmd := osexec.Command(bin, "run", "--", "true")
				cmd.Dir, cmd.Env = root, h.environ
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("agentgate run: %v: %s", err, out)
				}
			}
			run() // starts the keeper, which walks the project
			tracker, closer, err := changes.Open(h.paths.state, bin)
			if err != nil {
				b.Fatal(err)
			}
			defer closer.Close()
			changestest.Settle(b, tracker, root)
			run()
			for b.Loop() {
				run()
			}
		})
	}
}

// mcpBenchDeps installs (once, cached outside the clone) the official
// TypeScript MCP SDK and mcp-server-commands 0.5.0 from scripts/bench/
// package.json, and returns node, the install directory and the peer
// server's entry point. It skips the benchmark without node and npm.
func mcpBenchDeps(b *testing.B) (node, dir, peer string) {
	b.Helper()
	node, err := osexec.LookPath("node")
	if err != nil {
		b.Skip("node is not installed: no MCP comparison")
	}
	npm, err := osexec.LookPath("npm")
	if err != nil {
		b.Skip("npm is not installed: no MCP comparison")
	}
	manifest, err := os.ReadFile(filepath.Join("..", "scripts", "bench", "package.json"))
	if err != nil {
		b.Fatal(err)
	}
	cache, err := changestest.CacheDir()
	if err != nil {
		b.Fatal(err)
	}
	dir = filepath.Join(cache, "npm", "mcp-bench")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	lock := flock.New(dir + ".lock")
	if err := lock.Lock(); err != nil {
		b.Fatal(err)
	}
	defer lock.Unlock()
	sum := sha256.Sum256(manifest)
	stamp := filepath.Join(dir, ".installed-"+hex.EncodeToString(sum[:8]))
	if _, err := os.Stat(stamp); err != nil {
		if err := os.WriteFile(filepath.Join(dir, "package.json"), manifest, 0o644); err != nil {
			b.Fatal(err)
		}
		cmd := osexec.Command(npm, "install", "--no-audit", "--no-fund", "--loglevel=error")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Skipf("npm install in %s: %v: %s", dir, err, out)
		}
		if err := os.WriteFile(stamp, nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return node, dir, filepath.Join(dir, "node_modules", "mcp-server-commands", "build", "index.js")
}

// mcpClientRun is one run of scripts/bench/mcp-client.cjs: start-up and
// each timed call's latency.
type mcpClientRun struct {
	// Startup is spawn → initialize reply, in ms.
	Startup float64 `json:"startup_ms"`
	// Latencies are the timed calls', in ms.
	Latencies []float64 `json:"latencies_ms"`
}

// mcpSpec is what mcp-client.cjs is asked to do.
type mcpSpec struct {
	// Command, Args, Cwd and Env start the server.
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Cwd     string            `json:"cwd,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	// Tool and Arguments are the call; Calls how many are timed.
	Tool      string         `json:"tool"`
	Arguments map[string]any `json:"arguments"`
	Calls     int            `json:"calls"`
}

// runMCPClient runs mcp-client.cjs once.
func runMCPClient(b *testing.B, node, sdkDir string, spec mcpSpec) mcpClientRun {
	b.Helper()
	js, err := json.Marshal(spec)
	if err != nil {
		b.Fatal(err)
	}
	cmd := osexec.Command(node, filepath.Join("..", "scripts", "bench", "mcp-client.cjs"), sdkDir, string(js))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("mcp-client %s: %v: %s", spec.Command, err, stderr.Bytes())
	}
	var run mcpClientRun
	if err := json.Unmarshal(out, &run); err != nil {
		b.Fatalf("mcp-client output %q: %v", out, err)
	}
	return run
}

// mcpCalls is how many calls one client run times.
const mcpCalls = 100

// BenchmarkMCPRunCommand: run_command of an allow-listed `echo hi` through
// agentgate-mcp (the lean executable `agentgate setup` configures; against
// a real bridge in this process) and through the ungated npm package
// mcp-server-commands 0.5.0, each driven by the official TypeScript MCP SDK
// client, in an empty project and in the 100,000-file tree: separate runs
// (agentgate then the peer in one project, then in the other), each b.N
// client sessions of 100 timed calls after one warm-up call. Beside them,
// informational, agentgate with write confinement off
// ("agentgate-unconfined"): what the confinement of each run costs.
// Reported: p50 and p99 call latency and the median start-up (spawn →
// initialize reply), in ms. Targets: agentgate's p50 ≤ 1.0× the peer's in
// the same project (goal 0.7×), p99 ≤ 1.5× the peer's, start-up ≤ 50 ms.
func BenchmarkMCPRunCommand(b *testing.B) {
	node, sdkDir, peer := mcpBenchDeps(b)
	lean := builtBinary(b, "AGENTGATE_MCP_BIN", "./cmd/agentgate-mcp", false)
	// The project outside, the server inside: the two runs a ratio compares
	// follow each other, so a busy moment of a shared machine is less likely
	// to fall on one of them only.
	for _, project := range changestest.Projects {
		for _, server := range []string{"agentgate", "agentgate-unconfined", "peer"} {
			b.Run(server+"/"+project.Name, func(b *testing.B) {
				root := project.Root(b)
				var spec mcpSpec
				if server != "peer" {
					opts := bridgetest.Options{Project: root, KeeperProcess: true, Unconfined: server == "agentgate-unconfined"}
					if !opts.Unconfined {
						// Confined as the app runs it: the shim the app finds
						// beside itself is not beside this test binary.
						shim, err := shimbuild.Path()
						if err != nil {
							b.Skip("no confinement shim:", err)
						}
						opts.Shim = shim
					}
					br := bridgetest.Start(b, opts)
					br.Allow(b, "echo")
					br.SettleChanges(b)
					spec = mcpSpec{Command: lean, Args: []string{"--project", root}, Cwd: root,
						Env:  map[string]string{"PATH": os.Getenv("PATH"), "HOME": os.Getenv("HOME"), "AGENTGATE_SOCKET": br.Socket},
						Tool: "run_command", Arguments: map[string]any{"argv": []string{"echo", "hi"}}}
				} else {
					spec = mcpSpec{Command: node, Args: []string{peer}, Cwd: root,
						Env:  map[string]string{"PATH": os.Getenv("PATH"), "HOME": os.Getenv("HOME")},
						Tool: "run_command", Arguments: map[string]any{"command": "echo hi"}}
				}
				spec.Calls = mcpCalls
				reportMCP(b, func() mcpClientRun { return runMCPClient(b, node, sdkDir, spec) })
			})
		}
	}
}

// mcpInitialize is an MCP initialize request, one line.
const mcpInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}` + "\n"

// BenchmarkMCPStartup measures each MCP server's start-up as an MCP client
// sees it: from spawning the process (stdio pipes, as every client starts a
// server) to its initialize reply, one spawn per iteration, the median
// reported ("startup-ms"; target ≤ 50 ms for what setup configures). The
// servers: agentgate-mcp (what `agentgate setup mcp-json` writes), `agentgate
// mcp` in the main executable (which links the desktop UI; informational)
// and mcp-server-commands 0.5.0 under node. Measured from Go rather than
// through the TypeScript client, whose own spawn overhead under load would
// swamp a server that starts in milliseconds.
func BenchmarkMCPStartup(b *testing.B) {
	node, _, peer := mcpBenchDeps(b)
	servers := []struct {
		name string
		argv func() []string
	}{
		{"agentgate-mcp", func() []string { return []string{builtBinary(b, "AGENTGATE_MCP_BIN", "./cmd/agentgate-mcp", false)} }},
		{"agentgate", func() []string { return []string{builtBinary(b, "AGENTGATE_BIN", ".", true), "mcp"} }},
		{"peer", func() []string { return []string{node, peer} }},
	}
	for _, s := range servers {
		b.Run(s.name, func(b *testing.B) {
			argv, dir := s.argv(), b.TempDir()
			env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "AGENTGATE_SOCKET=" + filepath.Join(dir, "none.sock")}
			var startups []float64
			for b.Loop() {
				startups = append(startups, mcpStartupOnce(b, argv, dir, env))
			}
			slices.Sort(startups)
			b.ReportMetric(startups[len(startups)/2], "startup-ms")
		})
	}
}

// mcpStartupOnce spawns argv, sends initialize and returns the time to the
// reply's line, in ms.
func mcpStartupOnce(b *testing.B, argv []string, dir string, env []string) float64 {
	cmd := osexec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	if _, err := io.WriteString(stdin, mcpInitialize); err != nil {
		b.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	elapsed := time.Since(t0)
	stdin.Close()
	cmd.Wait()
	if err != nil || !strings.Contains(line, `"result"`) {
		b.Fatalf("%v: initialize answered %q (%v)", argv, line, err)
	}
	return float64(elapsed.Microseconds()) / 1000
}

// reportMCP runs one client session per iteration and reports the median
// start-up and the p50 and p99 of every timed call.
func reportMCP(b *testing.B, session func() mcpClientRun) {
	var startups, lat []float64
	for b.Loop() {
		run := session()
		startups = append(startups, run.Startup)
		lat = append(lat, run.Latencies...)
	}
	slices.Sort(startups)
	b.ReportMetric(startups[len(startups)/2], "startup-ms")
	if len(lat) > 0 {
		slices.Sort(lat)
		b.ReportMetric(lat[len(lat)/2], "p50-ms")
		b.ReportMetric(lat[min(len(lat)-1, len(lat)*99/100)], "p99-ms")
	}
}
