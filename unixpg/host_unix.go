//go:build unix

package unixpg

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentgate/agentgate/exec/procspec"
)

// Process is a started run: the target, its tree and the supervisor serving
// it. Its methods are safe for concurrent use.
type Process struct {
	// pid is the target's pid and process group id.
	pid int
	// sc is the supervisor serving this run.
	sc *supervisorConn
	// cg is the run's own cgroup (Linux, where cgroups can be made; else
	// nil): ended after the run, killed when the host takes the tree over.
	cg *runCgroup
	// d is set for a direct run (Linux with per-run cgroups: the target is
	// the host's own child, direct_linux.go); sc is nil then, and the
	// fields from hostDeadline to lastPing are unused.
	d *directRun
	// hostDeadline is when the host ends the tree itself if the supervisor
	// has not reported its end (Spec.Timeout + grace + hostDeadlineMargin
	// after Start); zero when the run has no deadline.
	hostDeadline time.Time
	// ctrlMu guards active, termSent, killSent and lastPing, and orders
	// control lines before the supervisor can be handed to another run.
	ctrlMu sync.Mutex
	// active is true until the run's final status arrived, the supervisor
	// was lost, or the host took the end of the tree over; requests are
	// sent only while it is.
	active bool
	// termSent and killSent make Terminate and Kill idempotent.
	termSent, killSent bool
	// lastPing is when the watchdog last pinged the supervisor.
	lastPing time.Time
	// done is closed once status and err are final.
	done chan struct{}
	// status is the leader's exit status, final once done is closed.
	status procspec.ExitStatus
	// err is non-nil when the supervisor was lost, tampered with or stopped
	// answering before it reported the end of the tree, final once done is
	// closed.
	err error
}

// executable caches os.Executable, the binary re-executed as supervisor.
var executable = sync.OnceValues(os.Executable)

// devNull is opened once and shared for nil standard files and the
// supervisors' own 0, 1 and 2.
var devNull = sync.OnceValues(func() (*os.File, error) { return os.OpenFile(os.DevNull, os.O_RDWR, 0) })

// Start starts spec.Path under a supervisor and returns once the target has
// started. The target runs in its own process group with exactly spec.Env,
// spec.Dir (or, when empty, the host's working directory at the time of the
// call) and the given standard files; nothing else of the host or of any
// earlier run is inherited.
//
// Where the host can make a cgroup for each run (Linux; cgroup_linux.go)
// and UseSupervisors is off, the target is the host's own child, started
// into its cgroup and held to its bounds by the host and its warden
// (direct_linux.go). Elsewhere it runs under a supervisor: an idle one from
// a small pool when one is available, else a new one (the host binary
// re-executed); there is no limit on how many runs are in progress at once.
// See docs/lifetime.md.
//
// Errors, after which nothing started and nothing is left running:
//   - spec is unusable (relative Path, empty Args, a closed file): a plain
//     error;
//   - the target could not be executed: an error wrapping an *os.PathError
//     with the errno, so errors.Is(err, fs.ErrNotExist) or
//     errors.Is(err, fs.ErrPermission) work;
//   - the program is no longer the file spec.ProgramID identifies, checked
//     by the supervisor right before the fork: an error wrapping
//     procspec.ErrChanged that says what changed;
//   - spec.Sandbox could not be set up (the shim reported why): an error
//     wrapping ErrContainment;
//   - no supervisor could be started or set up (re-exec of the host binary,
//     prctl; a host that never called MaybeSupervise), or it broke the
//     protocol: an error wrapping ErrContainment,
//     whose text tells an agent not to retry or bypass.
func Start(spec procspec.Spec) (*Process, error) {
	if !filepath.IsAbs(spec.Path) {
		return nil, fmt.Errorf("start %q: the executable path must be absolute", spec.Path)
	}
	if len(spec.Args) == 0 {
		return nil, fmt.Errorf("start %q: argv is empty; it must hold at least argv[0]", spec.Path)
	}
	if !entryCalled.Load() {
		return nil, containmentErr(spec.Path, "finding the supervisor",
			errors.New("this program never called unixpg.MaybeSupervise from its main function, so its binary cannot serve as a run's supervisor"))
	}
	if spec.Dir == "" {
		// A pooled supervisor may have been started before the host
		// changed directory; if the directory is gone, the supervisor's
		// own is the best left.
		spec.Dir, _ = os.Getwd()
	}
	if spec.Sandbox != nil && runtime.GOOS != "linux" {
		return nil, containmentErr(spec.Path, "setting up its confinement", errors.New("a sandbox is available on Linux only"))
	}
	cg, cgDir, err := newRunCgroup()
	if err != nil {
		return nil, containmentErr(spec.Path, "setting up its cgroup", err)
	}
	if cgDir != nil {
		defer cgDir.Close() // the supervisor has its own copy once the run line is sent
	}
	line, err := encodeRunLine(spec, cgDir)
	if err != nil {
		cg.end()
		return nil, fmt.Errorf("start %q: %v", spec.Path, err)
	}
	files := []*os.File{spec.Stdin, spec.Stdout, spec.Stderr}
	for i, f := range files {
		if f == nil {
			if files[i], err = devNull(); err != nil {
				cg.end()
				return nil, fmt.Errorf("start %q: opening %s: %v", spec.Path, os.DevNull, err)
			}
		}
	}
	if cg != nil && directWanted() {
		p, err := startDirect(spec, cg, cgDir, files)
		if err != nil {
			cg.end()
		}
		return p, err
	}
	_, extra := extraFiles(spec, cgDir)
	files = append(files, extra...)
	for {
		sc, reused, err := supervisors.get()
		if err != nil {
			cg.end()
			return nil, containmentErr(spec.Path, "setting up a supervisor", err)
		}
		if err := sc.sendRun(line, files); err != nil {
			sc.retire()
			if reused {
				// The idle supervisor was gone before the run reached
				// it (its end was closed), so nothing started: try the
				// next one or a new one.
				continue
			}
			cg.end()
			return nil, containmentErr(spec.Path, "sending the run to the supervisor", err)
		}
		p, unread, err := startReply(spec, sc, cg)
		if reused && unread {
			continue
		}
		if err != nil {
			cg.end()
		}
		return p, err
	}
}

// startReply reads the supervisor's answer to a run line and returns the
// started Process or Start's error. A supervisor that reported an exec
// failure is healthy and goes back to the pool; any other failure retires
// it.
//
// unread is true when the supervisor died without answering and without
// having read all of the run line: the kernel reports ECONNRESET to the
// host when its peer closes with unread data, and the run line is the last
// thing the host sent. The target was therefore never started, and Start
// may give the run to another supervisor. (Where the kernel does not report
// this, the run fails with ErrContainment instead: the safe direction.)
func startReply(spec procspec.Spec, sc *supervisorConn, cg *runCgroup) (p *Process, unread bool, err error) {
	path := spec.Path
	msg, ok := <-sc.msgs
	switch {
	case ok && msg.Verb == statusStarted:
		p := &Process{pid: msg.Num, sc: sc, cg: cg, active: true, done: make(chan struct{})}
		if spec.Timeout > 0 {
			p.hostDeadline = time.Now().Add(spec.Timeout + effectiveGrace(spec.Grace) + hostDeadlineMargin)
		}
		supervisors.await(sc, p)
		watchProcess(p)
		return p, false, nil
	case ok && (msg.Verb == statusExecFail || msg.Verb == statusChanged || msg.Verb == statusConfine):
		supervisors.put(sc)
		return nil, false, startFailure(path, msg)
	}
	sc.retire()
	switch {
	case ok && msg.Verb == statusRefused:
		return nil, false, containmentErr(path, "setting up the supervisor", fmt.Errorf("%s", msg.Text))
	case ok:
		return nil, false, containmentErr(path, "starting the run", fmt.Errorf("the supervisor answered %q", formatStatus(msg)))
	case errors.Is(sc.readErr, syscall.ECONNRESET):
		<-sc.exited
		return nil, true, containmentErr(path, "starting the run",
			fmt.Errorf("the supervisor ended (%s) before reading the whole run", sc.exitHow))
	default:
		<-sc.exited
		return nil, false, containmentErr(path, "starting the run",
			fmt.Errorf("the supervisor ended (%s) without answering: %v", sc.exitHow, sc.readErr))
	}
}

// startFailure returns Start's error for a run that did not start, as the
// status line msg (execfail, changed or confinefail) reports it.
func startFailure(path string, msg statusMsg) error {
	switch msg.Verb {
	case statusExecFail:
		return fmt.Errorf("start %q: %w", path, &os.PathError{Op: "exec", Path: path, Err: syscall.Errno(msg.Num)})
	case statusChanged:
		return fmt.Errorf("start %q: %s: %w", path, msg.Text, procspec.ErrChanged)
	}
	return containmentErr(path, "setting up its confinement", errors.New(msg.Text))
}

// containmentErr wraps ErrContainment with what failed for which command.
func containmentErr(path, step string, err error) error {
	return fmt.Errorf("start %q: %s failed: %v: %w", path, step, err, procspec.ErrContainment)
}

// finish publishes the run's final status: msg, the supervisor's end line
// for the run, or, when ok is false, the supervisor's loss (killed from
// outside, or it broke the protocol). The supervisor's reader calls it, with
// an end line or after reaping the supervisor.
//
// After an end line the supervisor, whose tree is gone, goes back to the
// pool, unless its own check after the run (endReport.Off) or the host's
// look at it (inspectSupervisor) finds it stopped, traced or no longer a
// subreaper: then it is retired, the host ends whatever may remain of the
// tree itself, and Wait's error says that containment was lost. Control
// lines can no longer be sent for this run by then. A lost supervisor is
// handled the same way (endTree).
func (p *Process) finish(msg statusMsg, ok bool) {
	p.ctrlMu.Lock()
	p.active = false
	p.ctrlMu.Unlock()
	unwatch(p)
	if !ok || msg.Verb != statusEnd {
		why := fmt.Sprintf("its supervisor answered %q", formatStatus(msg))
		if !ok {
			p.sc.retire()
			<-p.sc.exited // exitHow is final
			why = fmt.Sprintf("its supervisor was lost before reporting that the tree was gone (%v; it ended: %s)", p.sc.readErr, p.sc.exitHow)
		}
		p.endTree(why, false)
		return
	}
	off := msg.End.Off
	if off == "" {
		off = inspectSupervisor(p.sc.proc.Pid, p.sc.status)
	} else {
		off = "its supervisor found after the run that " + off
	}
	if off != "" {
		p.endTree(off, msg.End.Deadline)
		return
	}
	p.status = msg.End.exitStatus()
	// What escaped the supervisor's sweep is still in the run's cgroup.
	p.cg.release()
	supervisors.put(p.sc)
	close(p.done)
}

// exitStatus returns the leader's exit status an end report describes.
func (e endReport) exitStatus() procspec.ExitStatus {
	if e.Exited {
		return procspec.ExitStatus{Code: e.Code, Exited: true, TimedOut: e.Deadline}
	}
	name := unix.SignalName(syscall.Signal(e.Signal))
	if name == "" {
		name = fmt.Sprintf("signal %d", e.Signal)
	}
	return procspec.ExitStatus{Code: -1, Signal: name, TimedOut: e.Deadline}
}

// Pid returns the target's pid, which is also its process group id.
func (p *Process) Pid() int { return p.pid }

// Terminate ends the tree: SIGTERM (and SIGCONT) to the group and every
// descendant, the grace period, then SIGKILL and a sweep — done by the
// supervisor, or for a direct run by the host itself (every process of the
// run's cgroup, then cgroup.kill). It returns at once; Wait tells when the
// tree is gone. Calls after the first, after Kill, or after the run ended
// do nothing.
func (p *Process) Terminate() {
	if p.d != nil {
		p.d.terminate(false)
		return
	}
	p.request(ctrlTerm, &p.termSent)
}

// Kill SIGKILLs the tree at once and sweeps (a direct run: cgroup.kill). It returns
// at once; Wait tells when the tree is gone. It also cuts short a Terminate
// in its grace period. Calls after the first or after the run ended do
// nothing.
func (p *Process) Kill() {
	if p.d != nil {
		p.d.kill()
		return
	}
	p.request(ctrlKill, &p.killSent)
}

// request sends one control line unless *sent is already set or the run is
// over.
func (p *Process) request(verb string, sent *bool) {
	p.ctrlMu.Lock()
	defer p.ctrlMu.Unlock()
	if !p.active || *sent || p.killSent {
		return
	}
	*sent = true
	p.sc.writeControl(verb)
}

// ping asks the supervisor for a pong unless the run is over or one was
// sent within pingEvery before now.
func (p *Process) ping(now time.Time) {
	p.ctrlMu.Lock()
	defer p.ctrlMu.Unlock()
	if !p.active || now.Sub(p.lastPing) < pingEvery {
		return
	}
	p.lastPing = now
	p.sc.writeControl(ctrlPing)
}

// Wait returns the leader's exit status once the leader has exited and the
// rest of its tree is gone (Linux: every descendant, escapees included —
// for a direct run, once its cgroup is empty; elsewhere: the process
// group). A supervisor then serves later runs or exits. Wait may be called
// any number of times from any goroutines; all get the same result.
// ExitStatus.TimedOut says the run's deadline ended it.
//
// The error is non-nil only when the host had to end the tree itself
// because its supervisor could not be trusted to: it was lost before
// reporting (killed, or it broke the protocol), stopped, traced, found
// itself tampered with after the run, stopped answering pings, or let the
// host's deadline pass (endTree); or, for a direct run, when waiting for
// the leader failed (the host then ended the run's cgroup). The error wraps
// ErrContainment and says why; ExitStatus then has Code -1 and Signal
// "SIGKILL".
func (p *Process) Wait() (procspec.ExitStatus, error) {
	<-p.done
	return p.status, p.err
}

// Done returns a channel closed when Wait would return.
func (p *Process) Done() <-chan struct{} { return p.done }
