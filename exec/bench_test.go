package exec

import (
	"context"
	"io"
	osexec "os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// benchExecutor returns an Executor and a validated command for argv.
func benchExecutor(b *testing.B, argv ...string) (*Executor, Command) {
	b.Helper()
	if runtime.GOOS == "windows" {
		b.Skip("runs Unix programs")
	}
	e, err := New(Config{StateDir: b.TempDir(), HostKind: HostCLI})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(e.Flush)
	root, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	cmd, err := Validate(Proposal{Argv: argv, ProjectRoot: root}, PathFromEnv(e.cfg.Env))
	if err != nil {
		b.Fatal(err)
	}
	return e, cmd
}

// runOnce starts cmd through e and waits for it.
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

// BenchmarkExecutorTrue measures Start+Wait of `true` through an Executor:
// validation done once, then supervisor, pipes, snapshot, two durable
// record writes. Compare with BenchmarkRawExecTrue.
func BenchmarkExecutorTrue(b *testing.B) {
	e, cmd := benchExecutor(b, "true")
	for b.Loop() {
		runOnce(b, e, cmd)
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
	e, cmd := benchExecutor(b, "head", "-c", strconv.Itoa(gib), "/dev/zero")
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
	e, cmd := benchExecutor(b, "true")
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
