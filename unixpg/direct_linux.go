//go:build linux

package unixpg

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentgate/agentgate/exec/procspec"
)

// Direct runs. Where the host can make a cgroup for each run (cgroup v2 as
// root, or in a subtree delegated to the user; cgroup_linux.go), a run's
// target is the host's own child, started straight into that cgroup
// (clone3 CLONE_INTO_CGROUP), with no supervisor process between: a
// supervisor's two extra hops per run (the run handed over, its end
// reported back) and its Go runtime's wake-ups cost more than the run of a
// short command. What the supervisor did for a run, the cgroup and the
// warden do instead:
//
//   - the cgroup holds everything the run forks, however it detaches
//     (setsid, double fork), and cgroup.kill ends all of it at once: the
//     host ends a tree as a supervisor did (SIGTERM and SIGCONT to the
//     process group and every process of the cgroup → grace → cgroup.kill),
//     on Terminate, at the deadline, and when the leader exits and anything
//     is left; Wait returns once the cgroup is empty;
//   - the warden (warden_linux.go) knows each run's cgroup and deadline
//     before the run starts, so a stopped host does not stretch a run and a
//     dead one does not leave it behind;
//   - the target is in its own process group, so a terminal's Ctrl-C and
//     Ctrl-Z reach the host only.
//
// A run that is not Landlock-scoped could signal or trace its host (its
// parent) as it could a supervisor; docs/lifetime.md says what holds then.
// UseSupervisors turns direct runs off (tests of the supervisor itself).

// forceSupervisors is set by UseSupervisors(true).
var forceSupervisors atomic.Bool

// UseSupervisors makes every later Start run its target under a per-run
// supervisor (on) even where per-run cgroups would let the host start it
// directly, or returns to the default (off): direct runs where the host can
// make cgroups, supervisors elsewhere. It is for tests of the supervisor
// and of what differs between the two.
func UseSupervisors(on bool) { forceSupervisors.Store(on) }

// directWanted reports whether Start runs the next target directly: per-run
// cgroups are in use, they take the warden's extended attributes, and
// supervisors are not forced.
func directWanted() bool {
	if forceSupervisors.Load() {
		return false
	}
	base, _ := CgroupBase()
	return base != "" && cgroupXattrs()
}

// directRun is the host's side of a direct run.
type directRun struct {
	// proc is the leader, the host's child (a pidfd where the kernel has
	// them: signals and the wait cannot reach a reused pid).
	proc *os.Process
	// mountNS is the leader's mount namespace, held open by the host until
	// the run's end is published (holdMountNS); -1 when none is held.
	mountNS int
	// pidfd is this package's own pidfd of the leader (-1 where the kernel
	// has none): liveDirect waits for it to become readable in the
	// runtime's poller, with the run's pipes, rather than in a thread
	// blocked in waitid.
	pidfd int
	// cg is the run's cgroup (the Process's).
	cg *runCgroup
	// grace is the run's SIGTERM → SIGKILL delay.
	grace time.Duration
	// monoDeadline is the run's deadline on CLOCK_MONOTONIC (ns), as the
	// warden knows it; zero for none.
	monoDeadline int64
	// deadline is the same moment on the host's clock; zero for none.
	deadline time.Time
	// mu guards the fields below.
	mu sync.Mutex
	// exited is set once the leader was reaped.
	exited bool
	// ending is set once SIGTERM went to the tree (Terminate, the deadline,
	// or the leader's exit with something left).
	ending bool
	// killed is set once cgroup.kill was written.
	killed bool
	// deadlineHit is set when the deadline, by the host's timer or the
	// warden's, began the end before anything else did.
	deadlineHit bool
	// deadlineTimer and graceTimer are the host's timers; nil when not
	// set.
	deadlineTimer, graceTimer *time.Timer
}

// startDirect starts spec as a direct run in the cgroup cg (cgDir is its
// open directory) with the standard files files; see Start for the errors.
func startDirect(spec procspec.Spec, cg *runCgroup, cgDir *os.File, files []*os.File) (*Process, error) {
	base := filepath.Dir(cg.dir)
	w, err := currentWarden(base)
	if err != nil {
		return nil, containmentErr(spec.Path, "starting the run's warden", err)
	}
	d := &directRun{cg: cg, grace: effectiveGrace(spec.Grace)}
	if spec.Timeout > 0 {
		d.monoDeadline = monoNow() + int64(spec.Timeout)
	}
	p := &Process{cg: cg, d: d, done: make(chan struct{})}
	// The warden learns the run's deadline from its cgroup before anything
	// can run in it, and is woken for it unless it will scan by then.
	attr := strconv.FormatInt(d.monoDeadline, 10) + " " + strconv.FormatInt(int64(d.grace), 10)
	if err := unix.Fsetxattr(int(cgDir.Fd()), wardDeadline, []byte(attr), 0); err != nil {
		return nil, containmentErr(spec.Path, "marking the run's cgroup for its warden", err)
	}
	if d.monoDeadline > 0 {
		if err := w.expect(d.monoDeadline + int64(wardenMargin)); err != nil {
			// The warden ended since it was had (its socket is closed): a
			// new one, which scans at once, or no run.
			w.retire()
			if w, err = currentWarden(base); err == nil {
				err = w.expect(d.monoDeadline + int64(wardenMargin))
			}
			if err != nil {
				return nil, containmentErr(spec.Path, "telling the warden of the run", err)
			}
		}
	}
	wardens.mu.Lock()
	wardens.live++
	wardens.mu.Unlock()
	unregister := func() {
		wardens.mu.Lock()
		wardens.live--
		wardens.mu.Unlock()
	}
	if want := spec.ProgramID; want != nil {
		got, err := procspec.StatFileID(spec.Path)
		if err != nil || got != *want {
			unregister()
			why := "it is gone: " + fmt.Sprint(err)
			if err == nil {
				why = want.Describe(got)
			}
			return nil, fmt.Errorf("start %q: the program %s changed since it was checked (%s): %w", spec.Path, spec.Path, why, procspec.ErrChanged)
		}
	}
	path, argv, dir := spec.Path, spec.Args, spec.Dir
	if spec.DirFD != nil {
		// Entered before exec through the descriptor: the very directory
		// the host checked, whatever the path names by then.
		dir = "/proc/self/fd/" + strconv.Itoa(int(spec.DirFD.Fd()))
	}
	var statusR *os.File
	if sb := spec.Sandbox; sb != nil {
		statusR, path, argv, files, err = shimLaunch(spec, files)
		if err != nil {
			unregister()
			return nil, containmentErr(spec.Path, "setting up its confinement", err)
		}
		defer statusR.Close()
		if spec.DirFD != nil {
			dir = "" // the shim enters the directory through its descriptor
		}
	}
	// Only the files given reach the target: whatever descriptor the host
	// holds without close-on-exec (inherited from its launcher, or opened
	// by C code) is made close-on-exec first.
	_ = unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	pidfd := -1
	proc, err := os.StartProcess(path, argv, &os.ProcAttr{
		Dir: dir, Env: spec.Env, Files: files,
		Sys: &syscall.SysProcAttr{Setpgid: true, UseCgroupFD: true, CgroupFD: int(cgDir.Fd()), PidFD: &pidfd},
	})
	if statusR != nil {
		files[shimStatusFD].Close() // the shim's end
	}
	if err != nil {
		unregister()
		if spec.Sandbox != nil {
			return nil, containmentErr(spec.Path, "starting the confinement shim", err)
		}
		var pe *os.PathError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("start %q: %w", spec.Path, &os.PathError{Op: "exec", Path: spec.Path, Err: pe.Err})
		}
		return nil, fmt.Errorf("start %q: %w", spec.Path, err)
	}
	if statusR != nil {
		msg, rerr := readShimStatus(int(statusR.Fd()))
		if rerr != nil || msg != "" {
			// The shim did not execute the program: it is ended and reaped
			// before Start returns, so nothing of the run is left.
			_ = proc.Kill()
			_, _ = proc.Wait()
			if pidfd >= 0 {
				unix.Close(pidfd)
			}
			unregister()
			if rerr != nil {
				msg = "C the confinement shim " + rerr.Error()
			}
			return nil, startFailure(spec.Path, shimFailure(msg))
		}
	}
	d.proc, p.pid, d.pidfd = proc, proc.Pid, pidfd
	d.mountNS = -1
	if sb := spec.Sandbox; sb != nil && sb.MountNS {
		d.mountNS = holdMountNS(proc.Pid)
	}
	if spec.Timeout > 0 {
		d.mu.Lock()
		d.deadline = time.Now().Add(spec.Timeout)
		d.deadlineTimer = time.AfterFunc(spec.Timeout, func() { d.terminate(true) })
		d.mu.Unlock()
	}
	watchProcess(p)
	go p.liveDirect()
	return p, nil
}

// liveDirect waits for the leader, ends what is left of its tree, and
// publishes the run's end once the cgroup is empty.
func (p *Process) liveDirect() {
	d := p.d
	if d.pidfd >= 0 {
		awaitExit(d.pidfd)
	}
	state, err := d.proc.Wait()
	d.mu.Lock()
	d.exited = true
	d.mu.Unlock()
	if d.cg.populated() {
		// Something outlived the leader (a grandchild holding stdout, an
		// escapee): the same end as a terminate, so it cannot keep the run.
		d.terminate(false)
		for wait := 100 * time.Microsecond; d.cg.populated(); wait = min(2*wait, sweepPoll) {
			time.Sleep(wait)
		}
	}
	d.mu.Lock()
	stopTimer(d.deadlineTimer)
	stopTimer(d.graceTimer)
	if !d.deadline.IsZero() && time.Now().After(d.deadline) && !d.deadlineHit {
		// Ended after its deadline without the host's timer ending it (the
		// host was stopped, or busy): the warden says on the cgroup whether
		// it ended it. (It acts only when the host had not begun an end.)
		if _, acted := readXattrInt(d.cg.dir, wardActed); acted {
			d.deadlineHit = true
		}
	}
	hit := d.deadlineHit
	d.mu.Unlock()
	unwatch(p)
	wardens.mu.Lock()
	wardens.live--
	wardens.mu.Unlock()
	if err != nil {
		p.status = procspec.ExitStatus{Code: -1, Signal: "SIGKILL", TimedOut: hit}
		p.err = fmt.Errorf("run pid %d: waiting for it failed (%v); agentgate ended the run's cgroup: %w", p.pid, err, procspec.ErrContainment)
		p.cg.end()
		close(p.done)
		d.releaseMountNS()
		return
	}
	p.status = waitStatusOf(state.Sys().(syscall.WaitStatus), hit)
	p.cg.remove() // found empty above
	close(p.done)
	d.releaseMountNS()
}

// holdMountNS opens the mount namespace of the run's leader pid, just
// exec'd by the confinement shim, and returns the descriptor, or -1 when
// it cannot (the leader already exited: its namespaces are gone). While
// the host holds it, the leader's exit does not tear the namespace down:
// the kernel does that before it tells the parent of the exit (unmounting
// the tree and waiting for an RCU grace period, 60 µs on the project's
// VM), so the run's end would reach the agent that much later. The host
// lets go of it after publishing the end (releaseMountNS). The descriptor
// is close-on-exec and lets the host do nothing it could not do anyway.
func holdMountNS(pid int) int {
	fd, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/ns/mnt", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1
	}
	return fd
}

// releaseMountNS closes the run's held mount namespace, if any; the
// namespace's teardown then runs on this goroutine, after the end was
// published.
func (d *directRun) releaseMountNS() {
	if d.mountNS >= 0 {
		unix.Close(d.mountNS)
		d.mountNS = -1
	}
}

// waitStatusOf returns the ExitStatus a wait status describes.
func waitStatusOf(ws syscall.WaitStatus, timedOut bool) procspec.ExitStatus {
	if ws.Signaled() {
		return endReport{Signal: int(ws.Signal()), Deadline: timedOut}.exitStatus()
	}
	return endReport{Exited: true, Code: ws.ExitStatus(), Deadline: timedOut}.exitStatus()
}

// stopTimer stops t unless it is nil.
func stopTimer(t *time.Timer) {
	if t != nil {
		t.Stop()
	}
}

// terminate begins the end of the tree: SIGTERM and SIGCONT to the group
// and every process of the cgroup, and cgroup.kill after the grace. The
// first call counts; byDeadline says the deadline called it, which makes
// the run timed out unless its leader had exited.
func (d *directRun) terminate(byDeadline bool) {
	d.mu.Lock()
	if d.ending || d.killed {
		d.mu.Unlock()
		return
	}
	if byDeadline && !d.exited {
		d.deadlineHit = true
	}
	d.ending = true
	d.graceTimer = time.AfterFunc(d.grace, d.kill)
	d.mu.Unlock()
	// The warden backs this end too: it kills what is left once the grace
	// and its margin are over, should the host be stopped by then.
	now := monoNow()
	_ = unix.Setxattr(d.cg.dir, wardEnding, []byte(strconv.FormatInt(now, 10)), 0)
	wardens.mu.Lock()
	w := wardens.conn
	wardens.mu.Unlock()
	if w != nil {
		_ = w.expect(now + int64(d.grace+wardenMargin))
	}
	d.signalTree(unix.SIGTERM)
	d.signalTree(unix.SIGCONT) // a stopped process only acts on SIGTERM once continued
}

// kill SIGKILLs the whole tree at once (cgroup.kill); it also cuts a
// terminate's grace short. The first call counts.
func (d *directRun) kill() {
	d.mu.Lock()
	if d.killed {
		d.mu.Unlock()
		return
	}
	d.killed = true
	stopTimer(d.graceTimer)
	d.mu.Unlock()
	d.cg.kill()
}

// signalTree sends sig to the leader's process group and to every process
// of the cgroup. Errors are ignored: a process that is gone needs none.
func (d *directRun) signalTree(sig unix.Signal) {
	if pid := d.proc.Pid; pid > 0 {
		_ = unix.Kill(-pid, sig)
	}
	signalCgroup(d.cg.dir, sig)
}

// awaitExit returns once the process behind pidfd has exited (its pidfd is
// readable), waiting in the runtime's network poller, and closes pidfd. If
// the pidfd cannot be polled it returns at once (the caller's blocking
// wait then waits).
func awaitExit(pidfd int) {
	if err := unix.SetNonblock(pidfd, true); err != nil {
		unix.Close(pidfd)
		return
	}
	f := os.NewFile(uintptr(pidfd), "agentgate-leader-pidfd")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Read(func(fd uintptr) bool {
		n, _ := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 0)
		return n > 0
	})
}
