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

	"github.com/agentgate/agentgate/exec/changes"
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
	// Changes makes each run's change summary (a changes.Keeper, or a
	// changes.Client of the keeper process); nil makes none (Record.Changes
	// stays nil).
	Changes changes.Tracker
	// Confine configures write confinement (Linux; docs/lifetime.md); the
	// zero value confines with the default settings, the shim beside the
	// running executable, and nothing extra protected or hidden.
	Confine ConfineConfig
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
	// WithoutWriteConfinement is a person's one-time approval of this run
	// without write confinement (on the card, never by a rule or grant):
	// the run's writes are not restricted, everything else of its
	// confinement (scoping, network, lifetime) holds.
	WithoutWriteConfinement bool
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
	// summaries counts change summaries being made (Flush waits for them).
	summaries sync.WaitGroup
	// stopGen counts CancelAll calls and cancelling those in progress: a
	// Start that overlapped any CancelAll cancels its own run (see Start).
	stopGen, cancelling atomic.Int64
	// capsOnce guards caps, what this machine offers for confinement,
	// probed by the first run that needs it.
	capsOnce sync.Once
	// caps is set by capsOnce.
	caps *confineCaps
	// tmps makes and removes the runs' private temporary directories.
	tmps tmpDirs
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
	// changesDone is closed once the change summary is in the record (at
	// once when there is none).
	changesDone chan struct{}
	// mu guards rec, p, cancelled, cancelWhy and ended.
	mu sync.Mutex
	// p is the process tree; nil until it started, and when it did not.
	p proc
	// cancelled is set by the first Cancel before the tree ended: the
	// run's final state is then cancelled (unless its deadline ended it
	// first). A Cancel before p is set is carried out by Start.
	cancelled bool
	// cancelWhy is the first cancel's reason (CancelBecause), recorded as
	// Record.CancelledBy.
	cancelWhy string
	// ended is set once the tree is gone; a later Cancel does nothing.
	ended bool
	// rec is the run's record; output counters are filled in by Record.
	rec Record
	// plan is how the run is confined; set by Start before the process
	// starts, read by supervise after it ended.
	plan *confinePlan
}

// Start starts cmd and returns at once with its Run in state running. The
// change tracker (Config.Changes) is told just before that a run begins.
// If the process cannot be started or contained, Start
// returns the Run in state failed_to_start (recorded, Done closed) and a
// *Refusal with code failed_to_start or containment_failed; nothing runs.
// An id that is invalid or already used returns a nil Run and an error.
//
// The run's deadline (cmd.Timeout) is enforced by the containment layer:
// by the run's supervisor and by this host on Unix, so that stopping
// either one does not stretch it (docs/lifetime.md).
//
// The working directory and the program are checked again (see Validate):
// if either is no longer the one validated, the run fails to start with
// code cwd_changed or program_changed and nothing runs. On Linux the
// process starts in the very directory opened for this check.
//
// Start and cancel: the Run is visible (Get, Runs) from the moment Start
// registers it. A Cancel of it before its process exists is carried out
// by Start: the process is not started (state cancelled) or, if it is
// already being started, ended at once. A Start that overlaps a CancelAll
// in any way — begun before it returned — cancels its run the same way, so
// "Stop everything" never misses a run that was starting.
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
		e:           e,
		cmd:         cmd,
		done:        make(chan struct{}),
		changesDone: make(chan struct{}),
		rec: Record{
			ID: id, Argv: cmd.Argv, Executable: cmd.Executable, Dir: cmd.Dir, ProjectRoot: cmd.ProjectRoot,
			Provider: meta.Provider, Client: meta.Client, Session: meta.Session,
			HostKind: e.cfg.HostKind, HostPID: e.hostPID, HostStart: e.hostStart,
			State: StateRunning, TimeoutMS: cmd.Timeout.Milliseconds(), StartedAt: time.Now().UTC(),
			StdoutPath: outputPath(e.cfg.StateDir, id, Stdout), StderrPath: outputPath(e.cfg.StateDir, id, Stderr),
			SpillCap: e.cfg.SpillCap,
		},
	}
	gen := e.stopGen.Load()
	e.mu.Lock()
	if _, dup := e.runs[id]; dup {
		e.mu.Unlock()
		return nil, fmt.Errorf("exec: run id %q is already used; omit Meta.ID to get a fresh one", id)
	}
	e.runs[id] = r
	e.mu.Unlock()

	// Checks at the moment of use: the directory and the program must be
	// the ones Validate bound (and a person approved).
	dirF, ref := reopenDir(cmd)
	if ref != nil {
		return r, r.failStart(ref.Code, ref.Message)
	}
	defer dirF.Close() // the supervisor holds its own copy once Start returns
	if ref := verifyProgram(cmd); ref != nil {
		return r, r.failStart(ref.Code, ref.Message)
	}
	if testHookVerified != nil {
		testHookVerified()
	}
	plan, ref := e.confine(cmd, meta, false)
	if ref != nil {
		return r, r.failStart(ref.Code, ref.Message)
	}
	r.plan = plan
	r.mu.Lock()
	r.rec.Confinement = &plan.info
	r.mu.Unlock()
	defer plan.release() // the supervisor holds its own copies once Start returns
	if plan.checked != nil {
		plan.before = fingerprintProtected(plan.checked, plan.sealed)
	}
	env := e.cfg.Env
	if plan.tmpDir != "" {
		env = withTMPDIR(env, plan.tmpDir)
	}
	pipes, err := openRunPipes(cmd.Stdin)
	if err != nil {
		return r, r.failStart(CodeFailedToStart, fmt.Sprintf("could not create the run's pipes: %v", err))
	}
	if testHookStarting != nil {
		testHookStarting(r)
	}
	if e.overlappedCancelAll(gen) || r.isCancelled() {
		pipes.closeChildEnds()
		pipes.closeParentEnds()
		return r, r.endUnstarted(StateCancelled, "", "cancelled before its process started; nothing ran")
	}
	var mark changes.Mark
	if e.cfg.Changes != nil {
		mark = e.cfg.Changes.Begin(cmd.ProjectRoot, cmd.Dir)
	}
	p, err := startProc(procspec.Spec{
		Path: cmd.Executable, Args: cmd.Argv, Dir: cmd.Dir, Env: env, Sandbox: plan.sandbox,
		Stdin: pipes.childStdin, Stdout: pipes.childStdout, Stderr: pipes.childStderr,
		Grace: e.cfg.Grace, Timeout: cmd.Timeout,
		DirFD: dirF, ProgramID: &cmd.ProgramID,
	})
	pipes.closeChildEnds()
	if testHookStarted != nil && err == nil {
		testHookStarted(r)
	}
	if err != nil {
		pipes.closeParentEnds()
		if mark != nil {
			go mark.Finish() // nothing ran; this releases what the mark holds
		}
		if errors.Is(err, procspec.ErrChanged) {
			return r, r.failStart(CodeProgramChanged, fmt.Sprintf("%v; nothing ran. Look at what changed it before you approve it again", err))
		}
		if errors.Is(err, procspec.ErrContainment) {
			return r, r.failStart(CodeContainmentFailed, fmt.Sprintf("agentgate could not contain %s, so it did not start: %v", cmd.Executable, err))
		}
		return r, r.failStart(CodeFailedToStart, fmt.Sprintf("could not start %s: %v", cmd.Executable, err))
	}
	r.stdout = newRetained(r.rec.StdoutPath, e.cfg.MemTail, e.cfg.SpillCap)
	r.stderr = newRetained(r.rec.StderrPath, e.cfg.MemTail, e.cfg.SpillCap)
	r.mu.Lock()
	r.p = p
	r.rec.PID = p.Pid()
	if e.overlappedCancelAll(gen) {
		r.cancelled = true
	}
	cancel := r.cancelled
	r.mu.Unlock()
	if cancel { // a Cancel or CancelAll came while the process was starting
		p.Terminate()
	}
	// Written in the background, off the run's path, within milliseconds:
	// from then on any process can find (and cancel) the run.
	e.records.mark(r)
	go r.supervise(pipes, mark)
	e.watchCancelRequests()
	return r, nil
}

// failStart records the run as failed_to_start and returns the refusal.
func (r *Run) failStart(code, msg string) error {
	return r.endUnstarted(StateFailedToStart, code, msg)
}

// endUnstarted records the final state of a run whose process never
// started (failed_to_start, or cancelled before it started), with msg as
// its error, and closes Done. It returns a *Refusal with code, or nil when
// code is empty (a cancelled run is not a failure).
func (r *Run) endUnstarted(state State, code, msg string) error {
	r.plan.finish(r.cmd.ProjectRoot, &r.e.tmps)
	r.mu.Lock()
	r.rec.State = state
	r.rec.Error = msg
	r.rec.EndedAt = time.Now().UTC()
	r.ended = true
	rec := r.rec
	r.mu.Unlock()
	// Written at once: this is rare and the caller reports it.
	if err := writeRecord(r.e.cfg.StateDir, rec); err != nil {
		msg += "; also, the run record could not be written: " + err.Error()
	}
	close(r.done)
	close(r.changesDone)
	if code == "" {
		return nil
	}
	return &Refusal{Code: code, Message: msg}
}

// testHookStarting and testHookStarted, when set by a test, run in Start:
// the first once the run is registered (visible to Get, Runs and
// CancelAll) and before its process is started, the second once the
// process started and before the Run holds it.
var testHookStarting, testHookStarted func(*Run)

// testHookVerified, when set by a test, runs in Start right after the
// directory and program checks passed.
var testHookVerified func()

// overlappedCancelAll reports whether a CancelAll began since the stop
// generation was gen, or is in progress.
func (e *Executor) overlappedCancelAll(gen int64) bool {
	return e.stopGen.Load() != gen || e.cancelling.Load() > 0
}

// isCancelled reports whether a Cancel was asked for.
func (r *Run) isCancelled() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cancelled
}

// supervise runs the run's life after start: it pumps both streams, waits
// for the whole tree (ended by itself, by a Cancel, or by its deadline,
// which the containment layer enforces), drains the pipes (bounded) and
// records the final state, with the change summary pending (summarise).
func (r *Run) supervise(pipes *runPipes, mark changes.Mark) {
	// Each pump closes its pipe as soon as it has read to the end, which is
	// normally while the containment layer is still confirming that the
	// tree is gone, so that work is off the path to Done.
	pumped := make(chan struct{}, 2)
	go func() { r.stdout.pump(pipes.stdout); pipes.stdout.Close(); pumped <- struct{}{} }()
	go func() { r.stderr.pump(pipes.stderr); pipes.stderr.Close(); pumped <- struct{}{} }()
	if pipes.stdinW != nil {
		go pipes.feedStdin()
	}
	status, waitErr := r.p.Wait()
	// From here on the tree is gone: a late Cancel must not turn a run
	// that ended by itself into a cancelled one.
	r.mu.Lock()
	r.ended = true
	cancelled := r.cancelled
	r.mu.Unlock()

	deadline := time.Now().Add(drainBound)
	pipes.stdout.SetReadDeadline(deadline)
	pipes.stderr.SetReadDeadline(deadline)
	<-pumped
	<-pumped
	pipes.closeParentEnds()
	protectedChanged := r.plan.finish(r.cmd.ProjectRoot, &r.e.tmps)

	r.mu.Lock()
	r.cmd.Stdin = nil
	r.rec.ProtectedChanged = protectedChanged
	r.rec.EndedAt = time.Now().UTC()
	r.rec.ChangesPending = mark != nil
	r.rec.Signal = status.Signal
	if waitErr != nil {
		r.rec.Error = fmt.Sprintf("agentgate lost track of the process tree: %v", waitErr)
	}
	switch {
	case status.TimedOut:
		r.rec.State = StateTimedOut
	case cancelled:
		r.rec.State = StateCancelled
		r.rec.CancelledBy = r.cancelWhy
	case waitErr != nil:
		r.rec.State = StateLost
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
	if mark != nil {
		r.e.summaries.Add(1)
		go r.summarise(mark)
	} else {
		close(r.changesDone)
	}
	close(r.done)
}

// summarise puts the change summary into the finished run's record: the
// agent already has the exit, so nothing waits on this but ChangesDone.
func (r *Run) summarise(mark changes.Mark) {
	defer r.e.summaries.Done()
	s := mark.Finish()
	r.mu.Lock()
	r.rec.Changes, r.rec.ChangesPending = s, false
	r.mu.Unlock()
	r.e.records.mark(r)
	close(r.changesDone)
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
		rec.StdoutInline, rec.StderrInline = r.stdout.inlined(), r.stderr.inlined()
	}
	return rec
}

// settleOutput writes the output a finished run still holds in memory to
// its spill files, or keeps a small stream for its record (see
// retained.settle); a running run is left alone.
func (r *Run) settleOutput() {
	if r.stdout != nil {
		r.stdout.settle()
		r.stderr.settle()
	}
}

// Done returns a channel closed when the run reached its final state. Its
// final record is then queued for writing; Executor.Flush waits for it.
// The change summary may still be pending (Record.ChangesPending).
func (r *Run) Done() <-chan struct{} { return r.done }

// ChangesDone returns a channel closed once the run's change summary is in
// its record (Record.Changes), after Done; at once with Done when there is
// none to make.
func (r *Run) ChangesDone() <-chan struct{} { return r.changesDone }

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
// once; idempotent; a finished run is unaffected, and a run whose deadline
// already ended it stays timed_out. A run whose process is still being
// started is cancelled by Start as soon as it exists (or never started).
func (r *Run) Cancel() { r.CancelBecause("") }

// CancelBecause is Cancel that also says who or what cancelled the run, in
// words a person reads in the Processes window ("the agent's connection
// closed"): it becomes Record.CancelledBy if this cancel is the one that
// ends the run.
func (r *Run) CancelBecause(why string) {
	r.mu.Lock()
	if r.ended || r.cancelled {
		r.mu.Unlock()
		return
	}
	r.cancelled = true
	r.cancelWhy = why
	p := r.p
	r.mu.Unlock()
	if p != nil {
		p.Terminate()
	}
}

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

// Flush blocks until every change summary being made is in its record
// (bounded by the tracker's own limits), every run record changed so far
// is durably on disk, and the private temporary directories of the runs
// that ended are removed (with the spare made ahead). Hosts call it before they exit, and anyone who reads
// records from disk (ListRecords) right after a run ended and needs its
// final state there.
func (e *Executor) Flush() {
	e.summaries.Wait()
	e.records.flush()
	e.tmps.flush()
}

// CancelAll cancels every running run of this Executor, including runs
// whose Start is in progress (Start cancels those itself); it returns at
// once.
func (e *Executor) CancelAll() {
	e.cancelling.Add(1)
	defer e.cancelling.Add(-1)
	e.stopGen.Add(1)
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
