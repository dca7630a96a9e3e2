//go:build linux

package unixpg

import (
	"bufio"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The warden. A direct run (direct_linux.go) is the host's own child, so
// nothing but the host would end it; yet the host can be stopped (Ctrl-Z on
// `agentgate run`, or SIGSTOP from a run that is not Landlock-scoped) or
// killed. The warden is one small process per host — the host binary
// re-executed, like a supervisor, from the host thread locked for the
// host's life — that holds every direct run to its bounds where the host
// cannot:
//
//   - at a run's deadline plus wardenMargin, if the host has not begun to
//     end the run, it sends SIGTERM and SIGCONT to every process of the
//     run's cgroup and writes cgroup.kill once the grace is over; if the
//     host began, the warden only kills, at the end of the host's grace plus
//     wardenMargin;
//   - when its lifeline ends (end of file on its socket: the host exited or
//     died; SIGHUP, the parent-death signal tied to the host's locked
//     thread; SIGTERM, SIGINT), it kills every cgroup of the host's, removes
//     them once empty, and exits.
//
// What it needs to know lives on the run's cgroup itself, in user
// extended attributes the host sets before the run starts (wardDeadline:
// "DEADLINE GRACE", the deadline on CLOCK_MONOTONIC in nanoseconds, 0 for
// none, and the grace in nanoseconds; wardEnding: when the host began the
// end) and the
// warden sets when it acts (wardActed: "deadline"), so that a burst of
// short runs costs the warden nothing: it sleeps until the earliest
// deadline it knows of, then scans the host's cgroups (named
// agentgate-<host pid>-…), acts on those that are due and sleeps until the
// next deadline among the rest. The host sends it one line only when a run
// (or the end it began is to be backed) before any scan it asked for:
// "wake T" (CLOCK_MONOTONIC ns). The warden sends one line, "ready", once
// its signal handlers are in place; the host starts no run before.
//
// It holds no descriptor of any run, is non-dumpable (PR_SET_DUMPABLE 0)
// and in its own process group. The host watches it (its pidfd; its /proc
// status while runs are in progress): a warden that ends, is stopped or
// traced is replaced, and the new one scans at once.

// wardenArg is the hidden first argument that, with the environment marker
// (superviseEnvKey), makes a process the warden.
const wardenArg = "__agentgate_warden"

// The user extended attributes of a direct run's cgroup.
const (
	wardDeadline = "user.agentgate.deadline"
	wardEnding   = "user.agentgate.ending"
	wardActed    = "user.agentgate.warden"
)

// wardenReadyBound bounds how long a new warden may take to say it is
// ready.
const wardenReadyBound = 10 * time.Second

// wardenReport writes one line to the host; a failure means the host is
// gone, which end of file reports.
func wardenReport(line string) {
	b := []byte(line + "\n")
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

// wardenMargin is how long after the moment the host should have acted
// (a run's deadline; the end of the grace the host gave) the warden acts in
// its place. A healthy host acts on time, so the warden then finds the
// cgroup empty or gone; a stopped one stretches a run by at most this.
const wardenMargin = 100 * time.Millisecond

// wardenEmptyBound bounds how long the warden, its lifeline lost, waits for
// killed cgroups to empty before it removes what it can and exits.
const wardenEmptyBound = 5 * time.Second

// monoNow returns CLOCK_MONOTONIC in nanoseconds, the clock host and
// warden share.
func monoNow() int64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

// ward is the warden's main loop; it returns the process's exit code. Its
// arguments after wardenArg are the host's pid and the directory its run
// cgroups are made in.
func ward() int {
	syscall.CloseOnExec(controlFD)
	closeInheritedFDs()
	if len(os.Args) != 4 {
		return 2
	}
	host, err := strconv.Atoi(os.Args[2])
	base := os.Args[3]
	if err != nil || !filepath.IsAbs(base) {
		return 2
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGHUP, syscall.SIGTERM, syscall.SIGINT)
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return 2 // the host sees it end before it is ready
	}
	// From here on the host's death (end of file, SIGHUP) ends its runs:
	// the host starts none before it read this.
	wardenReport("ready")
	lines := make(chan string, 16)
	go func() {
		r := bufio.NewReader(os.NewFile(controlFD, "agentgate-warden-control"))
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				close(lines)
				return
			}
			lines <- strings.TrimSuffix(line, "\n")
		}
	}()
	ws := &wardState{prefix: cgroupPrefix + strconv.Itoa(host) + "-", base: base}
	timer := time.NewTimer(0) // a first scan at once: a replaced warden's runs
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				ws.endAll()
				return 0
			}
			t, found := strings.CutPrefix(line, "wake ")
			at, err := strconv.ParseInt(t, 10, 64)
			if !found || err != nil {
				ws.endAll()
				return 2
			}
			ws.schedule(at)
		case <-sigs:
			ws.endAll()
			return 0
		case <-timer.C:
			ws.next = 0
			ws.scan(monoNow())
		}
		if ws.next > 0 {
			timer.Reset(time.Duration(ws.next - monoNow()))
		}
	}
}

// wardState is the warden's state between scans.
type wardState struct {
	// prefix starts the names of the host's run cgroups.
	prefix string
	// base is the directory they are made in.
	base string
	// next is when the next scan is due (CLOCK_MONOTONIC ns); 0: none.
	next int64
}

// schedule makes a scan due at t unless one is due before.
func (ws *wardState) schedule(t int64) {
	if ws.next == 0 || t < ws.next {
		ws.next = t
	}
}

// cgroups returns the host's run cgroups.
func (ws *wardState) cgroups() []string {
	entries, _ := os.ReadDir(ws.base)
	var out []string
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), ws.prefix) {
			out = append(out, filepath.Join(ws.base, e.Name()))
		}
	}
	return out
}

// scan acts on every run of the host's that is due at now and schedules
// the next scan for the earliest of the rest.
func (ws *wardState) scan(now int64) {
	for _, dir := range ws.cgroups() {
		deadline, grace, ok := readWardDeadline(dir)
		if !ok {
			continue // a spare, or a run whose host has not set it up yet
		}
		cg := &runCgroup{dir: dir}
		ending, hostEnding := readXattrInt(dir, wardEnding)
		actedAt, acted := readXattrInt(dir, wardActed)
		switch {
		case hostEnding || acted:
			// Someone began the end: kill once its grace (and the margin)
			// is over.
			from := ending
			if acted {
				from = actedAt
			}
			if at := from + int64(grace+wardenMargin); now < at {
				ws.schedule(at)
			} else if cg.populated() {
				cg.kill()
				ws.schedule(now + int64(wardenMargin))
			}
		case deadline == 0:
			// No deadline: only the host's end, once begun, is backed.
		case now >= deadline+int64(wardenMargin):
			if !cg.populated() {
				continue // ended; the host removes its cgroup
			}
			_ = unix.Setxattr(dir, wardActed, []byte(strconv.FormatInt(now, 10)), 0)
			signalCgroup(dir, unix.SIGTERM)
			signalCgroup(dir, unix.SIGCONT)
			ws.schedule(now + int64(grace+wardenMargin))
		default:
			ws.schedule(deadline + int64(wardenMargin))
		}
	}
}

// endAll kills every run cgroup of the host's, waits (bounded) until they
// are empty, and removes them.
func (ws *wardState) endAll() {
	dirs := ws.cgroups()
	for _, dir := range dirs {
		(&runCgroup{dir: dir}).kill()
	}
	stop := time.Now().Add(wardenEmptyBound)
	for _, dir := range dirs {
		cg := &runCgroup{dir: dir}
		for cg.populated() && time.Now().Before(stop) {
			time.Sleep(time.Millisecond)
		}
		_ = os.Remove(dir)
	}
}

// readWardDeadline reads a run cgroup's wardDeadline attribute.
func readWardDeadline(dir string) (deadline int64, grace time.Duration, ok bool) {
	var buf [64]byte
	n, err := unix.Getxattr(dir, wardDeadline, buf[:])
	if err != nil {
		return 0, 0, false
	}
	d, g, found := strings.Cut(string(buf[:n]), " ")
	dl, err1 := strconv.ParseInt(d, 10, 64)
	gr, err2 := strconv.ParseInt(g, 10, 64)
	if !found || err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return dl, time.Duration(gr), true
}

// readXattrInt reads a decimal attribute of dir; ok is false when it is not
// set.
func readXattrInt(dir, name string) (int64, bool) {
	var buf [32]byte
	n, err := unix.Getxattr(dir, name, buf[:])
	if err != nil {
		return 0, false
	}
	v, err := strconv.ParseInt(string(buf[:n]), 10, 64)
	return v, err == nil
}

// signalCgroup sends sig to every process of the cgroup at path
// (cgroup.procs). Errors are ignored: a process that is gone needs none.
func signalCgroup(path string, sig unix.Signal) {
	b, err := os.ReadFile(filepath.Join(path, "cgroup.procs"))
	if err != nil {
		return
	}
	for _, pid := range parsePidList(b) {
		_ = unix.Kill(pid, sig)
	}
}

// wardenConn is the host's side of its warden.
type wardenConn struct {
	// proc is the warden process.
	proc *os.Process
	// ctrl is the host's end of the warden's socket: its lifeline, and
	// "wake" lines.
	ctrl *os.File
	// base is the cgroup directory the warden scans.
	base string
	// exited is closed once the warden was reaped.
	exited chan struct{}
	// retired is set when the host ended the warden on purpose.
	retired atomic.Bool
	// mu guards wakes and orders "wake" lines.
	mu sync.Mutex
	// wakes are the scans the host asked for (CLOCK_MONOTONIC ns), in
	// order; those past are dropped as new runs come.
	wakes []int64
}

// wardens holds the host's warden.
var wardens struct {
	// mu guards conn and live.
	mu sync.Mutex
	// conn is the warden in service; nil before the first direct run and
	// after it was lost.
	conn *wardenConn
	// live counts the direct runs in progress: a warden lost meanwhile is
	// replaced at once.
	live int
}

// wardenWakeSlack is how far in the future a scan the host asked for must
// be for a new run to rely on it: a scan that is about to start may have
// read the host's cgroups already.
const wardenWakeSlack = 20 * time.Millisecond

// currentWarden returns the warden in service for run cgroups in base,
// starting one when there is none (or it serves another base).
func currentWarden(base string) (*wardenConn, error) {
	wardens.mu.Lock()
	defer wardens.mu.Unlock()
	if w := wardens.conn; w != nil {
		select {
		case <-w.exited:
		default:
			if w.base == base {
				return w, nil
			}
			w.retired.Store(true)
			_ = w.ctrl.Close() // its lifeline: it ends the old base's runs
		}
	}
	w, err := spawnWarden(base)
	if err != nil {
		return nil, err
	}
	wardens.conn = w
	return w, nil
}

// spawnWarden starts a warden for the run cgroups in base: the host binary
// re-executed with the hidden argument, the host's pid and base, the
// environment marker as its whole environment, /dev/null as 0, 1 and 2,
// its end of a fresh socket as fd 3.
func spawnWarden(base string) (*wardenConn, error) {
	exe, err := executable()
	if err != nil {
		return nil, fmt.Errorf("finding agentgate's own executable to run the warden: %v", err)
	}
	null, err := devNull()
	if err != nil {
		return nil, fmt.Errorf("opening %s for the warden: %v", os.DevNull, err)
	}
	hostEnd, wardEnd, err := controlSocketpair()
	if err != nil {
		return nil, fmt.Errorf("creating the warden's socket: %v", err)
	}
	proc, err := startHelperProcess(exe, []string{wardenArg, strconv.Itoa(os.Getpid()), base}, &os.ProcAttr{
		Env:   []string{superviseEnvKey + "=" + superviseEnvValue},
		Files: []*os.File{null, null, null, wardEnd},
		Sys:   supervisorSysProcAttr(),
	})
	wardEnd.Close()
	if err != nil {
		hostEnd.Close()
		return nil, fmt.Errorf("starting the warden %s: %v", exe, err)
	}
	w := &wardenConn{proc: proc, ctrl: hostEnd, base: base, exited: make(chan struct{})}
	// Until it has its signal handlers, the host's death (its parent-death
	// signal) would end the warden without a word: no run starts before
	// it says it is ready.
	_ = hostEnd.SetReadDeadline(time.Now().Add(wardenReadyBound))
	line, err := bufio.NewReader(hostEnd).ReadString('\n')
	_ = hostEnd.SetReadDeadline(time.Time{})
	if err != nil || line != "ready\n" {
		_ = proc.Kill()
		_, _ = proc.Wait()
		hostEnd.Close()
		return nil, fmt.Errorf("the warden %s did not say it was ready (%q, %v)", exe, line, err)
	}
	go w.waitExit()
	return w, nil
}

// waitExit reaps the warden. A warden that ended while direct runs are in
// progress, unless the host retired it, is replaced at once (the new one
// scans at once).
func (w *wardenConn) waitExit() {
	_, _ = w.proc.Wait()
	close(w.exited)
	_ = w.ctrl.Close()
	if w.retired.Load() {
		return
	}
	wardens.mu.Lock()
	busy := wardens.live > 0
	wardens.mu.Unlock()
	if busy {
		_, _ = currentWarden(w.base)
	}
}

// retire ends the warden (it is no longer trusted): SIGKILL. The next one
// scans at once.
func (w *wardenConn) retire() {
	w.retired.Store(true)
	_ = w.proc.Kill()
	wardens.mu.Lock()
	if wardens.conn == w {
		wardens.conn = nil
	}
	wardens.mu.Unlock()
}

// expect makes sure the warden scans by t (CLOCK_MONOTONIC ns): it sends
// "wake t" unless a scan it asked for is due between wardenWakeSlack from
// now and t. (The warden itself schedules scans for the deadlines it found;
// those the host does not count on.)
func (w *wardenConn) expect(t int64) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	soon := monoNow() + int64(wardenWakeSlack)
	w.wakes = slices.DeleteFunc(w.wakes, func(x int64) bool { return x < soon })
	if len(w.wakes) > 0 && w.wakes[0] <= t {
		return nil
	}
	if _, err := w.ctrl.Write([]byte("wake " + strconv.FormatInt(t, 10) + "\n")); err != nil {
		return err
	}
	w.wakes = slices.Insert(w.wakes, 0, t)
	return nil
}

// inspectWarden retires the warden when the host's look at it finds it
// stopped or traced (inspectSupervisor), and starts another; the watchdog
// calls it while direct runs are in progress.
func inspectWarden() {
	wardens.mu.Lock()
	w := wardens.conn
	wardens.mu.Unlock()
	if w == nil {
		return
	}
	if inspectSupervisor(w.proc.Pid, nil) != "" {
		w.retire()
		_, _ = currentWarden(w.base)
	}
}
