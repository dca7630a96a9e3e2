//go:build linux

package unixpg_test

import (
	"bufio"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentgate/agentgate/unixpg"

	"github.com/agentgate/agentgate/exec/procspec"
)

// probeScript prints, one per line: the supervisor's pid ($PPID), the
// working directory, A and B from the environment, the descriptors a
// process of the run has (ls's own: 0, 1, 2 and its directory), the umask,
// blocked and ignored signals, and the soft open-files limit. It then
// leaves a setsid escapee behind (pid written to $ESC) and, to show that
// nothing of a run reaches the next, changes its own umask, limits and
// signal dispositions before exiting 0.
const probeScript = `echo "$PPID"
pwd
echo "A=$A B=$B"
echo $(ls /proc/self/fd)
grep -E '^(Umask|SigBlk|SigIgn)' /proc/self/status | tr -s '\t ' ' ' | tr '\n' ' '; echo
ulimit -n
setsid sleep 1000 &
echo $! > "$ESC"
umask 077; ulimit -n 64; trap '' USR1 HUP
exit 0`

// probe runs probeScript in dir with env through unixpg and returns its
// output lines and the escapee's pid, after checking that Wait succeeded
// and the escapee is already dead when Wait returns.
func probe(t *testing.T, dir string, env ...string) (lines []string, escapee int) {
	t.Helper()
	esc := filepath.Join(dir, "escapee")
	st, out, _ := run(t, procspec.Spec{
		Path: "/bin/sh",
		Args: []string{"sh", "-c", probeScript},
		Dir:  dir,
		Env:  append(env, "ESC="+esc, "PATH=/usr/local/bin:/usr/bin:/bin"),
	})
	if !st.Exited || st.Code != 0 {
		t.Fatalf("probe: status %+v, output %q", st, out)
	}
	b, err := os.ReadFile(esc)
	if err != nil {
		t.Fatal(err)
	}
	escapee, err = strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	if unixpg.Alive(escapee) {
		t.Errorf("setsid escapee %d of the run in %s is still running after Wait returned", escapee, dir)
	}
	lines = strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 6 {
		t.Fatalf("probe printed %d lines, want 6: %q", len(lines), out)
	}
	return lines, escapee
}

func TestReusedSupervisorRunsCleanly(t *testing.T) {
	dir1, dir2 := t.TempDir(), t.TempDir()
	first, esc1 := probe(t, dir1, "A=one")
	second, _ := probe(t, dir2, "B=two")
	if first[0] != second[0] {
		t.Fatalf("the runs had different supervisors (%s, %s); the second should reuse the first's", first[0], second[0])
	}
	if first[1] != dir1 || second[1] != dir2 {
		t.Errorf("working directories %q, %q; want %q, %q", first[1], second[1], dir1, dir2)
	}
	if first[2] != "A=one B=" || second[2] != "A= B=two" {
		t.Errorf("environments %q, %q; want only the run's own variable in each", first[2], second[2])
	}
	for i, lines := range [][]string{first, second} {
		if lines[3] != "0 1 2 3" {
			t.Errorf("run %d: a process of the run has descriptors %q, want only 0 1 2 and ls's own 3", i+1, lines[3])
		}
		if !strings.Contains(lines[4], "SigBlk: 0000000000000000") {
			t.Errorf("run %d: blocked signals %q, want none", i+1, lines[4])
		}
	}
	if first[4] != second[4] || first[5] != second[5] {
		t.Errorf("run 1 left state to run 2: umask/signals %q → %q, open-files limit %q → %q",
			first[4], second[4], first[5], second[5])
	}
	hostUmask := statusField(t, "/proc/self/status", "Umask")
	if !strings.Contains(second[4], "Umask: "+hostUmask) {
		t.Errorf("the run's umask (%q) is not the host's %s", second[4], hostUmask)
	}
	if unixpg.Alive(esc1) {
		t.Errorf("run 1's escapee %d survived into run 2", esc1)
	}
}

// statusField returns the value of a "Name:\tvalue" line of a
// /proc/PID/status file.
func statusField(t *testing.T, path, name string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("%s has no %s line", path, name)
	return ""
}

// TestIdleSupervisorHoldsNoHostFDs checks the descriptors of a supervisor
// idle after a run: /dev/null as 0, 1 and 2, the control socket as 3, and
// otherwise only the Go runtime's own close-on-exec descriptors and its
// own /proc status (held for its check after each run, which the host
// holds too for its look at the supervisor) — nothing of the host, nothing
// of the run.
func TestIdleSupervisorHoldsNoHostFDs(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p, err := unixpg.Start(procspec.Spec{Path: "/bin/sh", Args: []string{"sh", "-c", `echo $PPID`}, Stdout: w})
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	sup, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(err)
	}
	if !isSupervisor(sup) {
		t.Fatalf("pid %d (the run's parent) is not a supervisor", sup)
	}
	hostFDs := slices.Collect(maps.Values(fdTargets(t, os.Getpid())))
	supFDs := fdTargets(t, sup)
	ownStatus := "/proc/" + strconv.Itoa(sup) + "/status"
	for fd, target := range supFDs {
		switch {
		case fd <= 2:
			if target != os.DevNull {
				t.Errorf("supervisor fd %d is %s, want %s", fd, target, os.DevNull)
			}
		case fd == 3:
			if !strings.HasPrefix(target, "socket:") {
				t.Errorf("supervisor fd 3 is %s, want its control socket", target)
			}
		default:
			runtimeOwn := strings.HasPrefix(target, "anon_inode:") || strings.HasPrefix(target, "/sys/fs/cgroup/") ||
				target == ownStatus
			if !runtimeOwn || !closeOnExec(t, sup, fd) {
				t.Errorf("supervisor fd %d is %s (close-on-exec %v); only the Go runtime's own descriptors may be there",
					fd, target, closeOnExec(t, sup, fd))
			}
		}
		// pipe:[inode], socket:[inode] and paths name one object; anonymous
		// inodes and the runtime's cgroup files do not tell processes apart.
		shareable := target != os.DevNull && !strings.HasPrefix(target, "anon_inode:") &&
			!strings.HasPrefix(target, "/sys/fs/cgroup/") && target != ownStatus
		if shareable && slices.Contains(hostFDs, target) {
			t.Errorf("supervisor fd %d is %s, which the host has open too", fd, target)
		}
	}
}

// fdTargets returns the link targets of /proc/PID/fd by descriptor.
func fdTargets(t *testing.T, pid int) map[int]string {
	t.Helper()
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]string{}
	for _, e := range entries {
		fd, _ := strconv.Atoi(e.Name())
		if target, err := os.Readlink(dir + "/" + e.Name()); err == nil {
			out[fd] = target
		}
	}
	return out
}

// closeOnExec reads the O_CLOEXEC bit of pid's descriptor fd from
// /proc/PID/fdinfo (flags are octal).
func closeOnExec(t *testing.T, pid, fd int) bool {
	t.Helper()
	flags, err := strconv.ParseUint(statusField(t, "/proc/"+strconv.Itoa(pid)+"/fdinfo/"+strconv.Itoa(fd), "flags"), 8, 64)
	if err != nil {
		t.Fatal(err)
	}
	return flags&syscall.O_CLOEXEC != 0
}

// isSupervisor reports whether pid runs with the supervisor's hidden
// argument.
func isSupervisor(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return err == nil && strings.Contains(string(b), "\x00__agentgate_supervise")
}

// childrenOf returns the children of every thread of pid.
func childrenOf(t *testing.T, pid int) []int {
	t.Helper()
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var kids []int
	for _, task := range tasks {
		b, _ := os.ReadFile(dir + "/" + task.Name() + "/children")
		for f := range strings.FieldsSeq(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				kids = append(kids, n)
			}
		}
	}
	return kids
}

// TestHostDeathEndsIdleSupervisors runs a helper host (runIdleHost) that
// leaves supervisors idle in its pool, then SIGKILLs it or lets it exit,
// and checks by pid that every supervisor exits.
func TestHostDeathEndsIdleSupervisors(t *testing.T) {
	for _, how := range []string{"sigkill", "quit"} {
		t.Run(how, func(t *testing.T) {
			host := exec.Command(os.Args[0], "-test.run=^$")
			host.Env = append(os.Environ(), hostIdleEnv+"=1")
			// The helper host inherits this pipe's write end without
			// close-on-exec, as a host may inherit descriptors from a
			// terminal or launcher. No supervisor may keep it.
			inheritedR, inheritedW, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer inheritedR.Close()
			inherited := fdTargets(t, os.Getpid())[int(inheritedW.Fd())]
			host.ExtraFiles = []*os.File{nil, nil, inheritedW} // fd 5: above the supervisor's 0–3
			stdin, err := host.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := host.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			host.Stderr = os.Stderr
			err = host.Start()
			inheritedW.Close()
			if err != nil {
				t.Fatal(err)
			}
			line, err := bufio.NewReader(stdout).ReadString('\n')
			if err != nil || line != "idle\n" {
				_ = host.Process.Kill()
				_ = host.Wait()
				t.Fatalf("helper host said %q (%v)", line, err)
			}
			pids := map[string]int{}
			for _, pid := range childrenOf(t, host.Process.Pid) {
				// A spare may still be between fork and exec.
				deadline := time.Now().Add(eventually)
				for !isSupervisor(pid) && unixpg.Alive(pid) && time.Now().Before(deadline) {
					time.Sleep(5 * time.Millisecond)
				}
				if !isSupervisor(pid) {
					t.Errorf("helper host child %d is not a supervisor", pid)
					continue
				}
				if kids := childrenOf(t, pid); len(kids) > 0 {
					t.Errorf("idle supervisor %d still has children %v", pid, kids)
				}
				// A spare that just started may not have closed it yet;
				// one that served a run has, before reading the run.
				holds := func() bool { return slices.Contains(slices.Collect(maps.Values(fdTargets(t, pid))), inherited) }
				deadline = time.Now().Add(eventually)
				for holds() && time.Now().Before(deadline) {
					time.Sleep(5 * time.Millisecond)
				}
				if holds() {
					t.Errorf("idle supervisor %d holds the host's inherited pipe %s", pid, inherited)
				}
				pids["supervisor "+strconv.Itoa(pid)] = pid
			}
			if len(pids) < idleHostRuns {
				t.Errorf("helper host has %d idle supervisors, want at least %d", len(pids), idleHostRuns)
			}
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
			// The host is gone and no supervisor held the pipe: end of file.
			_ = inheritedR.SetReadDeadline(time.Now().Add(eventually))
			if _, err := inheritedR.Read(make([]byte, 1)); err != io.EOF {
				t.Errorf("the host's inherited pipe did not reach end of file: %v", err)
			}
		})
	}
}
