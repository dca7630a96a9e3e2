package agentbridge_test

import (
	"context"
	"os/exec"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentgate/agentgate/agentbridge/audit"
	"github.com/agentgate/agentgate/agentbridge/bridgetest"
	"github.com/agentgate/agentgate/agentbridge/client"
	"github.com/agentgate/agentgate/agentbridge/wire"
	"github.com/agentgate/agentgate/exec/changes/changestest"
	"github.com/agentgate/agentgate/unixpg/shimbuild"
)

// heapInUse returns the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// TestLoad500ProposalsOver50Connections checks correctness under load: 500
// concurrent proposals of an allow-listed command over 50 connections all
// complete, each exactly once, and memory stays bounded.
func TestLoad500ProposalsOver50Connections(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	const conns, perConn = 50, 10
	b := bridgetest.Start(t, bridgetest.Options{})
	b.Allow(t, "true")
	clients := make([]*client.Client, conns)
	for i := range clients {
		clients[i] = b.Session(t, "")
	}
	before := heapInUse()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var mu sync.Mutex
	ids := make(map[string]int)
	var wg sync.WaitGroup
	for _, c := range clients {
		for range perConn {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := c.Propose(ctx, wire.ProposeParams{Argv: []string{"true"}})
				if err != nil {
					t.Errorf("propose: %v", err)
					return
				}
				w, _, err := c.WaitDone(ctx, res.RunID)
				if err != nil || w.State != "exited" || w.ExitCode == nil || *w.ExitCode != 0 {
					t.Errorf("run %s: %+v, %v", res.RunID, w, err)
					return
				}
				mu.Lock()
				ids[res.RunID]++
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	if len(ids) != conns*perConn {
		t.Fatalf("%d distinct runs completed, want %d", len(ids), conns*perConn)
	}
	for id, n := range ids {
		if n != 1 {
			t.Fatalf("run %s reported %d times", id, n)
		}
	}
	if n := len(b.Executor.Runs()); n != conns*perConn {
		t.Fatalf("the executor started %d runs, want %d", n, conns*perConn)
	}
	// Every list shows exactly its own 10 runs.
	for _, c := range clients {
		l, err := c.List(ctx)
		if err != nil || len(l.Runs) != perConn {
			t.Fatalf("list = %d runs, %v; want %d", len(l.Runs), err, perConn)
		}
	}
	deadline := time.Now().Add(eventually)
	for {
		ends := 0
		for _, e := range b.AuditEntries(t) {
			if e.Kind == audit.KindRunEnd {
				ends++
			}
		}
		if ends == conns*perConn {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d run_end audit entries, want %d", ends, conns*perConn)
		}
		time.Sleep(50 * time.Millisecond)
	}
	after := heapInUse()
	growth := int64(after) - int64(before)
	t.Logf("heap in use: %d KiB before, %d KiB after 500 runs (growth %d KiB)", before>>10, after>>10, growth>>10)
	if growth > 64<<20 {
		t.Fatalf("heap grew by %d MiB for 500 runs", growth>>20)
	}
}

// proposeToExit proposes argv and waits for its end over c: one
// exec.propose with wait_ms, then exec.wait only if the run outlived it.
func proposeToExit(b testing.TB, ctx context.Context, c *client.Client, argv []string) {
	wait := int64(60000)
	res, err := c.Propose(ctx, wire.ProposeParams{Argv: argv, WaitMS: &wait})
	if err != nil {
		b.Fatalf("propose: %v", err)
	}
	if res.Wait == nil {
		b.Fatalf("propose with wait_ms returned no wait result")
	}
	w := *res.Wait
	for w.State == "running" || w.State == wire.StateQueued {
		if w, err = c.Wait(ctx, wire.WaitParams{RunID: res.RunID, WaitMS: &wait}); err != nil {
			b.Fatalf("wait: %v", err)
		}
	}
	if w.State != "exited" {
		b.Fatalf("run ended %s", w.State)
	}
}

// rawTrue runs `true` with os/exec: the baseline.
func rawTrue(b testing.TB) {
	if err := exec.Command("true").Run(); err != nil {
		b.Fatalf("raw true: %v", err)
	}
}

// BenchmarkRawExecTrue is the baseline: os/exec runs `true`.
func BenchmarkRawExecTrue(b *testing.B) {
	for b.Loop() {
		rawTrue(b)
	}
}

// startBenchBridge starts a bridge whose sessions work in project, with its
// change summaries from a keeper process as in the app, allows `true` and
// has the keeper index and hash the project before anything is timed.
func startBenchBridge(b *testing.B, project string) *bridgetest.Bridge {
	return startBenchBridgeWith(b, project, benchShim(b), false)
}

// benchShim returns the confinement shim, built for the tests, so that
// the benchmarks' runs are confined as the app's are; it skips the
// benchmark where it cannot be built.
func benchShim(b *testing.B) string {
	if runtime.GOOS != "linux" {
		return ""
	}
	shim, err := shimbuild.Path()
	if err != nil {
		b.Skip("no confinement shim:", err)
	}
	return shim
}

// startBenchBridgeWith is startBenchBridge with the given shim, or with
// write confinement off.
func startBenchBridgeWith(b *testing.B, project, shim string, unconfined bool) *bridgetest.Bridge {
	br := bridgetest.Start(b, bridgetest.Options{Project: project, KeeperProcess: true, Shim: shim, Unconfined: unconfined})
	br.Allow(b, "true")
	br.SettleChanges(b)
	return br
}

// BenchmarkBridgeTrue measures propose → exit of an allow-listed `true`
// over the socket (one exec.propose with wait_ms), confined as the app
// runs it, in an empty project and in the 100,000-file tree, each a
// separate run; compare with BenchmarkRawExecTrue and tree100k with
// empty. BenchmarkBridgeTrueUnconfined is the same with write confinement
// off, as the bridge was measured before confinement existed (target ≤
// 2.5× raw).
func BenchmarkBridgeTrue(b *testing.B) { benchBridgeTrue(b, false) }

// BenchmarkBridgeTrueUnconfined is BenchmarkBridgeTrue with write
// confinement off (exec.ConfineConfig.Off).
func BenchmarkBridgeTrueUnconfined(b *testing.B) { benchBridgeTrue(b, true) }

// benchBridgeTrue is BenchmarkBridgeTrue, unconfined or not.
func benchBridgeTrue(b *testing.B, unconfined bool) {
	for _, project := range changestest.Projects {
		b.Run(project.Name, func(b *testing.B) {
			shim := ""
			if !unconfined {
				shim = benchShim(b)
			}
			br := startBenchBridgeWith(b, project.Root(b), shim, unconfined)
			c := br.Session(b, "")
			ctx := context.Background()
			proposeToExit(b, ctx, c, []string{"true"}) // warm up
			for b.Loop() {
				proposeToExit(b, ctx, c, []string{"true"})
			}
		})
	}
}

// BenchmarkBridgeConcurrent50 runs propose → exit of `true` from 50
// concurrent clients and reports the latency percentiles (target: p99 ≤ 5×
// p50), in an empty project and in the 100,000-file tree.
func BenchmarkBridgeConcurrent50(b *testing.B) {
	for _, project := range changestest.Projects {
		b.Run(project.Name, func(b *testing.B) { benchConcurrent50(b, project.Root(b)) })
	}
}

// benchConcurrent50 is BenchmarkBridgeConcurrent50 in project.
func benchConcurrent50(b *testing.B, project string) {
	const clients = 50
	br := startBenchBridge(b, project)
	cs := make([]*client.Client, clients)
	for i := range cs {
		cs[i] = br.Session(b, "")
	}
	ctx := context.Background()
	perClient := max(1, b.N/clients)
	var mu sync.Mutex
	var lat []time.Duration
	b.ResetTimer()
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := make([]time.Duration, 0, perClient)
			for range perClient {
				start := time.Now()
				proposeToExit(b, ctx, c, []string{"true"})
				mine = append(mine, time.Since(start))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	b.StopTimer()
	slices.Sort(lat)
	p50, p99 := lat[len(lat)/2], lat[min(len(lat)-1, len(lat)*99/100)]
	b.ReportMetric(float64(p50.Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(p99)/float64(p50), "p99/p50")
}
