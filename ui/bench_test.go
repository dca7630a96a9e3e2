package ui

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	osexec "os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"github.com/stretchr/testify/require"

	"github.com/agentgate/agentgate/exec"
	"github.com/agentgate/agentgate/ui/model"
	"github.com/agentgate/agentgate/ui/model/modeltest"
)

// manyRecords writes n finished and running run records under a new state
// directory, as several hosts would.
func manyRecords(t testing.TB, n int) string {
	t.Helper()
	dir := t.TempDir()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	code := 0
	// A finished run's record carries an output of at most 4 KiB itself
	// (exec.Record.StdoutInline): these print 1,234 bytes each.
	out := bytes.Repeat([]byte("ok  \tgithub.com/me/project/pkg\t0.123s\n"), 40)[:1234]
	for i := range n {
		st := exec.StateExited
		inline := out
		if i%100 == 0 {
			st, inline = exec.StateRunning, nil
		}
		modeltest.WriteRecord(t, dir, exec.Record{
			ID: fmt.Sprintf("run-%06d", i), Argv: []string{"go", "test", "-run", fmt.Sprintf("Test%d", i), "./..."},
			Executable: "/usr/local/go/bin/go", Dir: "/home/me/src/project", ProjectRoot: fmt.Sprintf("/home/me/src/p%d", i%7),
			Provider: []string{"claude", "codex", "gemini"}[i%3], HostKind: []exec.HostKind{exec.HostApp, exec.HostCLI}[i%2],
			HostPID: 1000 + i%5, State: st, ExitCode: &code, StartedAt: base.Add(time.Duration(i) * time.Second),
			EndedAt: base.Add(time.Duration(i)*time.Second + 1500*time.Millisecond), StdoutBytes: 1234, StdoutInline: inline,
		})
	}
	return dir
}

// rssMiB returns the process's resident set (VmRSS) and its peak (VmHWM)
// in MiB, from /proc/self/status; zeros where it is not available.
func rssMiB() (rss, peak float64) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		kb, _ := strconv.ParseFloat(fields[1], 64)
		switch fields[0] {
		case "VmRSS:":
			rss = kb / 1024
		case "VmHWM:":
			peak = kb / 1024
		}
	}
	return rss, peak
}

// TestProcesses10kRecords loads 10,000 run records into the Processes
// window (test driver), filters and scrolls it, and checks the resident
// memory stays within the 250 MiB budget (SPEC §9). The work runs in a
// child process (this test binary again, running only
// processes10kWorkload), so the peak it measures is that workload's own,
// not whatever earlier tests of this binary left behind.
func TestProcesses10kRecords(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 10,000 records")
	}
	if os.Getenv(processes10kEnv) == "1" {
		processes10kWorkload(t)
		return
	}
	cmd := osexec.Command(os.Args[0], "-test.run=^TestProcesses10kRecords$", "-test.v")
	cmd.Env = append(os.Environ(), processes10kEnv+"=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	m := regexp.MustCompile(`10,000 records: RSS ([0-9.]+) MiB, peak ([0-9.]+) MiB`).FindSubmatch(out)
	require.NotNil(t, m, "the child did not report its memory:\n%s", out)
	peak, err := strconv.ParseFloat(string(m[2]), 64)
	require.NoError(t, err)
	t.Logf("10,000 records: RSS %s MiB, peak %s MiB (child process)", m[1], m[2])
	require.LessOrEqual(t, peak, 250.0, "the Processes window with 10,000 runs must stay within 250 MiB")
}

// processes10kEnv marks the child process of TestProcesses10kRecords.
const processes10kEnv = "AGENTGATE_TEST_PROCESSES_10K"

// processes10kWorkload is the measured part of TestProcesses10kRecords.
func processes10kWorkload(t *testing.T) {
	dir := manyRecords(t, 10000)
	test.NewTempApp(t)
	m := &model.ProcessesModel{StateDir: dir}
	require.NoError(t, m.LoadAll())
	require.Equal(t, 10000, m.Len())
	v := newProcessesView(m, &modeltest.Gate{}, nil, func() {})
	w := test.NewTempWindow(t, v.root)
	w.Resize(fyne.NewSize(960, 600))
	v.refresh()
	v.table.ScrollToBottom()
	v.table.ScrollToTop()
	v.providerSel.SetSelected("codex")
	require.Equal(t, 3333, m.Len())
	v.table.Select(widgetCell(10, 1))
	m.Update([]string{"run-000001", "run-009999"})
	v.refresh()
	rss, peak := rssMiB()
	require.Positive(t, peak, "no VmHWM in /proc/self/status")
	t.Logf("10,000 records: RSS %.1f MiB, peak %.1f MiB", rss, peak)
}

// BenchmarkProcesses10k measures loading 10,000 records into the
// Processes window and redrawing it, next to BenchmarkListRecords10k (the
// bare exec.ListRecords baseline), and reports the peak RSS in MiB.
func BenchmarkProcesses10k(b *testing.B) {
	dir := manyRecords(b, 10000)
	test.NewTempApp(b)
	m := &model.ProcessesModel{StateDir: dir}
	v := newProcessesView(m, &modeltest.Gate{}, nil, func() {})
	w := test.NewTempWindow(b, v.root)
	w.Resize(fyne.NewSize(960, 600))
	b.ResetTimer()
	for b.Loop() {
		if err := m.LoadAll(); err != nil {
			b.Fatal(err)
		}
		v.refresh()
	}
	b.StopTimer()
	_, peak := rssMiB()
	b.ReportMetric(peak, "peak-RSS-MiB")
}

// BenchmarkProcessesUpdate measures one throttled update (100 changed
// records) of a window holding 10,000, next to BenchmarkProcesses10k.
func BenchmarkProcessesUpdate(b *testing.B) {
	dir := manyRecords(b, 10000)
	test.NewTempApp(b)
	m := &model.ProcessesModel{StateDir: dir}
	if err := m.LoadAll(); err != nil {
		b.Fatal(err)
	}
	v := newProcessesView(m, &modeltest.Gate{}, nil, func() {})
	test.NewTempWindow(b, v.root).Resize(fyne.NewSize(960, 600))
	ids := make([]string, 100)
	for i := range ids {
		ids[i] = fmt.Sprintf("run-%06d", i*100)
	}
	b.ResetTimer()
	for b.Loop() {
		m.Update(ids)
		v.refresh()
	}
}

// BenchmarkListRecords10k is the baseline: exec.ListRecords of 10,000 records.
func BenchmarkListRecords10k(b *testing.B) {
	dir := manyRecords(b, 10000)
	b.ResetTimer()
	for b.Loop() {
		if _, err := exec.ListRecords(dir); err != nil {
			b.Fatal(err)
		}
	}
}
