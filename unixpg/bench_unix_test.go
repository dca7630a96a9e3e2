//go:build unix

package unixpg_test

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/agentgate/agentgate/unixpg"

	"github.com/agentgate/agentgate/exec/procspec"
)

// BenchmarkStartWaitTrue runs /bin/true through a supervisor (a pooled one
// after the first iteration); compare with BenchmarkRawOSExecTrue (the
// SPEC's target is ≤ 1.5×), or see BenchmarkStartWaitVsRaw for the ratio
// under equal load.
//
// "supervisor" runs under a supervisor, "direct" as the host's own child in
// its cgroup (where per-run cgroups can be made), as package exec runs it.
func BenchmarkStartWaitTrue(b *testing.B) {
	for _, direct := range []bool{false, true} {
		name := map[bool]string{false: "supervisor", true: "direct"}[direct]
		b.Run(name, func(b *testing.B) {
			if base, why := unixpg.CgroupBase(); direct && base == "" {
				b.Skipf("no per-run cgroups here (%s)", why)
			}
			unixpg.UseSupervisors(!direct)
			defer unixpg.UseSupervisors(true)
			for b.Loop() {
				p, err := unixpg.Start(procspec.Spec{Path: "/bin/true", Args: []string{"true"}})
				if err != nil {
					b.Fatal(err)
				}
				if st, err := p.Wait(); err != nil || st.Code != 0 {
					b.Fatal(st, err)
				}
			}
		})
	}
}

// BenchmarkRawOSExecTrue is the baseline: os/exec running /bin/true.
func BenchmarkRawOSExecTrue(b *testing.B) {
	for b.Loop() {
		if err := exec.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStartWaitVsRaw alternates one run through unixpg and one raw
// os/exec run of /bin/true, so that both see the same load on a noisy
// machine, and reports their ratio as "x-raw" (the SPEC's target is ≤ 1.5)
// besides the time of one unixpg run as "unixpg-ns/run".
func BenchmarkStartWaitVsRaw(b *testing.B) {
	var viaUnixpg, raw time.Duration
	for b.Loop() {
		t0 := time.Now()
		p, err := unixpg.Start(procspec.Spec{Path: "/bin/true", Args: []string{"true"}})
		if err != nil {
			b.Fatal(err)
		}
		if st, err := p.Wait(); err != nil || st.Code != 0 {
			b.Fatal(st, err)
		}
		t1 := time.Now()
		if err := exec.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
		viaUnixpg += t1.Sub(t0)
		raw += time.Since(t1)
	}
	b.ReportMetric(float64(viaUnixpg)/float64(raw), "x-raw")
	b.ReportMetric(float64(viaUnixpg.Nanoseconds())/float64(b.N), "unixpg-ns/run")
}

// BenchmarkTerminateToGone measures the time from Terminate to Wait's return
// (the last descendant gone) for a leader with a child, both obeying or
// both ignoring SIGTERM, with a 200 ms grace. It reports ms-over-grace: the
// time beyond the grace for "ignore" (target ≤ 200), and the whole time for
// "obey", where no grace should be spent.
func BenchmarkTerminateToGone(b *testing.B) {
	const grace = 200 * time.Millisecond
	scripts := map[string]string{
		"obey":   `sleep 1000 & echo started; wait`,
		"ignore": `trap '' TERM; sleep 1000 & echo started; while :; do wait; done`,
	}
	for _, mode := range []string{"obey", "ignore"} {
		b.Run(mode, func(b *testing.B) {
			var total time.Duration
			for b.Loop() {
				r, w, err := os.Pipe()
				if err != nil {
					b.Fatal(err)
				}
				p, err := unixpg.Start(procspec.Spec{Path: "/bin/sh", Args: []string{"sh", "-c", scripts[mode]},
					Stdout: w, Grace: grace})
				w.Close()
				if err != nil {
					b.Fatal(err)
				}
				buf := make([]byte, 8)
				if _, err := r.Read(buf); err != nil { // the child exists
					b.Fatal(err)
				}
				t0 := time.Now()
				p.Terminate()
				if _, err := p.Wait(); err != nil {
					b.Fatal(err)
				}
				total += time.Since(t0)
				r.Close()
			}
			over := total / time.Duration(b.N)
			if mode == "ignore" {
				over -= grace
			}
			b.ReportMetric(float64(over)/float64(time.Millisecond), "ms-over-grace")
		})
	}
}
