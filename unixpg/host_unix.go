//go:build unix

package unixpg

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Process is a started run: the target, its tree and its supervisor. Its
// methods are safe for concurrent use.
type Process struct {
	// pid is the target's pid and process group id.
	pid int
	// supervisor is the supervising process.
	supervisor *os.Process
	// ctrlMu guards ctrl, termSent and killSent.
	ctrlMu sync.Mutex
	// ctrl is the write end of the control pipe, the supervisor's lifeline;
	// nil once the run is over.
	ctrl *os.File
	// termSent and killSent make Terminate and Kill idempotent.
	termSent, killSent bool
	// done is closed once status and err are final.
	done chan struct{}
	// status is the leader's exit status, final once done is closed.
	status ExitStatus
	// err is non-nil when the supervisor ended without reporting the end of
	// the tree, final once done is closed.
	err error
}

// executable caches os.Executable, the binary re-executed as supervisor.
var executable = sync.OnceValues(os.Executable)

// devNull is opened once and shared for nil standard files.
var devNull = sync.OnceValues(func() (*os.File, error) { return os.OpenFile(os.DevNull, os.O_RDWR, 0) })

// Start starts spec.Path under a new supervisor and returns once the target
// has started. The target runs in its own process group with exactly
// spec.Env, spec.Dir and the given standard files; nothing else of the host
// is inherited.
//
// Errors, after which nothing started and nothing is left running:
//   - spec is unusable (relative Path, empty Args): a plain error;
//   - the target could not be executed: an error wrapping an *os.PathError
//     with the errno, so errors.Is(err, fs.ErrNotExist) or
//     errors.Is(err, fs.ErrPermission) work;
//   - the supervisor could not be started or set up (re-exec of the host
//     binary, prctl): an error wrapping ErrContainment, whose text tells an
//     agent not to retry or bypass.
func Start(spec Spec) (*Process, error) {
	if !filepath.IsAbs(spec.Path) {
		return nil, fmt.Errorf("start %q: the executable path must be absolute", spec.Path)
	}
	if len(spec.Args) == 0 {
		return nil, fmt.Errorf("start %q: argv is empty; it must hold at least argv[0]", spec.Path)
	}
	first, err := encodeWireSpec(spec)
	if err != nil {
		return nil, fmt.Errorf("start %q: %v", spec.Path, err)
	}
	exe, err := executable()
	if err != nil {
		return nil, containmentErr(spec.Path, "finding agentgate's own executable to run the supervisor", err)
	}
	std := [3]*os.File{spec.Stdin, spec.Stdout, spec.Stderr}
	for i, f := range std {
		if f == nil {
			if std[i], err = devNull(); err != nil {
				return nil, fmt.Errorf("start %q: opening %s: %v", spec.Path, os.DevNull, err)
			}
		}
	}
	ctrlR, ctrlW, err := os.Pipe()
	if err != nil {
		return nil, containmentErr(spec.Path, "creating the supervisor's control pipe", err)
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		ctrlR.Close()
		ctrlW.Close()
		return nil, containmentErr(spec.Path, "creating the supervisor's status pipe", err)
	}
	sup, err := startSupervisor(exe, &os.ProcAttr{
		Env:   []string{superviseEnvKey + "=" + superviseEnvValue},
		Files: []*os.File{std[0], std[1], std[2], ctrlR, statusW},
		Sys:   supervisorSysProcAttr(),
	})
	ctrlR.Close()
	statusW.Close()
	if err != nil {
		ctrlW.Close()
		statusR.Close()
		return nil, containmentErr(spec.Path, "starting the supervisor "+exe, err)
	}
	p := &Process{supervisor: sup, ctrl: ctrlW, done: make(chan struct{})}
	status := bufio.NewReader(statusR)
	_, werr := ctrlW.Write(first)
	line, rerr := status.ReadString('\n')
	var msg statusMsg
	if rerr == nil {
		msg, rerr = parseStatus(line)
	}
	if werr == nil && rerr == nil && msg.Verb == statusStarted {
		p.pid = msg.Num
		go p.watch(status, statusR)
		return p, nil
	}
	// Nothing runs, or the supervisor misbehaves: cut the lifeline, make
	// sure it is gone, and say why.
	ctrlW.Close()
	if rerr != nil || werr != nil || (msg.Verb != statusRefused && msg.Verb != statusExecFail) {
		_ = sup.Kill()
	}
	_, _ = sup.Wait()
	statusR.Close()
	switch {
	case rerr == nil && msg.Verb == statusExecFail:
		return nil, fmt.Errorf("start %q: %w", spec.Path, &os.PathError{Op: "exec", Path: spec.Path, Err: syscall.Errno(msg.Num)})
	case rerr == nil && msg.Verb == statusRefused:
		return nil, containmentErr(spec.Path, "setting up the supervisor", errors.New(msg.Text))
	case rerr == nil:
		return nil, containmentErr(spec.Path, "starting the supervisor", fmt.Errorf("unexpected first status %q", line))
	case werr != nil:
		return nil, containmentErr(spec.Path, "sending the run to the supervisor", werr)
	default:
		return nil, containmentErr(spec.Path, "starting the supervisor", fmt.Errorf("it ended without reporting (%v)", rerr))
	}
}

// containmentErr wraps ErrContainment with what failed for which command.
func containmentErr(path, step string, err error) error {
	return fmt.Errorf("start %q: %s failed: %v: %w", path, step, err, ErrContainment)
}

// watch reads the final status, waits for the supervisor and publishes the
// result. If the supervisor ends without reporting, the group is SIGKILLed
// as a last resort and Wait's error says that containment was lost.
func (p *Process) watch(status *bufio.Reader, statusR *os.File) {
	var final *statusMsg
	for {
		line, err := status.ReadString('\n')
		if err != nil {
			break
		}
		if msg, perr := parseStatus(line); perr == nil && (msg.Verb == statusExited || msg.Verb == statusSignaled) {
			final = &msg
		}
	}
	statusR.Close()
	state, werr := p.supervisor.Wait()
	p.ctrlMu.Lock()
	p.ctrl.Close()
	p.ctrl = nil
	p.ctrlMu.Unlock()
	switch {
	case final != nil && final.Verb == statusExited:
		p.status = ExitStatus{Code: final.Num, Exited: true}
	case final != nil:
		p.status = ExitStatus{Code: -1, Signal: unix.SignalName(syscall.Signal(final.Num))}
		if p.status.Signal == "" {
			p.status.Signal = fmt.Sprintf("signal %d", final.Num)
		}
	default:
		_ = unix.Kill(-p.pid, unix.SIGKILL)
		how := fmt.Sprint(werr)
		if werr == nil {
			how = state.String()
		}
		p.status = ExitStatus{Code: -1, Signal: "unknown"}
		p.err = fmt.Errorf("run pid %d: its supervisor ended (%s) before reporting that the tree was gone; "+
			"the process group was killed but descendants that left it may still run: %w", p.pid, how, ErrContainment)
	}
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
// over. A write error means the supervisor is gone; watch reports that.
func (p *Process) request(line string, sent *bool) {
	p.ctrlMu.Lock()
	defer p.ctrlMu.Unlock()
	if p.ctrl == nil || *sent || p.killSent {
		return
	}
	*sent = true
	_, _ = io.WriteString(p.ctrl, line+"\n")
}

// Wait returns the leader's exit status once the leader has exited, the
// rest of its tree is gone (Linux: every descendant; elsewhere: the process
// group) and the supervisor has exited. It may be called any number of
// times from any goroutines; all get the same result. The error is non-nil
// only when the supervisor ended without reporting (someone killed it):
// it wraps ErrContainment, and ExitStatus then has Code -1 and Signal
// "unknown".
func (p *Process) Wait() (ExitStatus, error) {
	<-p.done
	return p.status, p.err
}

// Done returns a channel closed when Wait would return.
func (p *Process) Done() <-chan struct{} { return p.done }
