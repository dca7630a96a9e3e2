//go:build unix

package unixpg

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentgate/agentgate/exec/procspec"
)

// superviseArg is the hidden first argument that, together with
// superviseEnv, makes a process a supervisor.
const superviseArg = "__agentgate_supervise"

// superviseEnvKey and superviseEnvValue form the environment marker, which
// is the supervisor's whole environment. The target never sees it: it gets
// Spec.Env, which travels over the control socket.
const (
	superviseEnvKey   = "AGENTGATE_SUPERVISE"
	superviseEnvValue = "1"
)

// controlFD is the supervisor's end of the control socket. Its 0, 1 and 2
// are /dev/null: a run's standard files arrive with the run and are held
// only by the target.
const controlFD = 3

// sweepPoll bounds how long the supervisor waits between passes while it is
// ending a tree; SIGCHLD usually wakes it sooner.
const sweepPoll = 5 * time.Millisecond

// entryCalled is set by MaybeSupervise. Start refuses to run anything in a
// process that never called it: that process's binary, re-executed as a
// supervisor, would not become one.
var entryCalled atomic.Bool

// MaybeSupervise turns the current process into a supervisor when it was
// started as one by Start (first argument "__agentgate_supervise" and the
// environment marker): it serves runs until the host closes the control
// socket or dies, and then exits the process without returning. Otherwise
// it returns at once; the check is a comparison of one argument.
//
// Every binary that hosts runs (agentgate's main, the TestMain of every test
// package that starts commands) must call it first thing in main, because
// Start re-executes the running binary as each run's supervisor. It is an
// explicit call, not an init function, so that importing this package
// takes no process over (the lean hook executable links none of it). Start
// fails with ErrContainment in a process that never called it.
//
// The warden (Linux, warden_linux.go) is entered the same way, with its own
// hidden argument.
func MaybeSupervise() {
	entryCalled.Store(true)
	if len(os.Args) < 2 || os.Getenv(superviseEnvKey) != superviseEnvValue {
		return
	}
	switch os.Args[1] {
	case superviseArg:
		os.Exit(supervise())
	case wardenArg:
		os.Exit(ward())
	}
}

// supervisor is the state of one supervising process; the fields about the
// target are reset for every run.
type supervisor struct {
	// target is the current leader's pid, which is also the group's pgid.
	target int
	// targetWS is the leader's wait status, valid once targetDone is true.
	targetWS syscall.WaitStatus
	// targetDone is true once the leader was reaped.
	targetDone bool
	// grace is the current run's SIGTERM → SIGKILL delay.
	grace time.Duration
	// leaderExit receives once the leader has exited (Linux pidfd); nil
	// where SIGCHLD is the only notice.
	leaderExit <-chan struct{}
	// timeout is the current run's deadline after its start; zero: none.
	timeout time.Duration
	// deadlineHit is set when the deadline, and nothing earlier, started
	// the end of the tree.
	deadlineHit bool
	// cgroup is the run's cgroup directory ("" for none), removed here
	// when the lifeline is lost (the host cannot do it then).
	cgroup string
}

// controlEvent is what readControl forwards to the main loop: a request, a
// run it started, or the reason it stopped reading (the last event).
type controlEvent struct {
	// verb is ctrlTerm, ctrlKill or ctrlPing, or ctrlRun for a run whose
	// target readControl started and reported.
	verb string
	// pid is the started target's pid (ctrlRun only).
	pid int
	// grace is the started run's SIGTERM → SIGKILL delay (ctrlRun only).
	grace time.Duration
	// timeout is the started run's deadline (ctrlRun only; zero: none).
	timeout time.Duration
	// cgroup is the started run's cgroup directory (ctrlRun only).
	cgroup string
	// leaderExit is leaderExit's channel for the started target (ctrlRun
	// only; nil outside Linux).
	leaderExit <-chan struct{}
	// err is io.EOF at end of file, errSetupRefused after a "refused"
	// report, or the protocol or read error.
	err error
}

// errSetupRefused ends the supervisor after it reported that containment
// could not be set up.
var errSetupRefused = errors.New("containment could not be set up")

// supervise serves runs and returns the supervisor's exit code: 0 when the
// host ended the supervisor (end of file, SIGHUP, SIGTERM or SIGINT while
// idle), containment could not be set up (reported to the host) or its
// check of itself after a run found something off (reported too), 2 after
// a protocol error.
//
// Before anything else it hardens itself (hardenSupervisor): on Linux it
// becomes a child subreaper and non-dumpable (PR_SET_DUMPABLE 0), so that a
// run of the same user can no longer ptrace it or read its memory.
//
// Two goroutines share the work. readControl owns a locked OS thread: it
// receives control lines and starts each run's target itself, right after
// receiving it (no hand-off to another thread on the hot path; the
// target's PR_SET_PDEATHSIG is tied to that thread, which lives as long as
// the process). The main loop supervises the started tree and reports its
// end; it is not locked to a thread, so the leader's exit (Linux: its
// pidfd in Go's poller; elsewhere SIGCHLD) reaches it without a switch to a
// dedicated thread.
func supervise() int {
	syscall.CloseOnExec(controlFD)
	closeInheritedFDs()

	// Signals first, so that no SIGCHLD or request is lost.
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGCHLD, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	var busy atomic.Bool
	events := make(chan controlEvent, 4)
	go readControl(controlFD, hardenSupervisor(), &busy, events)

	s := &supervisor{}
	for {
		select {
		case ev := <-events:
			switch {
			case errors.Is(ev.err, io.EOF) || errors.Is(ev.err, errSetupRefused):
				return 0 // idle, and the host is gone or retired us
			case ev.err != nil:
				return 2
			case ev.verb == ctrlPing:
				report(statusMsg{Verb: statusPong})
				continue
			case ev.verb != ctrlRun:
				continue // term or kill for a run that already ended
			}
			*s = supervisor{target: ev.pid, grace: ev.grace, timeout: ev.timeout, leaderExit: ev.leaderExit, cgroup: ev.cgroup}
			if lost := s.run(sigs, events); lost {
				if s.cgroup != "" {
					_ = os.Remove(s.cgroup) // empty: the tree is gone
				}
				return 0
			}
			end := endReport{Exited: true, Code: s.targetWS.ExitStatus(), Deadline: s.deadlineHit}
			if s.targetWS.Signaled() {
				end = endReport{Signal: int(s.targetWS.Signal()), Deadline: s.deadlineHit}
			}
			// A run could have tampered with its supervisor; one that
			// finds anything off says so and exits rather than serve
			// another run.
			end.Off = checkSelf()
			// Idle again before the report: the host sends the next run
			// only after reading it.
			busy.Store(false)
			report(statusMsg{Verb: statusEnd, End: end})
			if end.Off != "" {
				return 0
			}
		case sig := <-sigs:
			if sig != syscall.SIGCHLD {
				return 0 // SIGHUP (the host's parent-death signal), SIGTERM, SIGINT
			}
		}
	}
}

// readControl runs receiveControl on a locked OS thread, forwards the
// reason it stopped as the last event, and then keeps the thread: the
// targets' PR_SET_PDEATHSIG is tied to it, and the main loop decides how
// the tree ends.
func readControl(fd int, setupErr error, busy *atomic.Bool, events chan<- controlEvent) {
	runtime.LockOSThread() // never unlocked
	events <- controlEvent{err: receiveControl(fd, setupErr, busy, events)}
	select {}
}

// receiveControl receives from the control socket fd. A run line starts the
// target at once (startTarget), reports "started" or "execfail" and
// forwards the started run; term, kill and ping are forwarded. It returns
// io.EOF at end of file, errSetupRefused after answering a run "refused"
// (when setupErr is set), or the read or protocol error, including a run
// line while busy (set from a start until the main loop has ended the run).
// Received descriptors are close-on-exec (at once on Linux, right after
// receipt elsewhere, before anything can fork) and all closed but those a
// started target holds.
func receiveControl(fd int, setupErr error, busy *atomic.Bool, events chan<- controlEvent) error {
	var split controlSplitter
	defer func() { closeFDs(split.takeFDs()) }()
	buf := make([]byte, 64<<10)
	oob := make([]byte, unix.CmsgSpace(16*4))
	for {
		n, oobn, flags, _, err := unix.Recvmsg(fd, buf, oob, recvmsgFlags)
		if err == unix.EINTR {
			continue
		}
		var fds []int
		if err == nil && oobn > 0 {
			fds, err = parseRights(oob[:oobn])
		}
		if err == nil && flags&unix.MSG_CTRUNC != 0 {
			err = errors.New("descriptors from the host were truncated")
		}
		switch {
		case err != nil:
			closeFDs(fds)
			return err
		case n == 0 && len(fds) == 0:
			return io.EOF
		}
		split.add(buf[:n], fds)
		for {
			msg, ok, err := split.next()
			switch {
			case err != nil:
				return err
			case !ok:
			case msg.Verb != ctrlRun:
				events <- controlEvent{verb: msg.Verb}
				continue
			case busy.Load():
				closeFDs(msg.FDs)
				return errors.New("the host sent a run while one is in progress")
			case setupErr != nil:
				closeFDs(msg.FDs)
				report(statusMsg{Verb: statusRefused, Text: setupErr.Error()})
				return errSetupRefused
			default:
				if pid, pidfd, ok := startTarget(msg); ok {
					busy.Store(true)
					report(statusMsg{Verb: statusStarted, Num: pid})
					events <- controlEvent{verb: ctrlRun, pid: pid, grace: time.Duration(msg.Spec.GraceNS),
						timeout: time.Duration(msg.Spec.TimeoutNS), leaderExit: leaderExit(pidfd), cgroup: msg.Spec.Cgroup}
				}
				continue
			}
			break // no complete line left: receive more
		}
	}
}

// startTarget starts a run's target with the received stdin, stdout and
// stderr as its 0, 1 and 2, in its own process group, and closes every
// received file. The working directory is the received handle, when there
// is one (Linux: entered through /proc/self/fd, so the very directory the
// host checked), else Spec.Dir. Right before the fork it checks the
// program against the identity the host bound (wireSpec.ProgramID) and
// reports "changed" instead of starting anything when it differs. It
// returns the target's pid and (Linux, where the kernel has them) a pidfd
// of it, else -1. If the target cannot be executed it reports "execfail"
// and returns false. A run with a sandbox starts through the confinement
// shim (startThroughShim), which enters the directory itself.
func startTarget(req controlMsg) (pid, pidfd int, ok bool) {
	pidfd = -1
	// Only the target holds the run's files from here on, so the host's
	// readers see end of file exactly when the tree is gone.
	defer closeFDs(req.FDs)
	std := make([]uintptr, runFDs)
	for i := range std {
		std[i] = uintptr(req.FDs[i])
	}
	dir, cgroupFD := req.Spec.Dir, -1
	for i, name := range req.Spec.Extra {
		switch name {
		case extraDir:
			dir = dirThroughFD(req.FDs[runFDs+i], dir)
		case extraCgroup:
			cgroupFD = req.FDs[runFDs+i]
		}
	}
	if want := req.Spec.ProgramID; want != nil {
		got, err := procspec.StatFileID(req.Spec.Path)
		if err != nil || got != *want {
			why := "it is gone: " + fmt.Sprint(err)
			if err == nil {
				why = want.Describe(got)
			}
			report(statusMsg{Verb: statusChanged, Text: fmt.Sprintf("the program %s changed since it was checked (%s)", req.Spec.Path, why)})
			return 0, -1, false
		}
	}
	if req.Spec.Sandbox != nil {
		return startThroughShim(req, std, &pidfd, cgroupFD)
	}
	pid, err := syscall.ForkExec(req.Spec.Path, req.Spec.Args, &syscall.ProcAttr{
		Dir:   dir,
		Env:   req.Spec.Env,
		Files: std,
		Sys:   targetSysProcAttr(&pidfd, cgroupFD),
	})
	if err != nil {
		var errno syscall.Errno
		if !errors.As(err, &errno) {
			errno = syscall.EINVAL
		}
		report(statusMsg{Verb: statusExecFail, Num: int(errno), Text: err.Error()})
		return 0, -1, false
	}
	return pid, pidfd, true
}

// parseRights returns the descriptors in a received control message buffer,
// each made close-on-exec.
func parseRights(oob []byte) ([]int, error) {
	cmsgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, fmt.Errorf("unreadable ancillary data from the host: %v", err)
	}
	var fds []int
	for i := range cmsgs {
		got, err := unix.ParseUnixRights(&cmsgs[i])
		if err != nil {
			closeFDs(fds)
			return nil, fmt.Errorf("unexpected ancillary data from the host: %v", err)
		}
		for _, fd := range got {
			unix.CloseOnExec(fd)
		}
		fds = append(fds, got...)
	}
	return fds, nil
}

// closeInheritedFDs closes every descriptor above controlFD that is not
// close-on-exec. os.StartProcess passes the files it is given and also
// every descriptor the host itself inherited without close-on-exec (from a
// terminal, a launcher, a test harness); those would otherwise stay open in
// the supervisor for its whole life and reach every target. The Go runtime
// opens its own descriptors close-on-exec, so they are kept.
func closeInheritedFDs() {
	entries, err := os.ReadDir("/dev/fd")
	if err != nil {
		return // no /dev/fd: nothing to enumerate with; Linux and macOS have it
	}
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= controlFD {
			continue
		}
		if flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == nil && flags&unix.FD_CLOEXEC == 0 {
			_ = unix.Close(fd)
		}
	}
}

// closeFDs closes every descriptor in fds.
func closeFDs(fds []int) {
	for _, fd := range fds {
		_ = unix.Close(fd)
	}
}

// reportMu keeps status lines whole: the control thread reports starts, the
// main loop ends and pongs.
var reportMu sync.Mutex

// report writes one status line to the host. A failure means the host is
// gone; the lifeline (end of file) handles that, so the error is dropped.
func report(msg statusMsg) {
	reportMu.Lock()
	defer reportMu.Unlock()
	b := []byte(formatStatus(msg))
	for len(b) > 0 {
		n, err := unix.Write(controlFD, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return
		}
		b = b[n:]
	}
}

// run supervises the tree until nothing of it remains. Phases: running
// (leader alive, nothing asked), ending (SIGTERM sent, grace running) and
// killing (SIGKILL sweep until the tree is gone). The run's deadline, when
// it has one, starts the ending phase like a term request does. It returns
// true when it ended the tree because the lifeline was lost: end of file or
// a protocol error on the control socket, or SIGHUP (the parent-death
// signal).
func (s *supervisor) run(sigs <-chan os.Signal, events <-chan controlEvent) (lost bool) {
	var deadline <-chan time.Time
	if s.timeout > 0 {
		t := time.NewTimer(s.timeout)
		defer t.Stop()
		deadline = t.C
	}
	var graceOver <-chan time.Time
	var poll <-chan time.Time
	var ticker *time.Ticker
	defer func() {
		if ticker != nil {
			ticker.Stop()
		}
	}()
	startEnding := func() {
		if graceOver != nil {
			return
		}
		s.signalTree(unix.SIGTERM)
		s.signalTree(unix.SIGCONT) // a stopped process only acts on SIGTERM once continued
		graceOver = time.After(s.grace)
		// Group members outside Linux are not the supervisor's children,
		// so no SIGCHLD announces their end: poll.
		ticker = time.NewTicker(sweepPoll)
		poll = ticker.C
	}
	for {
		hasChildren := s.reap()
		if s.targetDone {
			if !hasChildren && groupGone(s.target) {
				return false
			}
			startEnding()
		}
		select {
		case sig := <-sigs:
			switch sig {
			case syscall.SIGTERM, syscall.SIGINT:
				startEnding()
			case syscall.SIGHUP: // PR_SET_PDEATHSIG from the host: it is gone
				s.killTree(sigs)
				return true
			}
		case ev := <-events:
			switch {
			case ev.err != nil:
				// The host is gone, retired us, or broke the protocol:
				// nothing may outlive that.
				s.killTree(sigs)
				return true
			case ev.verb == ctrlTerm:
				startEnding()
			case ev.verb == ctrlKill:
				s.killTree(sigs)
				return false
			case ev.verb == ctrlPing:
				report(statusMsg{Verb: statusPong})
			}
		case <-deadline:
			deadline = nil
			if graceOver == nil && !s.targetDone {
				s.deadlineHit = true
			}
			startEnding()
		case <-graceOver:
			s.killTree(sigs)
			return false
		case <-s.leaderExit: // the loop's reap collects it
			s.leaderExit = nil
		case <-poll:
		}
	}
}

// killTree SIGKILLs the group and every descendant, reaps, and repeats until
// the supervisor has no child left and the group is empty. Processes forked
// during a pass are orphaned by it, re-parented here (Linux) and caught by
// the next pass.
func (s *supervisor) killTree(sigs <-chan os.Signal) {
	wait := 100 * time.Microsecond
	for {
		s.signalTree(unix.SIGKILL)
		if !s.reap() && groupGone(s.target) {
			return
		}
		select {
		case <-sigs:
		case <-time.After(wait):
		}
		wait = min(2*wait, sweepPoll)
	}
}

// signalTree sends sig to the target's process group and to every
// descendant of the supervisor that can be found (Linux; none elsewhere).
// Errors are ignored: a process that is already gone needs no signal.
func (s *supervisor) signalTree(sig unix.Signal) {
	_ = unix.Kill(-s.target, sig)
	for _, pid := range descendants() {
		_ = unix.Kill(pid, sig)
	}
}

// reap collects every exited child without blocking, recording the leader's
// status when its pid comes back, and reports whether any child (running
// or not yet reaped) remains.
func (s *supervisor) reap() bool {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.ECHILD:
			return false
		case err != nil:
			return true // unexpected; keep going and try again
		case pid == 0:
			return true
		case pid == s.target:
			s.targetWS, s.targetDone = ws, true
		}
	}
}

// groupGone reports whether no process is left in the process group pgid.
func groupGone(pgid int) bool {
	return unix.Kill(-pgid, 0) == unix.ESRCH
}
