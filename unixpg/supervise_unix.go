//go:build unix

package unixpg

import (
	"bufio"
	"errors"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// superviseArg is the hidden first argument that, together with
// superviseEnv, makes a process a supervisor.
const superviseArg = "__agentgate_supervise"

// superviseEnvKey and superviseEnvValue form the environment marker, which
// is the supervisor's whole environment. The target never sees it: it gets
// Spec.Env, which travels over the control pipe.
const (
	superviseEnvKey   = "AGENTGATE_SUPERVISE"
	superviseEnvValue = "1"
)

// Descriptors the host gives the supervisor besides 0, 1 and 2 (the
// target's standard files).
const (
	controlFD = 3
	statusFD  = 4
)

// sweepPoll bounds how long the supervisor waits between passes while it is
// ending a tree; SIGCHLD usually wakes it sooner.
const sweepPoll = 5 * time.Millisecond

func init() { MaybeSupervise() }

// MaybeSupervise turns the current process into a run's supervisor when it
// was started as one by Start (first argument "__agentgate_supervise" and
// the environment marker), and then exits the process without returning.
// Otherwise it returns at once; the check is a comparison of one argument.
//
// The package's init function calls it, so that a supervisor starts before
// the init functions of packages initialised later; main and the TestMain of
// every test package that starts commands should still call it first thing,
// which makes the requirement visible and costs nothing.
func MaybeSupervise() {
	if len(os.Args) < 2 || os.Args[1] != superviseArg || os.Getenv(superviseEnvKey) != superviseEnvValue {
		return
	}
	os.Exit(supervise())
}

// supervisor is the state of one supervising process.
type supervisor struct {
	// status is the pipe to the host (fd 4).
	status *os.File
	// target is the leader's pid, which is also the group's pgid.
	target int
	// targetWS is the leader's wait status, valid once targetDone is true.
	targetWS syscall.WaitStatus
	// targetDone is true once the leader was reaped.
	targetDone bool
	// grace is the SIGTERM → SIGKILL delay.
	grace time.Duration
}

// supervise runs the supervisor and returns its exit code: 0 after a normal
// run or a reported start failure, 2 when the host's message was unusable.
func supervise() int {
	// The target gets PR_SET_PDEATHSIG from the thread that forks it; this
	// goroutine keeps its thread until the process exits.
	runtime.LockOSThread()
	syscall.CloseOnExec(controlFD)
	syscall.CloseOnExec(statusFD)
	s := &supervisor{status: os.NewFile(statusFD, "agentgate-status")}
	ctrl := bufio.NewReader(os.NewFile(controlFD, "agentgate-control"))

	// Signals first, so that no SIGCHLD or request is lost.
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGCHLD, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)

	line, err := ctrl.ReadBytes('\n')
	if err != nil {
		return 2 // host gone before describing the run: nothing started
	}
	spec, err := decodeWireSpec(line)
	if err != nil {
		s.report(statusMsg{Verb: statusRefused, Text: err.Error()})
		return 2
	}
	s.grace = time.Duration(spec.GraceNS)
	if err := enableSubreaper(); err != nil {
		s.report(statusMsg{Verb: statusRefused, Text: err.Error()})
		return 0
	}
	pid, err := syscall.ForkExec(spec.Path, spec.Args, &syscall.ProcAttr{
		Dir:   spec.Dir,
		Env:   spec.Env,
		Files: []uintptr{0, 1, 2},
		Sys:   targetSysProcAttr(),
	})
	if err != nil {
		var errno syscall.Errno
		if !errors.As(err, &errno) {
			errno = syscall.EINVAL
		}
		s.report(statusMsg{Verb: statusExecFail, Num: int(errno), Text: err.Error()})
		return 0
	}
	s.target = pid
	s.report(statusMsg{Verb: statusStarted, Num: pid})

	requests := make(chan string, 4)
	go readControl(ctrl, requests)
	s.run(sigs, requests)
	if s.targetWS.Signaled() {
		s.report(statusMsg{Verb: statusSignaled, Num: int(s.targetWS.Signal())})
	} else {
		s.report(statusMsg{Verb: statusExited, Num: s.targetWS.ExitStatus()})
	}
	return 0
}

// readControl forwards control requests; end of file or a read error on the
// control pipe (the lifeline) is forwarded as ctrlKill and ends the loop.
func readControl(ctrl *bufio.Reader, requests chan<- string) {
	for {
		line, err := ctrl.ReadString('\n')
		if err != nil {
			requests <- ctrlKill
			return
		}
		requests <- strings.TrimSpace(line)
	}
}

// report writes one status line to the host. A failure means the host is
// gone; the lifeline handles that, so the error is dropped.
func (s *supervisor) report(msg statusMsg) {
	_, _ = s.status.WriteString(formatStatus(msg))
}

// run supervises the tree until nothing of it remains. Phases: running
// (leader alive, nothing asked), ending (SIGTERM sent, grace running) and
// killing (SIGKILL sweep until the tree is gone).
func (s *supervisor) run(sigs <-chan os.Signal, requests <-chan string) {
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
				return
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
				return
			}
		case req := <-requests:
			switch req {
			case ctrlTerm:
				startEnding()
			case ctrlKill:
				s.killTree(sigs)
				return
			}
		case <-graceOver:
			s.killTree(sigs)
			return
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
