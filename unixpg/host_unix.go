//go:build unix

package unixpg

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"

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
	// ctrlMu guards active, termSent and killSent, and orders control
	// lines before the supervisor can be handed to another run.
	ctrlMu sync.Mutex
	// active is true until the run's final status arrived (or the
	// supervisor was lost); requests are sent only while it is.
	active bool
	// termSent and killSent make Terminate and Kill idempotent.
	termSent, killSent bool
	// done is closed once status and err are final.
	done chan struct{}
	// status is the leader's exit status, final once done is closed.
	status procspec.ExitStatus
	// err is non-nil when the supervisor was lost before reporting the end
	// of the tree, final once done is closed.
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
// The supervisor is an idle one from a small pool when one is available,
// else a new one (the host binary re-executed); there is no limit on how
// many runs are in progress at once. See docs/lifetime.md.
//
// Errors, after which nothing started and nothing is left running:
//   - spec is unusable (relative Path, empty Args, a closed file): a plain
//     error;
//   - the target could not be executed: an error wrapping an *os.PathError
//     with the errno, so errors.Is(err, fs.ErrNotExist) or
//     errors.Is(err, fs.ErrPermission) work;
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
	line, err := encodeRunLine(spec)
	if err != nil {
		return nil, fmt.Errorf("start %q: %v", spec.Path, err)
	}
	std := [runFDs]*os.File{spec.Stdin, spec.Stdout, spec.Stderr}
	for i, f := range std {
		if f == nil {
			if std[i], err = devNull(); err != nil {
				return nil, fmt.Errorf("start %q: opening %s: %v", spec.Path, os.DevNull, err)
			}
		}
	}
	for {
		sc, reused, err := supervisors.get()
		if err != nil {
			return nil, containmentErr(spec.Path, "setting up a supervisor", err)
		}
		if err := sc.sendRun(line, std); err != nil {
			sc.retire()
			if reused {
				// The idle supervisor was gone before the run reached
				// it (its end was closed), so nothing started: try the
				// next one or a new one.
				continue
			}
			return nil, containmentErr(spec.Path, "sending the run to the supervisor", err)
		}
		p, unread, err := startReply(spec.Path, sc)
		if reused && unread {
			continue
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
func startReply(path string, sc *supervisorConn) (p *Process, unread bool, err error) {
	msg, ok := <-sc.msgs
	switch {
	case ok && msg.Verb == statusStarted:
		p := &Process{pid: msg.Num, sc: sc, active: true, done: make(chan struct{})}
		supervisors.await(sc, p)
		return p, false, nil
	case ok && msg.Verb == statusExecFail:
		supervisors.put(sc)
		return nil, false, fmt.Errorf("start %q: %w", path, &os.PathError{Op: "exec", Path: path, Err: syscall.Errno(msg.Num)})
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

// containmentErr wraps ErrContainment with what failed for which command.
func containmentErr(path, step string, err error) error {
	return fmt.Errorf("start %q: %s failed: %v: %w", path, step, err, procspec.ErrContainment)
}

// finish publishes the run's final status: msg, the supervisor's last
// status line for the run, or, when ok is false, the supervisor's loss. On
// an exit report the supervisor, whose tree is gone, goes back to the pool;
// control lines can no longer be sent for this run by then. If the
// supervisor is lost instead (killed from outside, or it broke the
// protocol), it is retired, the group is SIGKILLed as a last resort and
// Wait's error says that containment was lost. Apart from an exit report,
// finish waits for the supervisor to be reaped, so the supervisor's reader
// calls it only with an exit report or after reaping.
func (p *Process) finish(msg statusMsg, ok bool) {
	p.ctrlMu.Lock()
	p.active = false
	p.ctrlMu.Unlock()
	switch {
	case ok && msg.Verb == statusExited:
		p.status = procspec.ExitStatus{Code: msg.Num, Exited: true}
	case ok && msg.Verb == statusSignaled:
		p.status = procspec.ExitStatus{Code: -1, Signal: unix.SignalName(syscall.Signal(msg.Num))}
		if p.status.Signal == "" {
			p.status.Signal = fmt.Sprintf("signal %d", msg.Num)
		}
	default:
		why := fmt.Sprintf("it answered %q", formatStatus(msg))
		p.sc.retire()
		<-p.sc.exited
		if !ok {
			why = fmt.Sprintf("%v; it ended (%s)", p.sc.readErr, p.sc.exitHow)
		}
		_ = unix.Kill(-p.pid, unix.SIGKILL)
		p.status = procspec.ExitStatus{Code: -1, Signal: "unknown"}
		p.err = fmt.Errorf("run pid %d: its supervisor was lost before reporting that the tree was gone (%s); "+
			"the process group was killed but descendants that left it may still run: %w", p.pid, why, procspec.ErrContainment)
		close(p.done)
		return
	}
	supervisors.put(p.sc)
	close(p.done)
}

// Pid returns the target's pid, which is also its process group id.
func (p *Process) Pid() int { return p.pid }

// Terminate asks the supervisor to end the tree: SIGTERM to the group and
// every descendant, the grace period, then SIGKILL and a sweep. It returns
// at once; Wait tells when the tree is gone. Calls after the first, after
// Kill, or after the run ended do nothing.
func (p *Process) Terminate() { p.request(ctrlTerm, &p.termSent) }

// Kill asks the supervisor to SIGKILL the tree at once and sweep. It returns
// at once; Wait tells when the tree is gone. It also cuts short a Terminate
// in its grace period. Calls after the first or after the run ended do
// nothing.
func (p *Process) Kill() { p.request(ctrlKill, &p.killSent) }

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

// Wait returns the leader's exit status once the leader has exited and the
// rest of its tree is gone (Linux: every descendant, escapees included;
// elsewhere: the process group). The supervisor then serves later runs or
// exits. Wait may be called any number of times from any goroutines; all
// get the same result. The error is non-nil only when the supervisor was
// lost before reporting (someone killed it, or it broke the protocol): it
// wraps ErrContainment, and ExitStatus then has Code -1 and Signal
// "unknown".
func (p *Process) Wait() (procspec.ExitStatus, error) {
	<-p.done
	return p.status, p.err
}

// Done returns a channel closed when Wait would return.
func (p *Process) Done() <-chan struct{} { return p.done }
