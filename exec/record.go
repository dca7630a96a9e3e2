package exec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/agentgate/agentgate/exec/atomicfile"
	"github.com/agentgate/agentgate/exec/changes"
	"github.com/agentgate/agentgate/exec/runinfo"
)

// Record is a run's metadata as persisted in StateDir/runs/<id>.json and as
// a snapshot from Run.Record. It is rewritten atomically on every state
// change, so any process can list the runs of every host.
type Record struct {
	// ID identifies the run; sortable by start time when generated.
	ID string `json:"id"`
	// Argv is the command as proposed (argv[0] as the agent wrote it).
	Argv []string `json:"argv"`
	// Executable is the absolute path argv[0] resolved to.
	Executable string `json:"executable"`
	// Dir is the resolved working directory.
	Dir string `json:"dir"`
	// ProjectRoot is the resolved project root.
	ProjectRoot string `json:"project_root"`
	// Provider, Client and Session say who proposed the run (Meta).
	Provider string `json:"provider,omitempty"`
	// Client is the agent client's name (Meta).
	Client string `json:"client,omitempty"`
	// Session is the bridge session that proposed the run (Meta).
	Session string `json:"session,omitempty"`
	// HostKind says which kind of agentgate process hosts the run.
	HostKind HostKind `json:"host_kind"`
	// HostPID is the hosting process's pid.
	HostPID int `json:"host_pid"`
	// HostStart identifies the hosting process beyond its pid (on Linux the
	// boot id and the process start time), so a reused pid is not taken
	// for the host. Opaque; empty where the platform offers nothing.
	HostStart string `json:"host_start,omitempty"`
	// PID is the started process's pid; 0 when it did not start.
	PID int `json:"pid,omitempty"`
	// State is where the run is in its life.
	State State `json:"state"`
	// ExitCode is set in state exited when the process called exit: its
	// exit code. It is nil in every other state and when a signal ended the
	// process (Signal names it).
	ExitCode *int `json:"exit_code,omitempty"`
	// Signal names the signal that ended the process, if one did.
	Signal string `json:"signal,omitempty"`
	// Error says what went wrong, for failed_to_start and lost.
	Error string `json:"error,omitempty"`
	// CancelledBy says, for state cancelled, who or what cancelled the run
	// when the canceller said so (Run.CancelBecause): "the agent's
	// connection closed", "the person", …; empty otherwise.
	CancelledBy string `json:"cancelled_by,omitempty"`
	// Confinement is how the run was confined (what it could write, the
	// network, …, or why its writes were not confined); nil for a run that
	// never got as far, and in records written before confinement existed.
	Confinement *runinfo.Confinement `json:"confinement,omitempty"`
	// ProtectedChanged lists what changed during the run among the files
	// that steer agents and tools in the project (ProjectProtectedPaths):
	// "created .claude/settings.json", "changed .git/config". Not
	// necessarily the run's doing (anything may write there meanwhile),
	// but always reported loudly. Empty when nothing changed.
	ProtectedChanged []string `json:"protected_changed,omitempty"`
	// TimeoutMS is the run's timeout in milliseconds.
	TimeoutMS int64 `json:"timeout_ms"`
	// StartedAt is when the run was started.
	StartedAt time.Time `json:"started_at"`
	// EndedAt is when it reached its final state; zero while running.
	EndedAt time.Time `json:"ended_at,omitzero"`
	// StdoutBytes and StderrBytes count every byte the process wrote,
	// retained or not.
	StdoutBytes int64 `json:"stdout_bytes"`
	// StderrBytes counts every byte written to stderr.
	StderrBytes int64 `json:"stderr_bytes"`
	// StdoutDropped and StderrDropped say that the oldest bytes were no
	// longer retained (the per-stream cap was exceeded).
	StdoutDropped bool `json:"stdout_dropped,omitempty"`
	// StderrDropped is StdoutDropped for stderr.
	StderrDropped bool `json:"stderr_dropped,omitempty"`
	// Changes summarises what the run changed under Dir; nil until it ends
	// and its summary is made (ChangesPending), and for runs that did not
	// start or ran without a change tracker.
	Changes *ChangeSummary `json:"changes,omitempty"`
	// ChangesPending is true from the run's end until its change summary is
	// in Changes: the exit is known and reported at once, the summary a
	// little later.
	ChangesPending bool `json:"changes_pending,omitempty"`
	// StdoutPath and StderrPath are the spill files; each is a ring of
	// SpillCap bytes (offset o at position o % SpillCap). They hold the
	// whole retained output once the run ended, unless the record holds it
	// (StdoutInline); read it with ReadRecorded.
	StdoutPath string `json:"stdout_path"`
	// StderrPath is StdoutPath for stderr.
	StderrPath string `json:"stderr_path"`
	// SpillCap is the ring size of the spill files.
	SpillCap int64 `json:"spill_cap"`
	// StdoutInline is, in the final record of a run whose stdout was at
	// most 4 KiB (inlineOutputMax), that whole stdout: no spill file was
	// made for it. Nil otherwise, and when there was no output.
	StdoutInline []byte `json:"stdout_inline,omitempty"`
	// StderrInline is StdoutInline for stderr.
	StderrInline []byte `json:"stderr_inline,omitempty"`
	// OutputRemoved is set when the spill files were removed to keep the
	// runs under their disk cap (PruneRecords); the record stays.
	OutputRemoved bool `json:"output_removed,omitempty"`
}

// runsDir returns the directory holding the run records of stateDir.
func runsDir(stateDir string) string { return filepath.Join(stateDir, "runs") }

// recordPath returns the record file of run id.
func recordPath(stateDir, id string) string {
	return filepath.Join(runsDir(stateDir), id+".json")
}

// outputPath returns the spill file of stream s of run id. The files sit
// beside the records rather than in a directory per run: a directory is one
// more inode to allocate, which on ext4 under load costs hundreds of
// microseconds of kernel time per run.
func outputPath(stateDir, id string, s Stream) string {
	return filepath.Join(runsDir(stateDir), id+"."+string(s))
}

// cancelPath returns the cancel-request file of run id.
func cancelPath(stateDir, id string) string {
	return filepath.Join(runsDir(stateDir), id+".cancel")
}

// writeFileAtomic replaces path with data so that a reader sees the old or
// the new content, never a mix, even if this process dies midway
// (atomicfile: a temporary file in the same directory, fsync, rename, then
// on Unix a directory fsync so the rename survives a crash; on Windows the
// rename retries briefly while another program holds the file). With
// durable false the fsyncs are skipped: readers still never see a torn
// file, but a power failure may lose the write.
func writeFileAtomic(path string, data []byte, durable bool) error {
	tmp, err := atomicfile.WriteTemp(path, data, 0o600, durable)
	if err != nil {
		return err
	}
	return atomicfile.Commit(tmp, path, durable)
}

// encodeRecord appends a record file's content to buf: the record as one
// line of JSON (what every reader, encoding/json, needs; jq shows it
// indented) and a newline. The writers reuse buf across records.
func encodeRecord(buf *bytes.Buffer, rec Record) error {
	if err := json.NewEncoder(buf).Encode(rec); err != nil {
		return fmt.Errorf("encoding run record %s: %w", rec.ID, err)
	}
	return nil
}

// writeRecord persists rec atomically and durably.
func writeRecord(stateDir string, rec Record) error {
	var buf bytes.Buffer
	if err := encodeRecord(&buf, rec); err != nil {
		return err
	}
	return writeFileAtomic(recordPath(stateDir, rec.ID), buf.Bytes(), true)
}

// writeRecords persists several records atomically and durably, with one
// directory fsync for all of them. errs[i] is the error of recs[i].
func writeRecords(stateDir string, recs []Record) (errs []error) {
	errs = make([]error, len(recs))
	wrote := false
	var buf bytes.Buffer
	for i, rec := range recs {
		buf.Reset()
		err := encodeRecord(&buf, rec)
		if err == nil {
			// The directory is synced once, below, for every record.
			var tmp string
			path := recordPath(stateDir, rec.ID)
			if tmp, err = atomicfile.WriteTemp(path, buf.Bytes(), 0o600, true); err == nil {
				err = atomicfile.Commit(tmp, path, false)
			}
		}
		errs[i] = err
		wrote = wrote || err == nil
	}
	if wrote {
		if err := atomicfile.SyncDir(runsDir(stateDir)); err != nil {
			for i := range errs {
				if errs[i] == nil {
					errs[i] = fmt.Errorf("writing run records: syncing directory %s: %w", runsDir(stateDir), err)
				}
			}
		}
	}
	return errs
}

// readRecord reads one record file (atomicfile.ReadFile: on Windows it
// retries briefly while the file is being replaced).
func readRecord(path string, brief bool) (Record, error) {
	data, err := atomicfile.ReadFile(path)
	if err != nil {
		return Record{}, err
	}
	var rec Record
	if err := unmarshalRecord(data, &rec, brief); err != nil {
		return Record{}, fmt.Errorf("run record %s is not valid JSON: %w", path, err)
	}
	if rec.ID == "" || rec.State == "" {
		return Record{}, fmt.Errorf("run record %s lacks an id or a state", path)
	}
	return rec, nil
}

// ListRecords returns every readable run record under stateDir — the
// record files and the journals (journal.go), the record with more progress
// where a run is in both — oldest start first (ties by id). A missing runs
// directory yields none. Corrupt or unreadable files and temporary files
// are skipped without error, so one bad file never hides the others.
func ListRecords(stateDir string) ([]Record, error) { return listRecords(stateDir, false) }

// ListRecordsWithoutOutput is ListRecords with every record read without
// the output it carries (Record.WithoutInlineOutput): what to list and keep
// many records with. The output is not even decoded: the Processes
// window's 10,000-run benchmark, each run having printed 1,234 bytes,
// peaked at 116 MiB loading so, 153 MiB with the output decoded (104 MiB
// when records carried no output). Never rewrite a record read so: it
// would lose that output.
func ListRecordsWithoutOutput(stateDir string) ([]Record, error) { return listRecords(stateDir, true) }

// listRecords is ListRecords, brief when the records are read without
// their output.
func listRecords(stateDir string, brief bool) ([]Record, error) {
	entries, err := os.ReadDir(runsDir(stateDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing run records in %s: %w", runsDir(stateDir), err)
	}
	byID := map[string]Record{}
	// Journals first (oldest first, as their names sort), then the record
	// files, which win a tie (journal.go).
	for _, e := range entries {
		if name := e.Name(); !e.IsDir() && IsJournalFile(name) {
			jrecs, _ := readJournal(stateDir, name, brief)
			for _, rec := range jrecs {
				if old, ok := byID[rec.ID]; !ok || NewerRecord(old, rec) {
					byID[rec.ID] = rec
				}
			}
		}
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") {
			continue
		}
		rec, err := readRecord(filepath.Join(runsDir(stateDir), name), brief)
		if err != nil || rec.ID+".json" != name {
			continue
		}
		if old, ok := byID[rec.ID]; !ok || NewerRecord(old, rec) {
			byID[rec.ID] = rec
		}
	}
	recs := make([]Record, 0, len(byID))
	for _, rec := range byID {
		recs = append(recs, rec)
	}
	sort.Slice(recs, func(i, j int) bool {
		if !recs[i].StartedAt.Equal(recs[j].StartedAt) {
			return recs[i].StartedAt.Before(recs[j].StartedAt)
		}
		return recs[i].ID < recs[j].ID
	})
	return recs, nil
}

// MarkLost rewrites as lost every record left running whose host process is
// gone: its pid is not alive, or (where HostStart is recorded) the pid now
// belongs to a different process; a finished record of such a host still
// waiting for its change summary gets an incomplete one saying so. It
// returns how many records it changed. First it ends what such hosts' runs
// left in their cgroups (Linux, where per-run cgroups are made:
// docs/lifetime.md).
// Call it at start-up, before showing runs. Records of live hosts are left
// alone, including this process's own.
func MarkLost(stateDir string) (int, error) {
	endStaleTrees()
	// The journals of hosts that are gone become record files first.
	n, err := compactOrphans(stateDir, markLost)
	recs, lerr := ListRecords(stateDir)
	if lerr != nil {
		return n, errors.Join(err, lerr)
	}
	errs := []error{err}
	for _, rec := range recs {
		if (rec.State != StateRunning && !rec.ChangesPending) || hostAlive(rec.HostPID, rec.HostStart) {
			continue
		}
		markLost(&rec)
		if err := writeRecord(stateDir, rec); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// markLost makes the record of a run whose host is gone final: lost when
// it was running, with an incomplete change summary when one was pending.
// It reports whether it changed anything.
func markLost(rec *Record) bool {
	if rec.State != StateRunning && !rec.ChangesPending {
		return false
	}
	if rec.ChangesPending {
		rec.ChangesPending = false
		rec.Changes = changes.Unknown(fmt.Sprintf("the %s host (pid %d) ended before the change summary was made", rec.HostKind, rec.HostPID))
	}
	if rec.State == StateRunning {
		rec.State = StateLost
		rec.EndedAt = time.Now().UTC()
		rec.Error = fmt.Sprintf("the %s host (pid %d) ended before recording how the run ended; its process tree was ended with the host", rec.HostKind, rec.HostPID)
	}
	return true
}

// RequestCancel asks the process hosting run id to cancel it, from any
// process: it writes StateDir/runs/<id>.cancel, which the hosting Executor
// notices within about 250 ms. It fails when no record of the run exists;
// a run already finished is left alone (nil error).
func RequestCancel(stateDir, id string) error {
	if err := runinfo.CheckID(id); err != nil {
		return err
	}
	rec, err := ReadRecord(stateDir, id)
	if err != nil {
		return fmt.Errorf("cancelling run %s: no readable run record (%v); check the id with `agentgate ps`", id, err)
	}
	if rec.State.Final() {
		return nil
	}
	return writeFileAtomic(cancelPath(stateDir, id), []byte(time.Now().UTC().Format(time.RFC3339Nano)+"\n"), false)
}

// Retention says which finished runs PruneRecords keeps: at least the
// Keep newest, and at least every run that started within Span, as long as
// all the records and their retained output take no more than MaxTotal.
type Retention struct {
	// Keep is how many of the newest finished runs are kept whatever their
	// age.
	Keep int
	// Span is how far back every run is kept (by start time).
	Span time.Duration
	// MaxTotal is the disk cap of the runs directory (records and output
	// files); ≤ 0 means none.
	MaxTotal int64
}

// Pruned says what PruneRecords removed.
type Pruned struct {
	// Runs counts the finished runs removed (record and output).
	Runs int
	// Outputs counts the runs whose retained output alone was removed.
	Outputs int
	// CapCut counts the runs, among those, that started within the span:
	// the cap left no choice (a history_cap for the person).
	CapCut int
	// Through is the newest start time among CapCut's runs.
	Through time.Time
}

// PruneRecords removes finished runs — record, output files, cancel request
// — keeping those Retention asks for. Running runs are never touched.
// First, runs older than the span beyond the Keep newest go. Then, while
// the runs directory takes more than MaxTotal, the retained output of the
// oldest finished runs goes first (their records stay, marked
// OutputRemoved), then the oldest finished runs themselves; what of this
// started within the span is counted in Pruned.CapCut. So a flood of runs
// cannot push the history of the span out by number, only by size, and
// that is reported.
func PruneRecords(stateDir string, r Retention) (Pruned, error) {
	var res Pruned
	recs, err := ListRecords(stateDir)
	if err != nil {
		return res, err
	}
	var finished []Record
	for _, rec := range recs {
		// A record still only in a live host's journal is young, and would
		// come back from there: it is pruned once it is a file of its own.
		if _, err := os.Lstat(recordPath(stateDir, rec.ID)); rec.State.Final() && err == nil {
			finished = append(finished, rec)
		}
	}
	horizon := time.Now().Add(-r.Span)
	var errs []error
	kept := finished[:0]
	for i, rec := range finished {
		if len(finished)-i > max(r.Keep, 0) && rec.StartedAt.Before(horizon) {
			errs = append(errs, removeRun(stateDir, rec.ID))
			res.Runs++
			continue
		}
		kept = append(kept, rec)
	}
	if r.MaxTotal <= 0 {
		return res, errors.Join(errs...)
	}
	total := dirSize(runsDir(stateDir))
	capCut := func(rec Record) {
		if !rec.StartedAt.Before(horizon) {
			res.CapCut++
			res.Through = rec.StartedAt
		}
	}
	for i := 0; i < len(kept) && total > r.MaxTotal; i++ {
		rec := &kept[i]
		if rec.OutputRemoved {
			continue
		}
		freed := fileSize(outputPath(stateDir, rec.ID, Stdout)) + fileSize(outputPath(stateDir, rec.ID, Stderr))
		if freed == 0 {
			continue
		}
		rec.OutputRemoved = true
		if err := writeRecord(stateDir, *rec); err != nil {
			errs = append(errs, err)
			continue
		}
		for _, s := range []Stream{Stdout, Stderr} {
			if err := os.Remove(outputPath(stateDir, rec.ID, s)); err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err)
			}
		}
		total -= freed
		res.Outputs++
		capCut(*rec)
	}
	for _, rec := range kept {
		if total <= r.MaxTotal {
			break
		}
		total -= fileSize(recordPath(stateDir, rec.ID))
		errs = append(errs, removeRun(stateDir, rec.ID))
		res.Runs++
		if !rec.OutputRemoved {
			capCut(rec)
		}
	}
	return res, errors.Join(errs...)
}

// fileSize is the size of the file at path, 0 if it cannot be read.
func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// dirSize is the size of the regular files in dir and its subdirectories.
func dirSize(dir string) int64 {
	var total int64
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				total += fi.Size()
			}
		}
		return nil
	})
	return total
}

// removeRun removes a run's record, cancel request and output files, and
// the output directory runs/<id>/ of records written by earlier versions.
// The paths are derived from the id, never taken from the record. The
// record goes first, so a reader never sees a record without files.
func removeRun(stateDir, id string) error {
	var errs []error
	for _, p := range []string{recordPath(stateDir, id), cancelPath(stateDir, id),
		outputPath(stateDir, id, Stdout), outputPath(stateDir, id, Stderr)} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if err := os.RemoveAll(filepath.Join(runsDir(stateDir), id)); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// ReadRecorded reads the retained output of a finished run, given its
// record: from the record itself (StdoutInline), from its spill file, or,
// for a small stream of a record held without its output, from the run's
// record read again. It is how the Processes window shows runs hosted by
// other processes. For a run still running it returns what its host has
// spilled so far, which may be nothing; ask the hosting Executor's Run.Read
// for live output.
func ReadRecorded(rec Record, s Stream, cursor int64, maxBytes int) (Chunk, error) {
	path, total, inline := rec.StdoutPath, rec.StdoutBytes, rec.StdoutInline
	if s == Stderr {
		path, total, inline = rec.StderrPath, rec.StderrBytes, rec.StderrInline
	} else if s != Stdout {
		return Chunk{}, fmt.Errorf("unknown stream %q: use %q or %q", s, Stdout, Stderr)
	}
	if cursor < 0 {
		return Chunk{}, fmt.Errorf("cursor %d is negative; start at 0", cursor)
	}
	if total == 0 || rec.SpillCap <= 0 {
		return Chunk{Next: cursor, EOF: rec.State.Final()}, nil
	}
	if inline == nil && !rec.OutputRemoved {
		c, err := readFinished(path, rec.SpillCap, total, cursor, maxBytes)
		if err == nil {
			c.EOF = c.EOF && rec.State.Final()
			return c, nil
		}
		// No spill file for a small finished stream: a record held without
		// its output (WithoutInlineOutput); the run's record has it.
		if !errors.Is(err, os.ErrNotExist) || total > inlineOutputMax || !rec.State.Final() {
			return Chunk{}, err
		}
		if inline = inlineOf(path, rec.ID, s); inline == nil {
			return Chunk{}, err
		}
	}
	if int64(len(inline)) == total {
		return readInline(inline, cursor, maxBytes), nil
	}
	// The spill files were removed (PruneRecords).
	return Chunk{Next: max(cursor, total), Dropped: cursor < total, EOF: true}, nil
}

// inlineOf reads stream s of run id from the run's record again, given the
// path of its spill file (outputPath), or nil.
func inlineOf(path, id string, s Stream) []byte {
	stateDir := filepath.Dir(filepath.Dir(path))
	if path != outputPath(stateDir, id, s) {
		return nil
	}
	full, err := ReadRecord(stateDir, id)
	if err != nil {
		return nil
	}
	if s == Stderr {
		return full.StderrInline
	}
	return full.StdoutInline
}

// unmarshalRecord decodes a record's JSON into rec; brief skips the output
// it carries (stdout_inline, stderr_inline) without decoding it.
func unmarshalRecord(data []byte, rec *Record, brief bool) error {
	if !brief {
		return json.Unmarshal(data, rec)
	}
	// The outer fields, named like Record's, win over the embedded ones.
	var b struct {
		*Record
		StdoutInline skippedJSON `json:"stdout_inline"`
		StderrInline skippedJSON `json:"stderr_inline"`
	}
	b.Record = rec
	return json.Unmarshal(data, &b)
}

// skippedJSON is a JSON value that is checked and not decoded.
type skippedJSON struct{}

// UnmarshalJSON does nothing: the decoder has checked the value already.
func (*skippedJSON) UnmarshalJSON([]byte) error { return nil }

// WithoutInlineOutput returns rec without the output it carries
// (StdoutInline, StderrInline): what to keep of many records at once, as
// the Processes window does — 10,000 runs that printed a little each would
// otherwise hold up to 80 MiB of it. ReadRecorded reads such a record's
// output from the run's record again.
func (rec Record) WithoutInlineOutput() Record {
	rec.StdoutInline, rec.StderrInline = nil, nil
	return rec
}

// readInline reads a finished stream held whole in its record, from cursor
// (>= 0), at most maxBytes (64 KiB when <= 0).
func readInline(data []byte, cursor int64, maxBytes int) Chunk {
	total := int64(len(data))
	c, _ := readEnded(total, total, cursor, maxBytes, func(from, to int64) ([]byte, error) {
		return append([]byte(nil), data[from:to]...), nil
	})
	return c
}
