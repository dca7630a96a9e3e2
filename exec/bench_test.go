package exec

import (
	"context"
	"io"
	osexec "os/exec"
	"runtime"
	"runtime/metrics"
	"strconv"
	"testing"
	"time"

	"github.com/agentgate/agentgate/exec/changes"
	"github.com/agentgate/agentgate/exec/changes/changestest"
)

// benchExecutor returns an Executor without write confinement whose runs
// are summarised by a change keeper process, as the app's are (this test
// binary serves as one), given time to index and hash the project before
// anything is timed, and a validated command for argv in project.
func benchExecutor(b *testing.B, project string, argv ...string) (*Executor, Command) {
	return benchExecutorWith(b, ConfineConfig{Off: true}, project, argv...)
}

// benchExecutorWith is benchExecutor with the runs confined by cc.
func benchExecutorWith(b *testing.B, cc ConfineConfig, project string, argv ...string) (*Executor, Command) {
	b.Helper()
	if runtime.GOOS == "windows" {
		b.Skip("runs Unix programs")
	}
	state := b.TempDir()
	tracker, closer, err := changes.Open(state, "")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { closer.Close(); changes.StopKeeper(state) })
	e, err := New(Config{StateDir: state, HostKind: HostCLI, Changes: tracker, Confine: cc})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(e.Flush)
	cmd, err := Validate(Proposal{Argv: argv, ProjectRoot: project}, PathFromEnv(e.cfg.Env))
	if err != nil {
		b.Fatal(err)
	}
	tracker.Begin(project, project).Finish() // the first walk
	changestest.Settle(b, tracker, project)
	return e, cmd
}

// gcCPU returns the CPU time the garbage collector has used so far, in
// seconds (runtime/metrics' estimate).
func gcCPU() float64 {
	s := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}}
	metrics.Read(s)
	return s[0].Value.Float64()
}

// runOnce starts cmd through e and waits for its exit (not for its change
// summary).
func runOnce(b *testing.B, e *Executor, cmd Command) *Run {
	r, err := e.Start(cmd, Meta{})
	if err != nil {
		b.Fatal(err)
	}
	rec, _ := r.Wait(context.Background())
	if rec.State != StateExited || rec.ExitCode == nil || *rec.ExitCode != 0 {
		b.Fatalf("run ended %s (%v): %s", rec.State, rec.ExitCode, rec.Error)
	}
	return r
}

// BenchmarkExecutorTrue measures Start+Wait of `true` through an Executor,
// in an empty project and in the 100,000-file tree, each as a separate run:
// validation done once, then supervisor, pipes, the change keeper told of
// the run, two durable record writes. "exit-ns/op" is start to exit known
// (what an agent waits for; compare with BenchmarkRawExecTrue, and tree100k
// with empty); "summary-µs/op" is exit to change summary made, which
// follows off the agent's path. Each iteration waits for its summary, so no
// background work spills into the next.
func BenchmarkExecutorTrue(b *testing.B) {
	for _, project := range changestest.Projects {
		b.Run(project.Name, func(b *testing.B) {
			e, cmd := benchExecutor(b, project.Root(b), "true")
			<-runOnce(b, e, cmd).ChangesDone() // warm up, as the others do: the host's first run starts its warden
			minEntries := 0
			if project.Name == "tree100k" {
				minEntries = changestest.Files
			}
			var exit, summary time.Duration
			gc0 := gcCPU()
			for b.Loop() {
				t0 := time.Now()
				r := runOnce(b, e, cmd)
				t1 := time.Now()
				<-r.ChangesDone()
				exit, summary = exit+t1.Sub(t0), summary+time.Since(t1)
				// Nothing changed, and the cover is the whole project.
				ch := r.Record().Changes
				if ch == nil || ch.Incomplete || ch.Cover == nil || ch.Cover.Entries < minEntries ||
					len(ch.Created)+len(ch.Modified)+len(ch.Deleted) != 0 {
					b.Fatalf("change summary of true: %+v, want nothing changed and at least %d entries covered", ch, minEntries)
				}
			}
			b.ReportMetric(float64(exit.Nanoseconds())/float64(b.N), "exit-ns/op")
			b.ReportMetric(float64(summary.Microseconds())/float64(b.N), "summary-µs/op")
			b.ReportMetric((gcCPU()-gc0)*1e6/float64(b.N), "gc-cpu-µs/op")
		})
	}
}

// BenchmarkExecutorTrueConfined is BenchmarkExecutorTrue with write
// confinement on, as every host runs commands on Linux: the confinement
// shim between fork and exec, a Landlock ruleset, the namespaces and
// read-only binds the project needs, a private TMPDIR, the protected paths
// checked before and after. Compare with BenchmarkRawExecTrue (SPEC §9:
// ≤ 2.5×). Skipped where the kernel has no Landlock or no C compiler
// builds the shim.
func BenchmarkExecutorTrueConfined(b *testing.B) {
	for _, project := range changestest.Projects {
		b.Run(project.Name, func(b *testing.B) {
			e, cmd := benchExecutorWith(b, confinedBenchConfig(b), project.Root(b), "true")
			if c := runOnce(b, e, cmd).Record().Confinement; c == nil || c.Unconfined != "" {
				b.Skipf("runs are not confined here: %+v", c)
			}
			var exit time.Duration
			for b.Loop() {
				t0 := time.Now()
				r := runOnce(b, e, cmd)
				exit += time.Since(t0)
				<-r.ChangesDone()
			}
			b.ReportMetric(float64(exit.Nanoseconds())/float64(b.N), "exit-ns/op")
		})
	}
}

// BenchmarkRawExecTrue is the baseline of BenchmarkExecutorTrue: os/exec
// Run of `true`.
func BenchmarkRawExecTrue(b *testing.B) {
	path, err := osexec.LookPath("true")
	if err != nil {
		b.Skip(err)
	}
	for b.Loop() {
		if err := osexec.Command(path).Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// gib is the size of the throughput benchmarks' output.
const gib = 1 << 30

// BenchmarkStdout1GiB measures 1 GiB of stdout retained through an
// Executor (the newest 64 MiB kept), and reports the growth of the
// process's peak RSS.
func BenchmarkStdout1GiB(b *testing.B) {
	e, cmd := benchExecutor(b, changestest.Projects[0].Root(b), "head", "-c", strconv.Itoa(gib), "/dev/zero")
	b.SetBytes(gib)
	rssBefore := procStatusKB(b, "VmHWM")
	for b.Loop() {
		r := runOnce(b, e, cmd)
		if n := r.Record().StdoutBytes; n != gib {
			b.Fatalf("retained count %d, want %d", n, gib)
		}
	}
	b.ReportMetric(float64(procStatusKB(b, "VmHWM")-rssBefore)/1024, "MiB-RSS-growth")
}

// BenchmarkRawPipe1GiB is the baseline of BenchmarkStdout1GiB: os/exec's
// StdoutPipe copied into io.Discard.
func BenchmarkRawPipe1GiB(b *testing.B) {
	b.SetBytes(gib)
	rssBefore := procStatusKB(b, "VmHWM")
	for b.Loop() {
		c := osexec.Command("head", "-c", strconv.Itoa(gib), "/dev/zero")
		out, err := c.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		if err := c.Start(); err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(io.Discard, out)
		if err != nil || n != gib {
			b.Fatalf("copied %d: %v", n, err)
		}
		if err := c.Wait(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(procStatusKB(b, "VmHWM")-rssBefore)/1024, "MiB-RSS-growth")
}

// BenchmarkExecutorVsRaw alternates, in one loop, Start+Wait of `true`
// through an Executor and a raw os/exec Run of `true`, so that both see the
// same load on a noisy machine, and reports their ratio as "x-raw" (SPEC
// §9's target is ≤ 1.5) and one executor run's time as "executor-ns/run".
func BenchmarkExecutorVsRaw(b *testing.B) {
	e, cmd := benchExecutor(b, changestest.Projects[0].Root(b), "true")
	path, err := osexec.LookPath("true")
	if err != nil {
		b.Skip(err)
	}
	var viaExecutor, raw time.Duration
	for b.Loop() {
		t0 := time.Now()
		runOnce(b, e, cmd)
		t1 := time.Now()
		if err := osexec.Command(path).Run(); err != nil {
			b.Fatal(err)
		}
		viaExecutor += t1.Sub(t0)
		raw += time.Since(t1)
	}
	b.ReportMetric(float64(viaExecutor)/float64(raw), "x-raw")
	b.ReportMetric(float64(viaExecutor.Nanoseconds())/float64(b.N), "executor-ns/run")
}
