//go:build linux

package unixpg

import (
	"bytes"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// targetSysProcAttr puts the target in its own process group, kills it if
// the supervisor's forking thread (locked for the supervisor's life) dies,
// stores a pidfd of it (close-on-exec) in *pidfd, or -1 where the kernel
// has none, and, when cgroupFD is not -1, starts it in that cgroup
// (clone3 CLONE_INTO_CGROUP: it never runs outside it).
func targetSysProcAttr(pidfd *int, cgroupFD int) *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, PidFD: pidfd}
	if cgroupFD >= 0 {
		attr.UseCgroupFD, attr.CgroupFD = true, cgroupFD
	}
	return attr
}

// leaderExit returns a channel that receives once the process behind pidfd
// has exited, and closes pidfd then; nil when pidfd is -1 or cannot be
// polled. Go's network poller waits for the pidfd to become readable, so
// the leader's exit wakes the supervisor directly rather than through
// SIGCHLD, the signal-handling thread and a channel: one cross-thread
// wake-up less on every run. SIGCHLD still covers every other child.
func leaderExit(pidfd int) <-chan struct{} {
	if pidfd < 0 {
		return nil
	}
	if err := unix.SetNonblock(pidfd, true); err != nil {
		unix.Close(pidfd)
		return nil
	}
	f := os.NewFile(uintptr(pidfd), "agentgate-leader-pidfd")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil
	}
	exited := make(chan struct{}, 1)
	go func() {
		defer f.Close()
		// The callback runs first at once and again whenever the poller
		// reports the pidfd readable; an error (not pollable, closed)
		// also ends the wait, which only costs the main loop a pass.
		_ = rc.Read(func(fd uintptr) bool {
			n, _ := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 0)
			return n > 0
		})
		exited <- struct{}{}
	}()
	return exited
}

// descendants returns the pids of every live descendant of the calling
// process, found by walking /proc/PID/task/TID/children from the calling
// process down. Children of every thread count: the kernel may re-parent an
// orphan to any thread of a subreaper. A process that forks or exits during
// the walk may be missed or included; callers repeat until nothing is left.
// Where the kernel lacks the children files (CONFIG_PROC_CHILDREN), the
// walk falls back to a scan of /proc/*/stat.
func descendants() []int { return descendantsOf(os.Getpid()) }

// descendantsOf returns the pids of every descendant of root, zombies
// included, as descendants does for the calling process; the host uses it
// to reach a run's tree through a supervisor that no longer serves.
func descendantsOf(root int) []int {
	kids, ok := taskChildren(root)
	if !ok {
		return descendantsByScan(root)
	}
	var out []int
	seen := map[int]bool{root: true}
	for len(kids) > 0 {
		pid := kids[len(kids)-1]
		kids = kids[:len(kids)-1]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		out = append(out, pid)
		more, _ := taskChildren(pid)
		kids = append(kids, more...)
	}
	return out
}

// taskChildren returns the children of every thread of pid; ok is false when
// the children files do not exist on this kernel or pid has no readable task
// directory.
func taskChildren(pid int) (kids []int, ok bool) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil, false
	}
	for _, t := range tasks {
		b, err := os.ReadFile(dir + "/" + t.Name() + "/children")
		if err != nil {
			if os.IsNotExist(err) && t.Name() == strconv.Itoa(pid) {
				return nil, false
			}
			continue
		}
		kids = append(kids, parsePidList(b)...)
	}
	return kids, true
}

// parsePidList parses a space-separated list of pids, as in a children
// file, skipping anything that is not a positive number.
func parsePidList(b []byte) []int {
	var pids []int
	for _, f := range bytes.Fields(b) {
		if n, err := strconv.Atoi(string(f)); err == nil && n > 0 {
			pids = append(pids, n)
		}
	}
	return pids
}

// descendantsByScan finds the descendants of root from the parent pids in
// every /proc/PID/stat.
func descendantsByScan(root int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		if st, ok := parseProcStat(b); ok {
			children[st.ppid] = append(children[st.ppid], pid)
		}
	}
	var out []int
	queue := append([]int(nil), children[root]...)
	seen := map[int]bool{root: true}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		out = append(out, pid)
		queue = append(queue, children[pid]...)
	}
	return out
}

// Alive reports whether pid names a process that has not ended: false when
// no such process exists and false for a zombie (ended, not yet reaped),
// which kill(pid, 0) would report as alive. Linux reads /proc/PID/stat.
// A pid can be reused after its process is reaped; Alive cannot tell.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	st, ok := parseProcStat(b)
	return ok && st.state != 'Z' && st.state != 'X' && st.state != 'x'
}

// recvmsgFlags makes descriptors received on the control socket
// close-on-exec atomically, so that no fork in the supervisor can pass one
// on by accident.
const recvmsgFlags = unix.MSG_CMSG_CLOEXEC

// dirThroughFD returns the path through which a forked target enters the
// directory open as fd: /proc/self/fd/FD, which the kernel resolves to that
// very directory, whatever the path dir names by then. (The target is
// forked before its descriptors are rearranged, and fd stays open until
// exec, close-on-exec or not.)
func dirThroughFD(fd int, dir string) string { return "/proc/self/fd/" + strconv.Itoa(fd) }
