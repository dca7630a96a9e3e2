//go:build unix

package unixpg

import (
	"fmt"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentgate/agentgate/exec/procspec"
)

// The host's watch over the supervisors serving runs. A run of the same
// user could stop, trace or kill its supervisor (Landlock's scoping, where
// the kernel has it, prevents that from inside a confined run; see
// docs/lifetime.md); the supervisor alone then could not keep its promises,
// so the host watches each busy supervisor and, when it stops answering,
// is stopped or traced, dies, or lets the run outlive its deadline, ends the
// run's tree itself (endTree).
const (
	// watchInterval is how often the watchdog looks at busy supervisors
	// (/proc status: stopped, traced) and at the runs' host deadlines.
	watchInterval = 250 * time.Millisecond
	// pingEvery is how often a busy supervisor is pinged; how long it may
	// leave pings unanswered is poolLimits.answerBound.
	pingEvery = time.Second
	// hostDeadlineMargin is how long after the run's deadline and grace
	// the host waits for the supervisor's end report before it ends the
	// tree itself.
	hostDeadlineMargin = 2 * time.Second
	// endTreeBound bounds how long endTree sweeps through a supervisor
	// that does not serve any more before it SIGKILLs it.
	endTreeBound = 5 * time.Second
)

// watched holds the runs the watchdog looks after.
var watched struct {
	// mu guards procs and running.
	mu sync.Mutex
	// procs are the runs in progress.
	procs map[*Process]struct{}
	// running is true while the watchdog goroutine runs; it stops when
	// procs is empty.
	running bool
}

// watchProcess adds p to the watchdog's runs, starting the watchdog when it
// is not running.
func watchProcess(p *Process) {
	watched.mu.Lock()
	defer watched.mu.Unlock()
	if watched.procs == nil {
		watched.procs = make(map[*Process]struct{})
	}
	watched.procs[p] = struct{}{}
	if !watched.running {
		watched.running = true
		go watchLoop()
	}
}

// unwatch removes p from the watchdog's runs.
func unwatch(p *Process) {
	watched.mu.Lock()
	defer watched.mu.Unlock()
	delete(watched.procs, p)
}

// watchLoop checks every watched run each watchInterval and stops once no
// run is watched.
func watchLoop() {
	t := time.NewTicker(watchInterval)
	defer t.Stop()
	for now := range t.C {
		watched.mu.Lock()
		if len(watched.procs) == 0 {
			watched.running = false
			watched.mu.Unlock()
			return
		}
		procs := make([]*Process, 0, len(watched.procs))
		for p := range watched.procs {
			procs = append(procs, p)
		}
		watched.mu.Unlock()
		direct := false
		for _, p := range procs {
			if p.d != nil {
				direct = true
				continue // the host's own timers and the warden hold it
			}
			p.check(now)
		}
		if direct {
			inspectWarden()
		}
	}
}

// check looks at p's supervisor and deadline at time now: the host ends the
// tree itself when the supervisor is stopped or traced, has not answered
// for poolLimits.answerBound, or the host deadline passed; otherwise it pings the
// supervisor (at most every pingEvery).
func (p *Process) check(now time.Time) {
	select {
	case <-p.done:
		unwatch(p)
		return
	default:
	}
	var why string
	deadline := false
	switch {
	case !p.hostDeadline.IsZero() && now.After(p.hostDeadline):
		why, deadline = "its deadline passed and its supervisor had not ended it", true
	default:
		why = inspectSupervisor(p.sc.proc.Pid, p.sc.status)
	}
	if why == "" {
		if silent := now.Sub(time.Unix(0, p.sc.lastAnswer.Load())); silent > currentLimits().answerBound {
			why = fmt.Sprintf("its supervisor has not answered for %v", silent.Round(time.Second))
		}
	}
	if why == "" {
		p.ping(now)
		return
	}
	if supervisors.claim(p.sc, p) {
		unwatch(p)
		p.ctrlMu.Lock()
		p.active = false
		p.ctrlMu.Unlock()
		go p.endTree(why, deadline)
	}
}

// endTree ends p's tree from the host, because its supervisor does not
// serve it any more (why says how), and then publishes p's end with an
// error wrapping ErrContainment; deadline says the run's deadline had
// passed. The caller owns p's end: the supervisor's reader no longer
// delivers to p.
//
// It SIGKILLs the process group and every live descendant of the
// supervisor, repeatedly until none is left or endTreeBound passed: a
// stopped or traced supervisor still holds the orphans it reaped as
// subreaper, and cannot reap the killed ones, so each pass finds the
// children of those killed in the last. Then it SIGKILLs and retires the
// supervisor, waits until it was reaped, and kills the group once more.
// What left the group and is no longer the supervisor's descendant (its
// supervisor died first, or was made to stop being a subreaper) is out of
// the host's reach; the error says so.
func (p *Process) endTree(why string, deadline bool) {
	sup := p.sc.proc.Pid
	sweep := func() (found bool) {
		// The run's cgroup, where there is one, holds every process of the
		// tree however it detached.
		p.cg.kill()
		// The group may hold only zombies the stopped supervisor cannot
		// reap; a successful kill of it proves nothing, so only live
		// descendants count.
		_ = unix.Kill(-p.pid, unix.SIGKILL)
		for _, d := range descendantsOf(sup) {
			if Alive(d) {
				found = true
				_ = unix.Kill(d, unix.SIGKILL)
			}
		}
		return found
	}
	stop := time.Now().Add(endTreeBound)
	for sweep() && time.Now().Before(stop) {
		time.Sleep(sweepPoll)
	}
	_ = p.sc.proc.Kill() // no longer trusted; os.Process never signals after Wait returned
	p.sc.retire()
	<-p.sc.exited
	sweep()
	p.status = procspec.ExitStatus{Code: -1, Signal: "SIGKILL", TimedOut: deadline}
	if p.cg != nil {
		p.cg.end()
		p.err = fmt.Errorf("run pid %d: %s; agentgate ended the run's cgroup, which held every process of the tree: %w",
			p.pid, why, procspec.ErrContainment)
	} else {
		p.err = fmt.Errorf("run pid %d: %s; agentgate ended the run's process group and every descendant the supervisor "+
			"still held, but descendants that had left both may still run: %w", p.pid, why, procspec.ErrContainment)
	}
	close(p.done)
}
