//go:build windows

package exec

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/exec/atomicfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/windows"
)

// The executor on Windows, end to end: Validate, Start inside a Job Object
// (package winjob), retained output, records. The commands are this test
// binary acting as a helper program (runTestHelper), so nothing here needs
// a Windows utility; under Wine the same tests run in `make test`.

// waitPidFile waits until the spawn helper has written its "LEADER CHILD"
// pid file and returns the two pids.
func waitPidFile(t *testing.T, path string) (leader, child int) {
	t.Helper()
	require.Eventually(t, func() bool {
		data, err := atomicfile.ReadFile(path)
		if err != nil {
			return false
		}
		_, err = fmt.Sscanf(string(data), "%d %d", &leader, &child)
		return err == nil
	}, 30*time.Second, 5*time.Millisecond, "the helper never wrote %s", path)
	return leader, child
}

// requireGone waits until process pid has ended (WaitForSingleObject on a
// handle to it, up to 30 s) and fails the test when it does not end. A pid
// that can no longer be opened belongs to no process: it has ended.
func requireGone(t *testing.T, pid int, what string) {
	t.Helper()
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		return
	}
	defer windows.CloseHandle(h)
	ev, err := windows.WaitForSingleObject(h, 30_000)
	require.NoError(t, err)
	require.Equal(t, uint32(windows.WAIT_OBJECT_0), ev, "%s (pid %d) is still running", what, pid)
}

func TestWindowsRunExitCodesAndOutput(t *testing.T) {
	e, root := newTestExecutor(t, Config{})
	cases := []struct {
		argv           []string
		code           int
		stdout, stderr string
	}{
		{helperArgv(t, "exit", "0", "out\n", "err\n"), 0, "out\n", "err\n"},
		{helperArgv(t, "exit", "3", "failing\n"), 3, "failing\n", ""},
		{helperArgv(t, "exit", "255"), 255, "", ""},
		{helperArgv(t, "exit", "0", "two words", ""), 0, "two words", ""},
		{helperArgv(t, "bytes"), 0, "a\x00b\xff", ""},
	}
	for _, tc := range cases {
		name := strings.Join(tc.argv[2:], " ")
		r := mustStart(t, e, root, 0, nil, tc.argv...)
		rec := waitRun(t, r)
		assert.Equal(t, StateExited, rec.State, name)
		require.NotNil(t, rec.ExitCode, name)
		assert.Equal(t, tc.code, *rec.ExitCode, name)
		assert.Equal(t, tc.stdout, string(readStream(t, r, Stdout)), name)
		assert.Equal(t, tc.stderr, string(readStream(t, r, Stderr)), name)
		assert.Equal(t, int64(len(tc.stdout)), rec.StdoutBytes, name)
		assert.Positive(t, rec.PID, name)

		e.Flush()
		disk, err := readRecord(recordPath(e.cfg.StateDir, r.ID()), false)
		require.NoError(t, err, name)
		assert.Equal(t, StateExited, disk.State, name)
		assert.Equal(t, tc.code, *disk.ExitCode, name)
		assert.Equal(t, os.Getpid(), disk.HostPID, name)
		assert.NotEmpty(t, disk.HostStart, "pid reuse is detectable (process creation time)")
		assert.True(t, hostAlive(disk.HostPID, disk.HostStart))
		c, err := ReadRecorded(disk, Stdout, 0, 1<<20)
		require.NoError(t, err, name)
		assert.Equal(t, tc.stdout, string(c.Data), name)
	}
}

func TestWindowsRunStdin(t *testing.T) {
	e, root := newTestExecutor(t, Config{})
	in := patternBytes(MaxStdin)
	r := mustStart(t, e, root, 0, in, helperArgv(t, "cat")...)
	assert.Equal(t, StateExited, waitRun(t, r).State)
	assert.True(t, bytes.Equal(in, readStream(t, r, Stdout)), "stdin reaches the program byte for byte")

	// A program that never reads stdin nor exits is still cancellable.
	r = mustStart(t, e, root, 0, in, helperArgv(t, "sleep")...)
	r.Cancel()
	assert.Equal(t, StateCancelled, waitRun(t, r).State)

	// No stdin is the NUL device: end of file at once.
	r = mustStart(t, e, root, 0, nil, helperArgv(t, "cat")...)
	rec := waitRun(t, r)
	assert.Equal(t, StateExited, rec.State)
	assert.Zero(t, rec.StdoutBytes)
}

// TestWindowsTimeoutEndsGrandchild: the timeout ends the whole job, the
// leader and the grandchild it started, and the output so far is kept.
func TestWindowsTimeoutEndsGrandchild(t *testing.T) {
	e, root := newTestExecutor(t, Config{})
	pidFile := filepath.Join(t.TempDir(), "pids")
	// 5 s leaves the helper ample time to start its child first, even under
	// Wine on a loaded machine; the test checks that it did.
	r := mustStart(t, e, root, 5*time.Second, nil, helperArgv(t, "spawn", pidFile, "sleep")...)
	rec := waitRun(t, r)
	assert.Equal(t, StateTimedOut, rec.State)
	assert.Nil(t, rec.ExitCode)
	require.FileExists(t, pidFile, "the helper did not start its child within the 5 s timeout")
	leader, child := waitPidFile(t, pidFile)
	requireGone(t, leader, "the leader")
	requireGone(t, child, "the grandchild")
	assert.Equal(t, "started\n", string(readStream(t, r, Stdout)))
}

// TestWindowsCancelEndsTree: Cancel ends the leader and its grandchild;
// cancelling twice or after the end changes nothing.
func TestWindowsCancelEndsTree(t *testing.T) {
	e, root := newTestExecutor(t, Config{})
	pidFile := filepath.Join(t.TempDir(), "pids")
	r := mustStart(t, e, root, 0, nil, helperArgv(t, "spawn", pidFile, "sleep")...)
	leader, child := waitPidFile(t, pidFile)
	r.Cancel()
	r.Cancel()
	rec := waitRun(t, r)
	assert.Equal(t, StateCancelled, rec.State)
	assert.Nil(t, rec.ExitCode)
	requireGone(t, leader, "the leader")
	requireGone(t, child, "the grandchild")
	r.Cancel()
	assert.Equal(t, StateCancelled, r.Record().State)
}

// TestWindowsGrandchildHoldingStdout: the leader exits while a grandchild
// it started still holds stdout; the run ends with the leader's code, and
// the grandchild ends with it (nothing outlives the leader).
func TestWindowsGrandchildHoldingStdout(t *testing.T) {
	e, root := newTestExecutor(t, Config{})
	pidFile := filepath.Join(t.TempDir(), "pids")
	r := mustStart(t, e, root, 0, nil, helperArgv(t, "spawn", pidFile, "exit")...)
	rec := waitRun(t, r)
	assert.Equal(t, StateExited, rec.State)
	require.NotNil(t, rec.ExitCode)
	assert.Equal(t, 0, *rec.ExitCode)
	assert.Equal(t, "started\n", string(readStream(t, r, Stdout)))
	_, child := waitPidFile(t, pidFile)
	requireGone(t, child, "the grandchild")
}

func TestWindowsRequestCancelFromAnotherProcess(t *testing.T) {
	e, root := newTestExecutor(t, Config{})
	r := mustStart(t, e, root, 0, nil, helperArgv(t, "sleep")...)
	require.Eventually(t, func() bool {
		_, err := os.Stat(recordPath(e.cfg.StateDir, r.ID()))
		return err == nil
	}, 10*time.Second, 5*time.Millisecond)
	require.NoError(t, RequestCancel(e.cfg.StateDir, r.ID()))
	assert.Equal(t, StateCancelled, waitRun(t, r).State)
}

// TestWindowsHostDeathEndsRuns kills a host process (TerminateProcess, as
// a crash or Task Manager does) while its run and the run's child are
// running: the job's last handle closes with the host, and
// JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE ends both. The record the host left
// running is then marked lost.
func TestWindowsHostDeathEndsRuns(t *testing.T) {
	stateDir := t.TempDir()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	pidFile := filepath.Join(t.TempDir(), "pids")
	argv := helperArgv(t, "host", stateDir, root, pidFile)
	host := osexec.Command(argv[0], argv[1:]...)
	host.Stderr = os.Stderr
	require.NoError(t, host.Start())
	exited := make(chan error, 1)
	go func() { exited <- host.Wait() }()
	var leader, child int
	select {
	case err := <-exited:
		t.Fatalf("the host ended before starting its run: %v", err)
	default:
		leader, child = waitPidFile(t, pidFile)
	}
	require.NoError(t, host.Process.Kill())
	<-exited
	requireGone(t, leader, "the run's leader")
	requireGone(t, child, "the run's child")

	n, err := MarkLost(stateDir)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	rec, err := readRecord(recordPath(stateDir, "hosted"), false)
	require.NoError(t, err)
	assert.Equal(t, StateLost, rec.State)
}

// TestWindowsStartFailure: an .exe that Windows cannot load fails to
// start, and a program removed between approval and start is refused as
// changed; nothing runs either way.
func TestWindowsStartFailure(t *testing.T) {
	e, root := newTestExecutor(t, Config{})
	bad := filepath.Join(root, "notaprogram.exe")
	require.NoError(t, os.WriteFile(bad, []byte("not a Windows program\r\n"), 0o755))
	cmd, err := Validate(Proposal{Argv: []string{bad}, ProjectRoot: root}, "")
	require.NoError(t, err)
	r, err := e.Start(cmd, Meta{ID: "fails"})
	var ref *Refusal
	require.True(t, errors.As(err, &ref), "want *Refusal, got %v", err)
	assert.Equal(t, CodeFailedToStart, ref.Code)
	<-r.Done()
	assert.Equal(t, StateFailedToStart, r.Record().State)
	assert.Contains(t, r.Record().Error, bad)

	self, err := os.Executable()
	require.NoError(t, err)
	data, err := os.ReadFile(self)
	require.NoError(t, err)
	gone := filepath.Join(root, "vanishing.exe")
	require.NoError(t, os.WriteFile(gone, data, 0o755))
	cmd, err = Validate(Proposal{Argv: []string{gone, testHelperArg, "exit", "0"}, ProjectRoot: root}, "")
	require.NoError(t, err)
	require.NoError(t, os.Remove(gone))
	r, err = e.Start(cmd, Meta{ID: "vanished"})
	require.True(t, errors.As(err, &ref), "want *Refusal, got %v", err)
	assert.Equal(t, CodeProgramChanged, ref.Code)
	<-r.Done()
	assert.Equal(t, StateFailedToStart, r.Record().State)
}
