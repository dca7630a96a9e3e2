//go:build unix

package unixpg

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Supervisors are reused: starting one costs a whole Go runtime start-up of
// the host binary (milliseconds for a binary that links a GUI toolkit), so
// after a run whose tree is completely gone the supervisor goes back to a
// small pool of idle ones. An idle supervisor holds nothing of any run (its
// 0, 1 and 2 are /dev/null, its only other descriptor is the control
// socket) and has no child.

// poolLimits bounds how many supervisors wait idle and for how long.
type poolLimits struct {
	// maxIdle is the most idle supervisors kept; one returning to a full
	// pool is retired.
	maxIdle int
	// idleTimeout is how long a supervisor stays idle before it is
	// retired, so that nothing lingers when no command runs.
	idleTimeout time.Duration
	// retireKillAfter is how long a retired supervisor has to exit by
	// itself (ending a tree it may still hold) before it is SIGKILLed.
	retireKillAfter time.Duration
	// answerBound is how long a busy supervisor may leave pings
	// unanswered before the host takes its run over (watch_unix.go).
	// Generous: a loaded machine must not make a healthy supervisor look
	// dead.
	answerBound time.Duration
}

var (
	// limitsMu guards limits, which tests change.
	limitsMu sync.Mutex
	// limits are the pool's limits in force.
	limits = poolLimits{maxIdle: 4, idleTimeout: 2 * time.Minute, retireKillAfter: 5 * time.Second, answerBound: 10 * time.Second}
)

// currentLimits returns the pool's limits in force.
func currentLimits() poolLimits {
	limitsMu.Lock()
	defer limitsMu.Unlock()
	return limits
}

// supervisorConn is the host's side of one supervisor process.
type supervisorConn struct {
	// proc is the supervisor process; the reader goroutine waits for it.
	proc *os.Process
	// status is its /proc/PID/status, opened at its start and closed once
	// it was reaped, for the host's looks at it (inspectSupervisor): a
	// pread instead of an open by pid, which also cannot reach another
	// process that reused the pid. nil where there is no /proc.
	status *os.File
	// ctrl is the host's end of the control socket (close-on-exec,
	// non-blocking, so Close interrupts the reader).
	ctrl *os.File
	// msgs receives each status line the supervisor sends; it is closed
	// when the reader stops (end of file, read or protocol error).
	msgs chan statusMsg
	// broken is set, before msgs is closed, once the reader stopped.
	broken atomic.Bool
	// readErr says why the reader stopped; final once msgs is closed.
	readErr error
	// exited is closed once the supervisor process was reaped.
	exited chan struct{}
	// exitHow says how the supervisor ended; final once exited is closed.
	exitHow string
	// retireOnce makes retire idempotent.
	retireOnce sync.Once
	// idleTimer retires the supervisor when it stays idle too long;
	// guarded by supervisors.mu.
	idleTimer *time.Timer
	// idleGen counts the times the supervisor entered the pool, so that a
	// timer from an earlier idle period cannot retire it; guarded by
	// supervisors.mu.
	idleGen uint64
	// awaiting is the started run whose final status line the reader
	// hands over directly (no goroutine per run waits for it); nil when
	// none. Guarded by supervisors.mu.
	awaiting *Process
	// lastAnswer is when the supervisor last sent a line (UnixNano); the
	// watchdog compares it with answerBound.
	lastAnswer atomic.Int64
}

// newSupervisorConn returns the host's side of the supervisor proc, whose
// control socket's host end is ctrl, and starts its reader and the
// goroutine that waits for its exit.
func newSupervisorConn(proc *os.Process, ctrl *os.File) *supervisorConn {
	sc := &supervisorConn{proc: proc, status: openProcStatus(proc.Pid), ctrl: ctrl, msgs: make(chan statusMsg, 4), exited: make(chan struct{})}
	sc.lastAnswer.Store(time.Now().UnixNano())
	go sc.read()
	go sc.waitExit()
	return sc
}

// spawnSupervisor starts a new supervisor: the host binary re-executed with
// the hidden argument and the environment marker as its whole environment,
// /dev/null as 0, 1 and 2, and its end of a fresh control socket as fd 3.
// No other descriptor of the host reaches it.
func spawnSupervisor() (*supervisorConn, error) {
	exe, err := executable()
	if err != nil {
		return nil, fmt.Errorf("finding agentgate's own executable to run the supervisor: %v", err)
	}
	null, err := devNull()
	if err != nil {
		return nil, fmt.Errorf("opening %s for the supervisor: %v", os.DevNull, err)
	}
	hostEnd, supEnd, err := controlSocketpair()
	if err != nil {
		return nil, fmt.Errorf("creating the supervisor's control socket: %v", err)
	}
	proc, err := startHelperProcess(exe, []string{superviseArg}, &os.ProcAttr{
		Env:   []string{superviseEnvKey + "=" + superviseEnvValue},
		Files: []*os.File{null, null, null, supEnd},
		Sys:   supervisorSysProcAttr(),
	})
	supEnd.Close()
	if err != nil {
		hostEnd.Close()
		return nil, fmt.Errorf("starting the supervisor %s: %v", exe, err)
	}
	return newSupervisorConn(proc, hostEnd), nil
}

// controlSocketpair returns both ends of a new Unix stream socketpair, both
// close-on-exec (created under syscall.ForkLock so that no concurrent fork
// of the host inherits them); the host's end is non-blocking.
func controlSocketpair() (hostEnd, supEnd *os.File, err error) {
	syscall.ForkLock.RLock()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err == nil {
		unix.CloseOnExec(fds[0])
		unix.CloseOnExec(fds[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, nil, os.NewSyscallError("socketpair", err)
	}
	if err := unix.SetNonblock(fds[0], true); err != nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
		return nil, nil, os.NewSyscallError("setnonblock", err)
	}
	return os.NewFile(uintptr(fds[0]), "agentgate-supervisor-control"),
		os.NewFile(uintptr(fds[1]), "agentgate-supervisor-control-peer"), nil
}

// read forwards the supervisor's status lines to msgs until end of file, a
// read error, an unparsable line or more unread lines than the protocol
// allows; then it marks the supervisor broken, retires it, waits until it
// was reaped and finishes the run it was serving as lost.
func (sc *supervisorConn) read() {
	r := bufio.NewReader(sc.ctrl)
	for sc.readErr == nil {
		line, err := r.ReadString('\n')
		if err != nil {
			sc.readErr = fmt.Errorf("reading its control socket: %w", err)
			break
		}
		sc.lastAnswer.Store(time.Now().UnixNano())
		msg, err := parseStatus(line)
		if err != nil {
			sc.readErr = err
			break
		}
		sc.readErr = supervisors.deliver(sc, msg, line)
	}
	sc.broken.Store(true)
	p := supervisors.stopDelivering(sc)
	sc.retire()
	<-sc.exited
	if p != nil {
		p.finish(statusMsg{}, false)
	}
}

// readerStopBound is how long after the supervisor's death waitExit lets
// the kernel's end of file (or ECONNRESET) stop the reader before it closes
// the control socket itself.
const readerStopBound = time.Second

// waitExit reaps the supervisor (os.Process.Wait: a pidfd where the kernel
// has them) and records how it ended. Normally the kernel's end of file
// (or ECONNRESET) then stops the reader; if another process holds a copy
// of the supervisor's end of the socket (taken by a tracer), nothing
// would, so after readerStopBound waitExit closes the host's end itself.
func (sc *supervisorConn) waitExit() {
	state, err := sc.proc.Wait()
	if err != nil {
		sc.exitHow = err.Error()
	} else {
		sc.exitHow = state.String()
	}
	if sc.status != nil {
		sc.status.Close()
	}
	close(sc.exited)
	time.AfterFunc(readerStopBound, func() {
		if !sc.broken.Load() {
			_ = sc.ctrl.Close()
		}
	})
}

// retire ends the supervisor: it closes the control socket, which is the
// supervisor's lifeline (an idle one exits, a running one SIGKILLs and
// sweeps its tree, then exits), and SIGKILLs it if it has not exited after
// poolLimits.retireKillAfter. It returns at once; exited tells when it is gone.
func (sc *supervisorConn) retire() {
	sc.retireOnce.Do(func() {
		sc.ctrl.Close()
		time.AfterFunc(currentLimits().retireKillAfter, func() {
			select {
			case <-sc.exited:
			default:
				_ = sc.proc.Kill() // os.Process never signals after Wait returned
			}
		})
	})
}

// healthy reports whether the supervisor can take a run: its reader runs
// and no unexpected status line waits. That the last run's tree is gone is
// the supervisor's own check: it reports a run's end only once wait4(-1)
// finds no child of any of its threads (Linux) and the group is empty. A
// host-side re-check through /proc would cost about 80 µs on every run.
func (sc *supervisorConn) healthy() bool {
	return !sc.broken.Load() && len(sc.msgs) == 0
}

// sendRun sends a run line with the run's files attached as SCM_RIGHTS:
// stdin, stdout, stderr and its extra descriptors. Fd puts each file in
// blocking mode, as os/exec does for the files it passes, because the
// target shares the open file description.
func (sc *supervisorConn) sendRun(line []byte, files []*os.File) error {
	fds := make([]int, len(files))
	for i, f := range files {
		fd := f.Fd()
		if fd == ^uintptr(0) {
			return fmt.Errorf("file %d (%s) of the run is closed", i, f.Name())
		}
		fds[i] = int(fd)
	}
	rights := unix.UnixRights(fds...)
	rc, err := sc.ctrl.SyscallConn()
	if err != nil {
		return err
	}
	var n int
	var serr error
	err = rc.Write(func(fd uintptr) bool {
		n, serr = unix.SendmsgN(int(fd), line, rights, nil, 0)
		return serr != unix.EAGAIN
	})
	runtime.KeepAlive(files)
	if err == nil {
		err = serr
	}
	if err == nil && n < len(line) {
		_, err = sc.ctrl.Write(line[n:]) // the descriptors went with the first part
	}
	return err
}

// writeControl sends one term or kill line. A write error means the
// supervisor is gone, which its reader reports; it is dropped here.
func (sc *supervisorConn) writeControl(verb string) {
	_, _ = sc.ctrl.Write([]byte(verb + "\n"))
}

// pool holds idle supervisors. Its zero value is an empty pool.
type pool struct {
	// mu guards every field and the supervisors' idle fields.
	mu sync.Mutex
	// idle is a stack: the most recently used supervisor is last and is
	// taken first, so that rarely used ones reach their idle timeout.
	idle []*supervisorConn
	// spareComing is true while a spare supervisor is being started.
	spareComing bool
	// spawned is true once any supervisor was started for a run.
	spawned bool
}

// supervisors is the host's pool of idle supervisors.
var supervisors pool

// get returns an idle supervisor (reused true) or, when none is idle, a new
// one. When that is not the host's first supervisor (runs overlap, or the
// idle ones timed out) it also starts a spare in the background, unless one
// is already coming, so that the next overlapping Start finds it ready; a
// host that runs one command at a time never needs more than one.
func (pl *pool) get() (sc *supervisorConn, reused bool, err error) {
	pl.mu.Lock()
	for len(pl.idle) > 0 {
		sc = pl.idle[len(pl.idle)-1]
		pl.idle = pl.idle[:len(pl.idle)-1]
		sc.idleTimer.Stop()
		if sc.healthy() {
			pl.mu.Unlock()
			return sc, true, nil
		}
		sc.retire() // its reader is already reaping it
	}
	spare := pl.spawned && !pl.spareComing
	pl.spareComing = pl.spareComing || spare
	pl.spawned = true
	pl.mu.Unlock()
	if spare {
		go pl.addSpare()
	}
	sc, err = spawnSupervisor()
	return sc, false, err
}

// addSpare starts a supervisor and puts it at the bottom of the pool (it is
// taken once the warmer ones are in use), or retires it if the pool is
// full. A failure is not reported: the next Start meets it again.
func (pl *pool) addSpare() {
	sc, err := spawnSupervisor()
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pl.spareComing = false
	if err == nil {
		pl.putLocked(sc, true)
	}
}

// put returns a supervisor whose run is over to the pool. It is retired
// instead when it is not healthy or the pool is full (poolLimits.maxIdle).
func (pl *pool) put(sc *supervisorConn) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pl.putLocked(sc, false)
}

// putLocked is put with pl.mu held; bottom puts sc where it is taken last.
func (pl *pool) putLocked(sc *supervisorConn, bottom bool) {
	lim := currentLimits()
	if !sc.healthy() || len(pl.idle) >= lim.maxIdle {
		sc.retire()
		return
	}
	if bottom {
		pl.idle = slices.Insert(pl.idle, 0, sc)
	} else {
		pl.idle = append(pl.idle, sc)
	}
	sc.idleGen++
	gen := sc.idleGen
	sc.idleTimer = time.AfterFunc(lim.idleTimeout, func() { pl.expire(sc, gen) })
}

// expire retires sc if it is still idle since the period numbered gen.
func (pl *pool) expire(sc *supervisorConn, gen uint64) {
	pl.mu.Lock()
	still := sc.idleGen == gen && pl.removeLocked(sc)
	pl.mu.Unlock()
	if still {
		sc.retire()
	}
}

// remove takes sc out of the pool if it is there.
func (pl *pool) remove(sc *supervisorConn) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pl.removeLocked(sc)
}

// deliver passes a status line from sc's reader on: the final line of the
// run awaiting it straight to that run (Process.finish, on the reader's
// goroutine: one hand-off less between the supervisor's report and Wait),
// anything else to msgs. It is an error, returned, when sc is idle in the
// pool (an idle supervisor has nothing to say), when an awaiting run gets
// anything but its final line, or when more lines wait than the protocol
// allows. It holds pl.mu so that a line arriving as sc is put back is
// either seen by put (which then refuses sc) or found idle here, never
// neither, and so that await sees each line either queued or not yet read.
func (pl *pool) deliver(sc *supervisorConn, msg statusMsg, line string) error {
	if msg.Verb == statusPong {
		return nil // lastAnswer has it; a late one may come after the run
	}
	pl.mu.Lock()
	if slices.Contains(pl.idle, sc) {
		pl.mu.Unlock()
		return fmt.Errorf("it sent %q while idle", line)
	}
	if p := sc.awaiting; p != nil {
		if msg.Verb != statusEnd {
			pl.mu.Unlock()
			return fmt.Errorf("it sent %q while running a command", line)
		}
		sc.awaiting = nil
		pl.mu.Unlock()
		p.finish(msg, true)
		return nil
	}
	defer pl.mu.Unlock()
	select {
	case sc.msgs <- msg:
		return nil
	default:
		return fmt.Errorf("it sent status lines nobody asked for (last %q)", line)
	}
}

// await makes p, just started on sc, receive sc's next status line (its
// final one) directly from the reader. A line that arrived before (or the
// reader's end) is handled at once on the caller's goroutine.
func (pl *pool) await(sc *supervisorConn, p *Process) {
	pl.mu.Lock()
	select {
	case msg, ok := <-sc.msgs:
		pl.mu.Unlock()
		p.finish(msg, ok)
	default:
		sc.awaiting = p
		pl.mu.Unlock()
	}
}

// stopDelivering is called by sc's reader once it stopped: it closes msgs
// and returns the run that was awaiting a line, if any, which the reader
// must then finish as lost.
func (pl *pool) stopDelivering(sc *supervisorConn) *Process {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	close(sc.msgs)
	pl.removeLocked(sc)
	p := sc.awaiting
	sc.awaiting = nil
	return p
}

// claim takes p's end away from sc's reader: it returns true when p was
// still awaiting its final line (the caller now finishes p, and a line
// arriving later is unexpected), false when the reader already has it or
// the supervisor was lost (the reader finishes p).
func (pl *pool) claim(sc *supervisorConn, p *Process) bool {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if sc.awaiting != p {
		return false
	}
	sc.awaiting = nil
	return true
}

// removeLocked takes sc out of the pool and stops its idle timer; it
// reports whether sc was there.
func (pl *pool) removeLocked(sc *supervisorConn) bool {
	i := slices.Index(pl.idle, sc)
	if i < 0 {
		return false
	}
	pl.idle = slices.Delete(pl.idle, i, i+1)
	sc.idleTimer.Stop()
	return true
}
