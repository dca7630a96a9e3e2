//go:build linux

package unixpg_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentgate/agentgate/unixpg"

	"github.com/agentgate/agentgate/exec/procspec"
)

// eventually is the generous bound for anything that must happen "soon" on a
// shared, noisy machine. It is not a performance assertion.
const eventually = 10 * time.Second

// treeMembers names the pid files the adversarial tree writes, one per kind
// of descendant.
var treeMembers = []string{
	"ignterm",  // child that ignores SIGTERM (trap '' TERM, then exec sleep)
	"setsid",   // grandchild that called setsid: out of the group and session
	"dfork",    // double fork: orphaned while the leader lives, still in the group
	"dfsetsid", // double fork plus setsid: orphaned and out of the group
	"holder",   // holds the stdout pipe open (as every member does)
}

// leaderScript builds the tree, waits until every member wrote its pid, runs
// $ATTACK when set (lifetime_linux_test.go), and then, by mode ($1): "exit" exits 0 once the file "go" exists (startTree
// creates it after checking that every member runs), "obey" waits with the
// default SIGTERM action, "ignore" waits ignoring SIGTERM (as does every
// member it starts).
const leaderScript = `
[ "$1" = ignore ] && trap '' TERM
echo tree-ready
echo $$ > "$D/leader"
sh "$D/ignterm.sh" &
sh -c 'setsid sh "$D/setsid.sh" & wait' &
( sleep 1000 & echo $! > "$D/dfork" ) &
( setsid sh "$D/dfsetsid.sh" & ) &
sh "$D/holder.sh" &
for f in ignterm setsid dfork dfsetsid holder; do
	while [ ! -s "$D/$f" ]; do sleep 0.01; done
done
[ -n "$ATTACK" ] && eval "$ATTACK"
if [ "$1" = exit ]; then
	while [ ! -e "$D/go" ]; do sleep 0.01; done
	exit 0
fi
while :; do sleep 1; done
`

// writeTreeScripts writes leader.sh and the member scripts into dir.
func writeTreeScripts(t testing.TB, dir string) {
	t.Helper()
	files := map[string]string{
		"leader.sh":   leaderScript,
		"ignterm.sh":  `trap '' TERM; echo $$ > "$D/ignterm"; exec sleep 1000`,
		"setsid.sh":   `echo $$ > "$D/setsid"; exec sleep 1000`,
		"dfsetsid.sh": `echo $$ > "$D/dfsetsid"; exec sleep 1000`,
		"holder.sh":   `echo $$ > "$D/holder"; exec sleep 1000`,
	}
	for name, body := range files {
		if err := os.WriteFile(dir+"/"+name, []byte(body+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// readTreePids waits until every member wrote its pid file and returns the
// pids by name.
func readTreePids(t testing.TB, dir string) map[string]int {
	t.Helper()
	pids := map[string]int{}
	deadline := time.Now().Add(eventually)
	for _, name := range treeMembers {
		for {
			b, _ := os.ReadFile(dir + "/" + name)
			if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n > 0 && bytes.HasSuffix(b, []byte("\n")) {
				pids[name] = n
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("tree member %q wrote no pid within %v", name, eventually)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	return pids
}

// startTree starts the adversarial tree with stdout on a pipe and returns
// the process, its members' pids and the pipe's read end.
func startTree(t *testing.T, mode string) (*unixpg.Process, map[string]int, *os.File) {
	t.Helper()
	dir := t.TempDir()
	writeTreeScripts(t, dir)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	p, err := unixpg.Start(treeSpec(dir, mode, w))
	w.Close() // the host keeps its own copy; only the tree holds the write end now
	if err != nil {
		t.Fatal(err)
	}
	pids := readTreePids(t, dir)
	pids["leader"] = p.Pid()
	for name, pid := range pids {
		if !unixpg.Alive(pid) {
			t.Fatalf("tree member %s (pid %d) is not running before the test acts", name, pid)
		}
	}
	assertEscaped(t, p.Pid(), pids)
	if err := os.WriteFile(dir+"/go", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return p, pids, r
}

// assertEscaped checks that the setsid members really left the group, so
// that the tests prove the sweep and not only the group kill.
func assertEscaped(t *testing.T, pgid int, pids map[string]int) {
	t.Helper()
	for _, name := range []string{"setsid", "dfsetsid"} {
		got, err := syscall.Getpgid(pids[name])
		if err != nil {
			t.Fatalf("getpgid(%s=%d): %v", name, pids[name], err)
		}
		if got == pgid {
			t.Fatalf("tree member %s (pid %d) is still in group %d; the tree is not adversarial", name, pids[name], pgid)
		}
	}
}

// waitWithin calls p.Wait and fails the test if it does not return within
// eventually.
func waitWithin(t *testing.T, p *unixpg.Process) procspec.ExitStatus {
	t.Helper()
	type result struct {
		s   procspec.ExitStatus
		err error
	}
	ch := make(chan result, 1)
	go func() { s, err := p.Wait(); ch <- result{s, err} }()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatalf("Wait: %v", r.err)
		}
		return r.s
	case <-time.After(eventually):
		t.Fatalf("Wait did not return within %v", eventually)
	}
	panic("unreachable")
}

// assertAllDead checks, by pid, that no member of the tree is running
// (a zombie counts as dead).
func assertAllDead(t *testing.T, pids map[string]int) {
	t.Helper()
	for name, pid := range pids {
		if unixpg.Alive(pid) {
			t.Errorf("tree member %s (pid %d) is still running", name, pid)
		}
	}
}

// assertEOF checks that the stdout pipe reaches end of file: no process of
// the tree holds its write end any more.
func assertEOF(t *testing.T, r *os.File) {
	t.Helper()
	_ = r.SetReadDeadline(time.Now().Add(eventually))
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("stdout pipe did not reach EOF: %v (read %q)", err, out)
	}
	if !bytes.Contains(out, []byte("tree-ready")) {
		t.Errorf("stdout = %q, want the leader's tree-ready line", out)
	}
}

func TestTerminateEndsEveryDescendant(t *testing.T) { bothModes(t, testTerminateEndsEveryDescendant) }

func testTerminateEndsEveryDescendant(t *testing.T) {
	cases := []struct {
		mode       string
		wantSignal string
	}{
		{"obey", "SIGTERM"},
		{"ignore", "SIGKILL"},
	}
	for _, c := range cases {
		t.Run(c.mode, func(t *testing.T) {
			p, pids, r := startTree(t, c.mode)
			p.Terminate()
			p.Terminate() // idempotent
			st := waitWithin(t, p)
			assertAllDead(t, pids)
			assertEOF(t, r)
			if st.Exited || st.Signal != c.wantSignal || st.Code != -1 {
				t.Errorf("status = %+v, want killed by %s", st, c.wantSignal)
			}
		})
	}
}

func TestKillEndsEveryDescendant(t *testing.T) { bothModes(t, testKillEndsEveryDescendant) }

func testKillEndsEveryDescendant(t *testing.T) {
	p, pids, r := startTree(t, "ignore")
	p.Kill()
	p.Terminate() // after Kill: nothing more to do
	p.Kill()
	st := waitWithin(t, p)
	assertAllDead(t, pids)
	assertEOF(t, r)
	if st.Exited || st.Signal != "SIGKILL" {
		t.Errorf("status = %+v, want killed by SIGKILL", st)
	}
}

func TestKillCutsTerminateGraceShort(t *testing.T) { bothModes(t, testKillCutsTerminateGraceShort) }

func testKillCutsTerminateGraceShort(t *testing.T) {
	dir := t.TempDir()
	writeTreeScripts(t, dir)
	spec := treeSpec(dir, "ignore", nil)
	spec.Grace = time.Hour
	p, err := unixpg.Start(spec)
	if err != nil {
		t.Fatal(err)
	}
	pids := readTreePids(t, dir)
	pids["leader"] = p.Pid()
	p.Terminate()
	p.Kill()
	waitWithin(t, p) // with an hour of grace, only Kill can make this return
	assertAllDead(t, pids)
}

func TestLeaderExitEndsTree(t *testing.T) { bothModes(t, testLeaderExitEndsTree) }

func testLeaderExitEndsTree(t *testing.T) {
	p, pids, r := startTree(t, "exit")
	st := waitWithin(t, p)
	assertAllDead(t, pids)
	assertEOF(t, r)
	if !st.Exited || st.Code != 0 || st.Signal != "" {
		t.Errorf("status = %+v, want exit status 0", st)
	}
	p.Terminate() // after the end: no effect, no panic
	p.Kill()
}

// TestHostDeathEndsTree runs a helper host (this test binary, see
// runTestHost) that starts the tree, then kills the host with SIGKILL or
// lets it exit without ending the run, and checks by pid that every member
// of the tree and the supervisor end.
func TestHostDeathEndsTree(t *testing.T) { bothModes(t, testHostDeathEndsTree) }

func testHostDeathEndsTree(t *testing.T) {
	for _, how := range []string{"sigkill", "quit"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			writeTreeScripts(t, dir)
			host := exec.Command(os.Args[0], "-test.run=^$")
			host.Env = append(os.Environ(), hostDirEnv+"="+dir)
			stdin, err := host.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := host.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			host.Stderr = os.Stderr
			if err := host.Start(); err != nil {
				t.Fatal(err)
			}
			line, err := bufio.NewReader(stdout).ReadString('\n')
			leader, perr := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "started ")))
			if err != nil || perr != nil {
				_ = host.Process.Kill()
				_ = host.Wait()
				t.Fatalf("helper host said %q (%v)", line, err)
			}
			pids := readTreePids(t, dir)
			pids["leader"] = leader
			pids["supervisor"] = parentOf(t, leader)
			assertEscaped(t, leader, pids)
			if how == "sigkill" {
				_ = host.Process.Signal(syscall.SIGKILL)
			} else {
				_, _ = stdin.Write([]byte("quit\n"))
			}
			_ = host.Wait()
			deadline := time.Now().Add(eventually)
			for anyAlive(pids) && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			assertAllDead(t, pids)
		})
	}
}

// TestSupervisorKilledReportsLostContainment kills a run's supervisor from
// outside: Wait must say containment was lost and the leader (which has a
// parent-death signal) and its group must end.
func TestSupervisorKilledReportsLostContainment(t *testing.T) {
	dir := t.TempDir()
	writeTreeScripts(t, dir)
	p, err := unixpg.Start(treeSpec(dir, "ignore", nil))
	if err != nil {
		t.Fatal(err)
	}
	pids := readTreePids(t, dir)
	if err := syscall.Kill(parentOf(t, p.Pid()), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := p.Wait(); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, procspec.ErrContainment) {
			t.Errorf("Wait error = %v, want one wrapping ErrContainment", err)
		}
	case <-time.After(eventually):
		t.Fatalf("Wait did not return within %v", eventually)
	}
	inGroup := map[string]int{"leader": p.Pid(), "ignterm": pids["ignterm"], "holder": pids["holder"]}
	deadline := time.Now().Add(eventually)
	for anyAlive(inGroup) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	assertAllDead(t, inGroup)
	// The setsid escapees are out of reach once the supervisor is gone;
	// clean them up here.
	for _, name := range []string{"setsid", "dfsetsid", "dfork"} {
		_ = syscall.Kill(pids[name], syscall.SIGKILL)
	}
}

// parentOf returns pid's parent pid from /proc/PID/stat.
func parentOf(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	ppid, err := strconv.Atoi(fields[1])
	if err != nil {
		t.Fatal(err)
	}
	return ppid
}

// anyAlive reports whether any pid in pids is running.
func anyAlive(pids map[string]int) bool {
	for _, pid := range pids {
		if unixpg.Alive(pid) {
			return true
		}
	}
	return false
}
