package exec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentgate/agentgate/exec/procspec"

	"github.com/agentgate/agentgate/exec/runinfo"
)

// Defaults of Config.
const (
	// DefaultGrace is the time between the polite and the forced end of a
	// run's tree.
	DefaultGrace = 2 * time.Second
	// DefaultMemTail is the in-memory tail per stream.
	DefaultMemTail = 256 << 10
	// DefaultSpillCap is the on-disk cap per stream per run.
	DefaultSpillCap = 64 << 20
)

// cancelPollInterval is how often an Executor looks for cancel requests
// (RequestCancel) of its running runs.
const cancelPollInterval = 200 * time.Millisecond

// drainBound bounds how long output is still read after the whole process
// tree is gone: normally the pipes are at EOF by then, but a descendant that
// escaped containment could hold them open.
const drainBound = 2 * time.Second

// Config configures an Executor.
type Config struct {
	// StateDir holds the runs: StateDir/runs/<id>.json and StateDir/runs/<id>/
	// for the output files. Required; created (0700) when missing.
	StateDir string
	// HostKind is recorded in every run record.
	HostKind HostKind
	// Env is the environment of every run: the host's, never the agent's.
	// nil means HostEnv(context.Background(), HostKind) at New.
	Env []string
	// Grace is the time between SIGTERM and SIGKILL (Windows: unused, the
	// job is terminated at once); zero means DefaultGrace.
	Grace time.Duration
	// MemTail is the in-memory tail per stream; zero means DefaultMemTail.
	MemTail int
	// SpillCap is the on-disk cap per stream per run; beyond it the newest
	// bytes are kept and the stream is marked dropped. Zero means
	// DefaultSpillCap.
	SpillCap int64
	// Changes bounds the change summary; the zero value takes the defaults.
	Changes ChangeLimits
}

// Meta says who asked for a run; it is recorded, not interpreted.
type Meta struct {
	// ID is the run id; "" generates one that sorts by start time. A given
	// id must be unused and made of letters, digits, '.', '_' and '-' (at
	// most 128, not starting with '.').
	ID string
	// Provider is the agent provider's name.
	Provider string
	// Client is the agent client's name.
	Client string
	// Session is the bridge session id.
	Session string
	// Project is the project the session declared.
	Project string
}

// Executor starts validated commands and keeps their runs. It is safe for
// concurrent use.
type Executor struct {
	// cfg is the configuration with defaults filled in.
	cfg Config
	// hostPID and hostStart identify this process in run records.
	hostPID int
	// hostStart is this process's identity beyond its pid (see Record).
	hostStart string

	// mu guards runs and polling.
	mu sync.Mutex
	// runs maps ids to every run started by this Executor.
	runs map[string]*Run
	// polling is true while the cancel-request poller runs.
	polling bool
	// records writes run records durably off the run's path.
	records *persister
}

// New returns an Executor writing its runs under cfg.StateDir. It creates
// the runs directory; it does not call MarkLost (the host does, once, at
// start-up).
func New(cfg Config) (*Executor, error) {
	if cfg.StateDir == "" {
		return nil, errors.New("exec: Config.StateDir is empty; give the directory for run records (the XDG state dir)")
	}
	if cfg.Grace <= 0 {
		cfg.Grace = DefaultGrace
	}
	if cfg.MemTail <= 0 {
		cfg.MemTail = DefaultMemTail
	}
	if cfg.SpillCap <= 0 {
		cfg.SpillCap = DefaultSpillCap
	}
	if cfg.Env == nil {
		cfg.Env = HostEnv(context.Background(), cfg.HostKind)
	}
	cfg.Changes = cfg.Changes.withDefaults()
	if err := os.MkdirAll(runsDir(cfg.StateDir), 0o700); err != nil {
		return nil, fmt.Errorf("exec: creating the run records directory: %w", err)
	}
	e := &Executor{cfg: cfg, hostPID: os.Getpid(), runs: make(map[string]*Run), records: newPersister(cfg.StateDir)}
	e.hostStart, _ = processIdentity(e.hostPID)
	return e, nil
}

// Run is one started (or failed) command.
type Run struct {
	// e is the executor that started the run.
	e *Executor
	// cmd is what runs.
	cmd Command
	// stdout and stderr retain the output; nil when the run did not start.
	stdout, stderr *retained
	// done is closed once the final state is reached and recorded.
	done chan struct{}
	// stopAs holds the final state a Cancel or the timeout asked for
	// (StateCancelled, StateTimedOut), or StateExited once the tree ended
	// with neither; the first to be stored wins.
	stopAs atomic.Value
	// p is the process tree; nil when the run did not start.
	p proc

	// mu guards rec and stopWhy.
	mu sync.Mutex
	// rec is the run's record; output counters are filled in by Record.
	rec Record
	// stopWhy is the reason the cancel that stored stopAs gave; it becomes
	// Record.CancelledBy when the run ends cancelled.
	stopWhy string
}

// Start starts cmd and returns at once with its Run in state running. The
// working directory is snapshot first for the change summary (bounded by
// Config.Changes). If the process cannot be started or contained, Start
// returns the Run in state failed_to_start (recorded, Done closed) and a
// *Refusal with code failed_to_start or containment_failed; nothing runs.
// An id that is invalid or already used returns a nil Run and an error.
func (e *Executor) Start(cmd Command, meta Meta) (*Run, error) {
	if cmd.Executable == "" || len(cmd.Argv) == 0 || cmd.Dir == "" || cmd.Timeout <= 0 {
		return nil, errors.New("exec: Start needs a Command made by Validate")
	}
	id := meta.ID
	if id == "" {
		id = runinfo.NewID()
	} else if err := runinfo.CheckID(id); err != nil {
		return nil, err
	}
	r := &Run{
		e:    e,
		cmd:  cmd,
		done: make(chan struct{}),
		rec: Record{
			ID: id, Argv: cmd.Argv, Executable: cmd.Executable, Dir: cmd.Dir, ProjectRoot: cmd.ProjectRoot,
			Provider: meta.Provider, Client: meta.Client, Session: meta.Session,
			HostKind: e.cfg.HostKind, HostPID: e.hostPID, HostStart: e.hostStart,
			State: StateRunning, TimeoutMS: cmd.Timeout.Milliseconds(), StartedAt: time.Now().UTC(),
			StdoutPath: outputPath(e.cfg.StateDir, id, Stdout), StderrPath: outputPath(e.cfg.StateDir, id, Stderr),
			SpillCap: e.cfg.SpillCap,
		},
	}
	e.mu.Lock()
	if _, dup := e.runs[id]; dup {
		e.mu.Unlock()
		return nil, fmt.Errorf("exec: run id %q is already used; omit Meta.ID to get a fresh one", id)
	}
	e.runs[id] = r
	e.mu.Unlock()

	var before snapshot
	if !e.cfg.Changes.Disabled {
		before = takeSnapshot(cmd.Dir, e.cfg.Changes)
	}
	pipes, err := openRunPipes(cmd.Stdin)
	if err != nil {
		return r, r.failStart(CodeFailedToStart, fmt.Sprintf("could not create the run's pipes: %v", err))
	}
	p, err := startProc(procspec.Spec{
		Path: cmd.Executable, Args: cmd.Argv, Dir: cmd.Dir, Env: e.cfg.Env,
		Stdin: pipes.childStdin, Stdout: pipes.childStdout, Stderr: pipes.childStderr,
		Grace: e.cfg.Grace,
	})
	pipes.closeChildEnds()
	if err != nil {
		pipes.closeParentEnds()
		if errors.Is(err, procspec.ErrContainment) {
			return r, r.failStart(CodeContainmentFailed, fmt.Sprintf("agentgate could not contain %s, so it did not start: %v", cmd.Executable, err))
		}
		return r, r.failStart(CodeFailedToStart, fmt.Sprintf("could not start %s: %v", cmd.Executable, err))
	}
	r.p = p
	r.stdout = newRetained(r.rec.StdoutPath, e.cfg.MemTail, e.cfg.SpillCap)
	r.stderr = newRetained(r.rec.StderrPath, e.cfg.MemTail, e.cfg.SpillCap)
	r.mu.Lock()
	r.rec.PID = p.Pid()
	r.mu.Unlock()
	// Written in the background, off the run's path, within milliseconds:
	// from then on any process can find (and cancel) the run.
	e.records.mark(r)
	go r.supervise(pipes, before)
	e.watchCancelRequests()
	return r, nil
}

// failStart records the run as failed_to_start and returns the refusal.
func (r *Run) failStart(code, msg string) error {
	r.mu.Lock()
	r.rec.State = StateFailedToStart
	r.rec.Error = msg
	r.rec.EndedAt = time.Now().UTC()
	rec := r.rec
	r.mu.Unlock()
	// Written at once: a failure is rare and the caller reports it.
	if err := writeRecord(r.e.cfg.StateDir, rec); err != nil {
		msg += "; also, the run record could not be written: " + err.Error()
	}
	close(r.done)
	return &Refusal{Code: code, Message: msg}
}

// supervise runs the run's life after start: it pumps both streams, applies
// the timeout, waits for the whole tree, drains the pipes (bounded),
// summarises the changes and records the final state.
func (r *Run) supervise(pipes *runPipes, before snapshot) {
	// Each pump closes its pipe as soon as it has read to the end, which is
	// normally while the containment layer is still confirming that the
	// tree is gone, so that work is off the path to Done.
	pumped := make(chan struct{}, 2)
	go func() { r.stdout.pump(pipes.stdout); pipes.stdout.Close(); pumped <- struct{}{} }()
	go func() { r.stderr.pump(pipes.stderr); pipes.stderr.Close(); pumped <- struct{}{} }()
	if pipes.stdinW != nil {
		go pipes.feedStdin()
	}
	timer := time.AfterFunc(r.cmd.Timeout, func() { r.stop(StateTimedOut, "") })
	status, waitErr := r.p.Wait()
	timer.Stop()
	// From here on the tree is gone: a late Cancel or timeout must not turn
	// a run that ended by itself into a cancelled one.
	r.stopAs.CompareAndSwap(nil, StateExited)

	deadline := time.Now().Add(drainBound)
	pipes.stdout.SetReadDeadline(deadline)
	pipes.stderr.SetReadDeadline(deadline)
	<-pumped
	<-pumped
	pipes.closeParentEnds()

	var changes *ChangeSummary
	if !r.e.cfg.Changes.Disabled {
		changes = diffSnapshots(before, takeSnapshot(r.cmd.Dir, r.e.cfg.Changes), r.e.cfg.Changes, changeMethod)
	}
	r.mu.Lock()
	r.cmd.Stdin = nil
	r.rec.EndedAt = time.Now().UTC()
	r.rec.Changes = changes
	r.rec.Signal = status.Signal
	switch stopAs := r.stopAs.Load().(State); {
	case stopAs != StateExited:
		r.rec.State = stopAs
		if stopAs == StateCancelled {
			r.rec.CancelledBy = r.stopWhy
		}
	case waitErr != nil:
		r.rec.State = StateLost
		r.rec.Error = fmt.Sprintf("agentgate lost track of the process tree: %v", waitErr)
	default:
		r.rec.State = StateExited
		if status.Exited {
			code := status.Code
			r.rec.ExitCode = &code
		}
	}
	r.mu.Unlock()
	// The record writer also removes a cancel request left for the run.
	r.e.records.mark(r)
	close(r.done)
}

// setPersistError notes in the record's Error that it could not be
// persisted; the run itself goes on.
func (r *Run) setPersistError(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rec.Error == "" {
		r.rec.Error = "the run record could not be written: " + err.Error()
	}
}

// stop ends the run's tree, recording as final state the one of the first
// request (cancel or timeout) and, for a cancel, why. A run already
// finished is unaffected.
func (r *Run) stop(as State, why string) {
	if r.p == nil {
		return
	}
	select {
	case <-r.done:
		return
	default:
	}
	r.mu.Lock()
	won := r.stopAs.CompareAndSwap(nil, as)
	if won {
		r.stopWhy = why
	}
	r.mu.Unlock()
	if won {
		r.p.Terminate()
	}
}

// ID returns the run's id.
func (r *Run) ID() string { return r.rec.ID }

// Command returns the command the run runs. Its Stdin is nil once the
// run has finished (StdinSHA256 stays): a finished run keeps no input.
func (r *Run) Command() Command {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cmd
}

// Record returns a snapshot of the run's record, with the output counters
// of this moment.
func (r *Run) Record() Record {
	r.mu.Lock()
	rec := r.rec
	r.mu.Unlock()
	if r.stdout != nil {
		rec.StdoutBytes, rec.StdoutDropped, _ = r.stdout.stats()
		rec.StderrBytes, rec.StderrDropped, _ = r.stderr.stats()
	}
	return rec
}

// settleOutput writes the output a finished run still holds in memory to
// its spill files (see retained.finish); a running run is left alone.
func (r *Run) settleOutput() {
	if r.stdout != nil {
		r.stdout.settle()
		r.stderr.settle()
	}
}

// Done returns a channel closed when the run reached its final state. Its
// final record is then queued for writing; Executor.Flush waits for it.
func (r *Run) Done() <-chan struct{} { return r.done }

// Wait waits for the run's final state and returns its record. It returns
// ctx's error (and the record of that moment) only if ctx ends first. A
// non-zero exit is not an error: it is in Record.ExitCode.
func (r *Run) Wait(ctx context.Context) (Record, error) {
	select {
	case <-r.done:
		return r.Record(), nil
	case <-ctx.Done():
		return r.Record(), ctx.Err()
	}
}

// Cancel ends the run's whole process tree (SIGTERM, grace, SIGKILL; Windows:
// the job is terminated) and makes its final state cancelled. It returns at
// once; idempotent; a finished run is unaffected, and a run already timing
// out stays timed_out.
func (r *Run) Cancel() { r.stop(StateCancelled, "") }

// CancelBecause is Cancel that also says who or what cancelled the run, in
// words a person reads in the Processes window ("the agent's connection
// closed"): it becomes Record.CancelledBy if this cancel is the one that
// ends the run.
func (r *Run) CancelBecause(why string) { r.stop(StateCancelled, why) }

// Read returns retained output of stream s from byte offset cursor, at most
// maxBytes (<= 0: 64 KiB). Chunk.Dropped says bytes between cursor and the
// first returned byte are no longer retained; Chunk.EOF says the stream
// ended and Chunk.Next is its length. A cursor past the end returns no data.
func (r *Run) Read(s Stream, cursor int64, maxBytes int) (Chunk, error) {
	var src *retained
	switch s {
	case Stdout:
		src = r.stdout
	case Stderr:
		src = r.stderr
	default:
		return Chunk{}, fmt.Errorf("unknown stream %q: use %q or %q", s, Stdout, Stderr)
	}
	if src == nil {
		return Chunk{EOF: true}, nil
	}
	return src.read(cursor, maxBytes)
}

// Get returns the run with the given id started by this Executor.
func (e *Executor) Get(id string) (*Run, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, ok := e.runs[id]
	return r, ok
}

// Runs returns every run started by this Executor, oldest first.
func (e *Executor) Runs() []*Run {
	e.mu.Lock()
	runs := make([]*Run, 0, len(e.runs))
	for _, r := range e.runs {
		runs = append(runs, r)
	}
	e.mu.Unlock()
	sort.Slice(runs, func(i, j int) bool {
		a, b := runs[i].rec.StartedAt, runs[j].rec.StartedAt
		if !a.Equal(b) {
			return a.Before(b)
		}
		return runs[i].rec.ID < runs[j].rec.ID
	})
	return runs
}

// Forget removes a finished run from this Executor's memory (Get, Runs) and
// reports whether it did; a running run, or an unknown id, is kept and
// false returned. Its record and files stay until PruneRecords.
func (e *Executor) Forget(id string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, ok := e.runs[id]
	if !ok {
		return false
	}
	select {
	case <-r.done:
		delete(e.runs, id)
		return true
	default:
		return false
	}
}

// Flush blocks until every run record changed so far is durably on disk.
// Hosts call it before they exit, and anyone who reads records from disk
// (ListRecords) right after a run ended and needs its final state there.
func (e *Executor) Flush() { e.records.flush() }

// CancelAll cancels every running run of this Executor; it returns at once.
func (e *Executor) CancelAll() {
	for _, r := range e.Runs() {
		r.Cancel()
	}
}

// watchCancelRequests starts, unless running, the poller that cancels runs
// whose cancel request file (RequestCancel) appeared. It stops when no run
// is running.
func (e *Executor) watchCancelRequests() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.polling {
		return
	}
	e.polling = true
	go func() {
		ticker := time.NewTicker(cancelPollInterval)
		defer ticker.Stop()
		for range ticker.C {
			running := 0
			for _, r := range e.Runs() {
				select {
				case <-r.done:
					continue
				default:
				}
				running++
				if _, err := os.Stat(cancelPath(e.cfg.StateDir, r.rec.ID)); err == nil {
					r.CancelBecause("asked by another agentgate process (the Processes window or agentgate cancel)")
				}
			}
			if running == 0 {
				e.mu.Lock()
				// A run started since the scan restarts no poller while
				// polling is true, so check again under the lock.
				if e.anyRunningLocked() {
					e.mu.Unlock()
					continue
				}
				e.polling = false
				e.mu.Unlock()
				return
			}
		}
	}()
}

// anyRunningLocked reports whether a run has not finished; mu is held.
func (e *Executor) anyRunningLocked() bool {
	for _, r := range e.runs {
		select {
		case <-r.done:
		default:
			return true
		}
	}
	return false
}
