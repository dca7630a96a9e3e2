package exec

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/exec/changes"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// eventually is the generous bound of "eventually" checks on a noisy machine.
const eventually = 10 * time.Second

// testExecutor is newTestExecutor for the tests that run Unix programs (sh,
// cat, sleep); they skip on Windows, whose tests run the helper program
// instead (executor_windows_test.go).
func testExecutor(t *testing.T, cfg Config) (*Executor, string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("runs Unix programs; executor_windows_test.go covers Windows")
	}
	return newTestExecutor(t, cfg)
}

// newTestExecutor returns an Executor with its state in a temporary
// directory and a project directory for commands.
func newTestExecutor(t *testing.T, cfg Config) (*Executor, string) {
	t.Helper()
	if cfg.StateDir == "" {
		cfg.StateDir = t.TempDir()
	}
	if cfg.HostKind == "" {
		cfg.HostKind = HostCLI
	}
	if cfg.Grace == 0 {
		cfg.Grace = 500 * time.Millisecond
	}
	e, err := New(cfg)
	require.NoError(t, err)
	// Runs after every later cleanup, but before the TempDir is removed.
	t.Cleanup(e.Flush)
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() {
		e.CancelAll()
		for _, r := range e.Runs() {
			<-r.Done()
		}
	})
	return e, root
}

// mustStart validates and starts argv in root.
func mustStart(t *testing.T, e *Executor, root string, timeout time.Duration, stdin []byte, argv ...string) *Run {
	t.Helper()
	cmd, err := Validate(Proposal{Argv: argv, ProjectRoot: root, Timeout: timeout, Stdin: stdin}, PathFromEnv(e.cfg.Env))
	require.NoError(t, err)
	r, err := e.Start(cmd, Meta{Provider: "test", Session: "s1"})
	require.NoError(t, err)
	return r
}

// waitRun waits for r within the generous bound.
func waitRun(t *testing.T, r *Run) Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rec, err := r.Wait(ctx)
	require.NoError(t, err)
	return rec
}

// readStream reads a whole stream of a finished run.
func readStream(t *testing.T, r *Run, s Stream) []byte {
	t.Helper()
	var out []byte
	for cursor := int64(0); ; {
		c, err := r.Read(s, cursor, 1<<20)
		require.NoError(t, err)
		out = append(out, c.Data...)
		if c.EOF {
			return out
		}
		cursor = c.Next
	}
}

func TestRunExitCodes(t *testing.T) {
	e, root := testExecutor(t, Config{})
	cases := []struct {
		script string
		code   int
		stdout string
		stderr string
	}{
		{"echo out; echo err >&2", 0, "out\n", "err\n"},
		{"echo failing; exit 3", 3, "failing\n", ""},
		{"exit 255", 255, "", ""},
		{"printf 'a\\000b\\377'", 0, "a\x00b\xff", ""},
		// More than a record carries: a spill file.
		{"head -c 5000 /dev/zero", 0, strings.Repeat("\x00", 5000), ""},
	}
	for _, tc := range cases {
		r := mustStart(t, e, root, 0, nil, "sh", "-c", tc.script)
		rec := waitRun(t, r)
		assert.Equal(t, StateExited, rec.State, tc.script)
		require.NotNil(t, rec.ExitCode, tc.script)
		assert.Equal(t, tc.code, *rec.ExitCode, tc.script)
		assert.Equal(t, tc.stdout, string(readStream(t, r, Stdout)), tc.script)
		assert.Equal(t, tc.stderr, string(readStream(t, r, Stderr)), tc.script)
		assert.Equal(t, int64(len(tc.stdout)), rec.StdoutBytes)
		assert.Positive(t, rec.PID)
		assert.False(t, rec.EndedAt.IsZero())

		// The persisted record matches (once flushed), and other hosts can
		// read the output.
		e.Flush()
		disk, err := readRecord(recordPath(e.cfg.StateDir, r.ID()), false)
		require.NoError(t, err)
		assert.Equal(t, rec.State, disk.State)
		assert.Equal(t, *rec.ExitCode, *disk.ExitCode)
		assert.Equal(t, HostCLI, disk.HostKind)
		assert.Equal(t, os.Getpid(), disk.HostPID)
		if runtime.GOOS == "linux" {
			assert.NotEmpty(t, disk.HostStart, "pid reuse is detectable")
			assert.True(t, hostAlive(disk.HostPID, disk.HostStart))
		}
		c, err := ReadRecorded(disk, Stdout, 0, 1<<20)
		require.NoError(t, err)
		assert.Equal(t, tc.stdout, string(c.Data))
		assert.True(t, c.EOF)
		// Up to 4 KiB of a stream is kept in the record, with no spill
		// file (an inode a run need not cost).
		small := len(tc.stdout) <= inlineOutputMax
		_, err = os.Stat(disk.StdoutPath)
		assert.Equal(t, small, errors.Is(err, os.ErrNotExist), "%s: spill file %v", tc.script, err)
		assert.Equal(t, small && tc.stdout != "", disk.StdoutInline != nil, tc.script)
	}
}

func TestRunSignalled(t *testing.T) {
	e, root := testExecutor(t, Config{})
	r := mustStart(t, e, root, 0, nil, "sh", "-c", "kill -9 $$")
	rec := waitRun(t, r)
	assert.Equal(t, StateExited, rec.State)
	assert.Nil(t, rec.ExitCode)
	assert.Equal(t, "SIGKILL", rec.Signal)
}

func TestRunStdin(t *testing.T) {
	e, root := testExecutor(t, Config{})
	in := patternBytes(MaxStdin)
	r := mustStart(t, e, root, 0, in, "cat")
	waitRun(t, r)
	assert.True(t, bytes.Equal(in, readStream(t, r, Stdout)))

	// A program that ignores stdin does not block the run.
	r = mustStart(t, e, root, 0, in, "true")
	assert.Equal(t, StateExited, waitRun(t, r).State)

	// A program that never reads stdin nor exits is still cancellable.
	r = mustStart(t, e, root, 0, in, "sleep", "60")
	r.Cancel()
	assert.Equal(t, StateCancelled, waitRun(t, r).State)

	// Empty stdin is the null device: end of file at once.
	r = mustStart(t, e, root, 0, nil, "cat")
	assert.Equal(t, StateExited, waitRun(t, r).State)
}

func TestRunTimeout(t *testing.T) {
	e, root := testExecutor(t, Config{})
	r := mustStart(t, e, root, 300*time.Millisecond, nil, "sh", "-c", "echo started; sleep 60")
	rec := waitRun(t, r)
	assert.Equal(t, StateTimedOut, rec.State)
	assert.Nil(t, rec.ExitCode)
	assert.Equal(t, "started\n", string(readStream(t, r, Stdout)))
}

func TestRunCancel(t *testing.T) {
	e, root := testExecutor(t, Config{})
	r := mustStart(t, e, root, 0, nil, "sh", "-c", "echo started; sleep 60")
	require.Eventually(t, func() bool { return r.Record().StdoutBytes > 0 }, eventually, 5*time.Millisecond)
	r.Cancel()
	r.Cancel()
	rec := waitRun(t, r)
	assert.Equal(t, StateCancelled, rec.State)
	r.Cancel() // a finished run is unaffected
	assert.Equal(t, StateCancelled, r.Record().State)
}

func TestRunCancelIgnoringSIGTERM(t *testing.T) {
	e, root := testExecutor(t, Config{Grace: 200 * time.Millisecond})
	r := mustStart(t, e, root, 0, nil, "sh", "-c", "trap '' TERM; echo ready; while :; do sleep 1; done")
	require.Eventually(t, func() bool { return r.Record().StdoutBytes > 0 }, eventually, 5*time.Millisecond)
	r.Cancel()
	assert.Equal(t, StateCancelled, waitRun(t, r).State)
}

func TestRunGrandchildHoldingStdout(t *testing.T) {
	e, root := testExecutor(t, Config{})
	pidFile := filepath.Join(root, "grandchild.pid")
	// The leader exits at once; a background grandchild keeps stdout open.
	r := mustStart(t, e, root, 0, nil, "sh", "-c", "sleep 300 & echo $! > grandchild.pid; echo hi")
	rec := waitRun(t, r)
	assert.Equal(t, StateExited, rec.State)
	require.NotNil(t, rec.ExitCode)
	assert.Equal(t, 0, *rec.ExitCode)
	assert.Equal(t, "hi\n", string(readStream(t, r, Stdout)))
	data, err := os.ReadFile(pidFile)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	require.NoError(t, err)
	_, alive := processIdentity(pid)
	assert.False(t, alive, "the grandchild was ended with the tree")
}

func TestRequestCancelFromAnotherProcess(t *testing.T) {
	e, root := testExecutor(t, Config{})
	r := mustStart(t, e, root, 0, nil, "sleep", "60")
	// Another process learns the id from the run records (agentgate ps),
	// which the host writes in the background right after Start.
	require.Eventually(t, func() bool {
		_, err := os.Stat(recordPath(e.cfg.StateDir, r.ID()))
		return err == nil
	}, 10*time.Second, 5*time.Millisecond)
	require.NoError(t, RequestCancel(e.cfg.StateDir, r.ID()))
	rec := waitRun(t, r)
	assert.Equal(t, StateCancelled, rec.State)
	e.Flush()
	assert.NoFileExists(t, cancelPath(e.cfg.StateDir, r.ID()), "the request is removed with the final record")
}

func TestStartFailure(t *testing.T) {
	e, root := testExecutor(t, Config{})
	// A script whose interpreter does not exist: it is found and bound,
	// but exec fails.
	exe := filepath.Join(root, "uninterpretable")
	require.NoError(t, os.WriteFile(exe, []byte("#!/nonexistent/interpreter\n"), 0o755))
	cmd, err := Validate(Proposal{Argv: []string{exe}, ProjectRoot: root}, "")
	require.NoError(t, err)
	r, err := e.Start(cmd, Meta{ID: "fails"})
	var ref *Refusal
	require.True(t, errors.As(err, &ref), "want *Refusal, got %v", err)
	assert.Equal(t, CodeFailedToStart, ref.Code)
	require.NotNil(t, r)
	<-r.Done()
	rec := r.Record()
	assert.Equal(t, StateFailedToStart, rec.State)
	assert.Contains(t, rec.Error, exe)
	disk, err := readRecord(recordPath(e.cfg.StateDir, "fails"), false)
	require.NoError(t, err)
	assert.Equal(t, StateFailedToStart, disk.State)
	c, err := r.Read(Stdout, 0, 10)
	require.NoError(t, err)
	assert.True(t, c.EOF)

	_, err = e.Start(cmd, Meta{ID: "fails"})
	assert.ErrorContains(t, err, "already used")
	_, err = e.Start(cmd, Meta{ID: "../escape"})
	assert.ErrorContains(t, err, "invalid")
	_, err = e.Start(Command{}, Meta{})
	assert.ErrorContains(t, err, "Validate")
}

func TestRunChangeSummary(t *testing.T) {
	k, err := changes.NewKeeper(changes.Options{StateDir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(func() { k.Close() })
	e, root := testExecutor(t, Config{Changes: k})
	require.NoError(t, os.WriteFile(filepath.Join(root, "keep"), []byte("same"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "edit"), []byte("old"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "gone"), []byte("x"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".git"), 0o755))
	r := mustStart(t, e, root, 0, nil, "sh", "-c", "echo new > edit; rm gone; mkdir d; echo n > d/new; echo g > .git/HEAD")
	waitRun(t, r)
	<-r.ChangesDone()
	rec := r.Record()
	assert.False(t, rec.ChangesPending)
	require.NotNil(t, rec.Changes)
	assert.Equal(t, []string{"d/", "d/new"}, rec.Changes.Created)
	assert.Equal(t, []string{"edit"}, rec.Changes.Modified)
	assert.Equal(t, []string{"gone"}, rec.Changes.Deleted)
	assert.False(t, rec.Changes.Incomplete, rec.Changes.Reason)
	e.Flush()
	disk, err := readRecord(recordPath(e.cfg.StateDir, r.ID()), false)
	require.NoError(t, err)
	assert.Equal(t, rec.Changes.Created, disk.Changes.Created)
	assert.False(t, disk.ChangesPending)
}

// slowTracker is a change tracker whose summaries wait for release.
type slowTracker struct{ release chan struct{} }

func (s slowTracker) Begin(string, string) changes.Mark { return slowMark(s) }
func (s slowTracker) Settle(string) error               { return nil }

type slowMark slowTracker

func (m slowMark) Finish() *changes.Summary {
	<-m.release
	return changes.Unknown("released")
}

// TestWaitNeverWaitsForTheSummary: the exit is known (Done, Wait, the
// record on disk) while the summary is still being made; it arrives later.
func TestWaitNeverWaitsForTheSummary(t *testing.T) {
	tr := slowTracker{release: make(chan struct{})}
	e, root := testExecutor(t, Config{Changes: tr})
	r := mustStart(t, e, root, 0, nil, "true")
	rec := waitRun(t, r)
	assert.Equal(t, StateExited, rec.State)
	assert.True(t, rec.ChangesPending)
	assert.Nil(t, rec.Changes)
	select {
	case <-r.ChangesDone():
		t.Fatal("ChangesDone closed before the summary was made")
	default:
	}
	close(tr.release)
	<-r.ChangesDone()
	rec = r.Record()
	assert.False(t, rec.ChangesPending)
	require.NotNil(t, rec.Changes)
	assert.Equal(t, "released", rec.Changes.Reason)
}

func TestExecutorRunsAndGet(t *testing.T) {
	e, root := testExecutor(t, Config{})
	a := mustStart(t, e, root, 0, nil, "true")
	b := mustStart(t, e, root, 0, nil, "true")
	waitRun(t, a)
	waitRun(t, b)
	got, ok := e.Get(a.ID())
	assert.True(t, ok)
	assert.Same(t, a, got)
	_, ok = e.Get("nope")
	assert.False(t, ok)
	assert.Equal(t, []*Run{a, b}, e.Runs())
	e.Flush()
	recs, err := ListRecords(e.cfg.StateDir)
	require.NoError(t, err)
	require.Len(t, recs, 2)
	assert.Equal(t, a.ID(), recs[0].ID)
	assert.Equal(t, "test", recs[0].Provider)

	running := mustStart(t, e, root, 0, []byte("input"), "sleep", "60")
	assert.Equal(t, "input", string(running.Command().Stdin))
	assert.False(t, e.Forget(running.ID()), "a running run is kept")
	assert.False(t, e.Forget("nope"))
	assert.True(t, e.Forget(a.ID()))
	_, ok = e.Get(a.ID())
	assert.False(t, ok)
	running.Cancel()
	waitRun(t, running)
	assert.Nil(t, running.Command().Stdin, "a finished run keeps no input")
	assert.NotEmpty(t, running.Command().StdinSHA256)
}

func TestWaitContext(t *testing.T) {
	e, root := testExecutor(t, Config{})
	r := mustStart(t, e, root, 0, nil, "sleep", "60")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec, err := r.Wait(ctx)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, StateRunning, rec.State)
	r.Cancel()
	waitRun(t, r)
}

func TestRunOutputDropped(t *testing.T) {
	e, root := testExecutor(t, Config{MemTail: 4 << 10, SpillCap: 64 << 10})
	// 1 MiB of numbered lines: the first ones are dropped.
	r := mustStart(t, e, root, 0, nil, "sh", "-c", "i=0; while [ $i -lt 20000 ]; do echo line$i; i=$((i+1)); done")
	rec := waitRun(t, r)
	assert.True(t, rec.StdoutDropped)
	c, err := r.Read(Stdout, 0, 100)
	require.NoError(t, err)
	assert.True(t, c.Dropped)
	assert.Equal(t, rec.StdoutBytes-64<<10+int64(len(c.Data)), c.Next)
	tail := readStream(t, r, Stdout)
	assert.True(t, strings.HasSuffix(string(tail), "line19999\n"))
	assert.Len(t, tail, 64<<10)
}

func TestRunConcurrentReadersWhileWriting(t *testing.T) {
	e, root := testExecutor(t, Config{MemTail: 8 << 10, SpillCap: 1 << 30})
	const n = 8 << 20
	r := mustStart(t, e, root, 0, nil, "head", "-c", strconv.Itoa(n), "/dev/urandom")
	results := make(chan []byte, 3)
	for range 3 {
		go func() {
			var out []byte
			for cursor := int64(0); ; {
				c, err := r.Read(Stdout, cursor, 10000)
				if err != nil || c.Dropped {
					results <- nil
					return
				}
				out = append(out, c.Data...)
				if c.EOF {
					results <- out
					return
				}
				cursor = c.Next
			}
		}()
	}
	waitRun(t, r)
	want := readStream(t, r, Stdout)
	require.Len(t, want, n)
	for range 3 {
		got := <-results
		assert.True(t, bytes.Equal(want, got), "a concurrent reader saw every byte in order")
	}
}

func TestRun1GiBFlatMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 1 GiB")
	}
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("needs /proc")
	}
	e, root := testExecutor(t, Config{})
	before := procStatusKB(t, "VmRSS")
	r := mustStart(t, e, root, 0, nil, "head", "-c", "1073741824", "/dev/zero")
	peak := before
	for {
		select {
		case <-r.Done():
		case <-time.After(50 * time.Millisecond):
			peak = max(peak, procStatusKB(t, "VmRSS"))
			continue
		}
		break
	}
	rec := waitRun(t, r)
	assert.Equal(t, int64(1<<30), rec.StdoutBytes)
	assert.True(t, rec.StdoutDropped)
	tail := readStream(t, r, Stdout)
	assert.Len(t, tail, DefaultSpillCap)
	assert.Equal(t, -1, bytes.IndexFunc(tail, func(r rune) bool { return r != 0 }))
	growthMiB := float64(peak-before) / 1024
	t.Logf("RSS growth during 1 GiB: %.1f MiB", growthMiB)
	assert.Less(t, growthMiB, 32.0, "memory stays flat")
}

// procStatusKB returns a field of /proc/self/status in KiB.
func procStatusKB(t testing.TB, field string) int64 {
	t.Helper()
	data, err := os.ReadFile("/proc/self/status")
	require.NoError(t, err)
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			require.NoError(t, err)
			return kb
		}
	}
	t.Fatalf("no %s in /proc/self/status", field)
	return 0
}

// TestFlushWritesFinalRecords checks that the background record writer
// leaves every run's final state on disk once Flush returns, for many runs
// ending close together.
func TestFlushWritesFinalRecords(t *testing.T) {
	e, root := testExecutor(t, Config{})
	var runs []*Run
	for i := 0; i < 20; i++ {
		runs = append(runs, mustStart(t, e, root, 0, nil, "true"))
	}
	for _, r := range runs {
		waitRun(t, r)
	}
	e.Flush()
	recs, err := ListRecords(e.cfg.StateDir)
	require.NoError(t, err)
	require.Len(t, recs, len(runs))
	for _, rec := range recs {
		assert.Equal(t, StateExited, rec.State, rec.ID)
		require.NotNil(t, rec.ExitCode, rec.ID)
		assert.Equal(t, 0, *rec.ExitCode, rec.ID)
	}
}
