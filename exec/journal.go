package exec

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agentgate/agentgate/exec/atomicfile"
	"github.com/agentgate/agentgate/exec/runinfo"
)

// Run record journals. A record is normally a file of its own
// (runs/<id>.json), but creating a file costs an inode, and on ext4 an
// inode allocation in a block group where files were deleted in the last
// minutes scans past every one of them (recently_deleted): a millisecond
// of kernel CPU per record was measured on a machine busy with builds.
// So when runs come fast — the records of a batch are more than one, or
// the executor's journal is already open — the persister appends them to
// its journal instead, runs/<executor id>.journal: one JSON record per
// line, the newest line of a run the one that counts, fsynced once per
// batch. Ten seconds after its last append (journalIdle), when the journal has
// grown past journalCompactAt lines, and in Flush, the journal is
// compacted: every finished record in it is written as its own file, and
// the journal is rewritten with the rest or removed.
//
// Every reader (ListRecords, ReadRecord, the Processes window) reads the
// journals too. A run may then have a record in a journal and a file of
// its own at once; the one with more progress counts (recordRank), the
// file on a tie (compaction, MarkLost and PruneRecords write files, and
// they come later).

// journalSuffix ends a journal's file name.
const journalSuffix = ".journal"

// journalCompactAt is how many lines a journal may grow to before it is
// compacted while runs keep coming.
const journalCompactAt = 4096

// journalPath returns the path of the journal named name (an executor id).
func journalPath(stateDir, name string) string {
	return filepath.Join(runsDir(stateDir), name+journalSuffix)
}

// newJournalName returns a fresh journal name, sortable by time like run
// ids.
func newJournalName() string { return runinfo.NewID() }

// recordRank orders the states of one run's record by progress: running,
// then finished with its change summary pending, then finished, then
// finished with its output removed (PruneRecords). A run's record only
// moves forward.
func recordRank(r Record) int {
	switch {
	case !r.State.Final():
		return 0
	case r.ChangesPending:
		return 1
	case r.OutputRemoved:
		return 3
	}
	return 2
}

// NewerRecord reports whether b, a record of the same run as a, is at
// least as far along (recordRank) and so replaces a; readers that merge
// records from several places (a journal and a record file) use it.
func NewerRecord(a, b Record) bool { return recordRank(b) >= recordRank(a) }

// parseJournal returns the records of a journal's content, the newest line
// of each run (by NewerRecord), skipping lines that do not parse (a line
// being written has no newline yet and is skipped too).
func parseJournal(data []byte, brief bool) map[string]Record {
	out := map[string]Record{}
	for len(data) > 0 {
		line, rest, complete := bytes.Cut(data, []byte("\n"))
		data = rest
		if !complete {
			break
		}
		var rec Record
		if unmarshalRecord(line, &rec, brief) != nil || runinfo.CheckID(rec.ID) != nil || rec.State == "" {
			continue
		}
		if old, ok := out[rec.ID]; !ok || NewerRecord(old, rec) {
			out[rec.ID] = rec
		}
	}
	return out
}

// ReadJournal returns the records in the journal file named name in the
// runs directory (a name ListRecords' directory holds, ending in
// ".journal"); a journal that is gone has none.
func ReadJournal(stateDir, name string) ([]Record, error) { return readJournal(stateDir, name, false) }

// ReadJournalWithoutOutput is ReadJournal with every record read without
// the output it carries (Record.WithoutInlineOutput).
func ReadJournalWithoutOutput(stateDir, name string) ([]Record, error) {
	return readJournal(stateDir, name, true)
}

// readJournal is ReadJournal, brief when the records are read without
// their output.
func readJournal(stateDir, name string, brief bool) ([]Record, error) {
	if !strings.HasSuffix(name, journalSuffix) || name != filepath.Base(name) {
		return nil, fmt.Errorf("%q is not a run record journal", name)
	}
	data, err := atomicfile.ReadFile(filepath.Join(runsDir(stateDir), name))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	recs := parseJournal(data, brief)
	out := make([]Record, 0, len(recs))
	for _, r := range recs {
		out = append(out, r)
	}
	return out, nil
}

// IsJournalFile reports whether name, a file in the runs directory, is a
// run record journal.
func IsJournalFile(name string) bool {
	return strings.HasSuffix(name, journalSuffix) && !strings.HasPrefix(name, ".")
}

// journals returns the names of the journals in the runs directory, oldest
// first.
func journals(stateDir string) []string {
	entries, err := os.ReadDir(runsDir(stateDir))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() && IsJournalFile(e.Name()) {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}

// ReadRecord returns run id's record: its own file, or (more advanced)
// its newest line in a journal.
func ReadRecord(stateDir, id string) (Record, error) {
	if err := runinfo.CheckID(id); err != nil {
		return Record{}, err
	}
	rec, err := readRecord(recordPath(stateDir, id), false)
	found := err == nil
	for _, name := range journals(stateDir) {
		data, jerr := atomicfile.ReadFile(journalPath(stateDir, strings.TrimSuffix(name, journalSuffix)))
		if jerr != nil || !bytes.Contains(data, []byte(`"`+id+`"`)) {
			continue
		}
		if jr, ok := parseJournal(data, false)[id]; ok && (!found || recordRank(jr) > recordRank(rec)) {
			rec, found, err = jr, true, nil
		}
	}
	if !found {
		return Record{}, err
	}
	return rec, nil
}

// journal is an executor's open journal; the persister's goroutine alone
// uses it.
type journal struct {
	// name is the journal's name (journalPath).
	name string
	// f is the open journal, nil until the first append.
	f *os.File
	// lines counts the lines appended.
	lines int
	// recs holds the newest record of every run in the journal.
	recs map[string]Record
}

// appendRecords appends recs to the journal, creating it first, and makes
// them durable (one fsync). errs[i] is recs[i]'s error.
func (j *journal) appendRecords(stateDir string, recs []Record) []error {
	errs := make([]error, len(recs))
	fail := func(err error) []error {
		for i := range errs {
			errs[i] = fmt.Errorf("writing run records to the journal %s: %w", journalPath(stateDir, j.name), err)
		}
		return errs
	}
	var buf bytes.Buffer
	for i, rec := range recs {
		if err := encodeRecord(&buf, rec); err != nil {
			errs[i] = err
		}
	}
	if j.f == nil {
		f, err := atomicfile.OpenAppend(journalPath(stateDir, j.name), 0o600)
		if err != nil {
			return fail(err)
		}
		if err := atomicfile.SyncDir(runsDir(stateDir)); err != nil {
			f.Close()
			return fail(err)
		}
		j.f, j.recs = f, map[string]Record{}
	}
	if _, err := j.f.Write(buf.Bytes()); err != nil {
		return fail(err)
	}
	if err := j.f.Sync(); err != nil {
		return fail(err)
	}
	for i, rec := range recs {
		if errs[i] == nil {
			j.lines++
			j.recs[rec.ID] = rec
		}
	}
	return errs
}

// compact writes every finished record of the journal as its own file and
// rewrites the journal with the others, or removes it when none is left.
// A failure leaves the journal as it was (its records are still read
// there) and is returned.
func (j *journal) compact(stateDir string) error {
	if j.f == nil {
		return nil
	}
	var done, open []Record
	for _, rec := range j.recs {
		if recordRank(rec) >= 2 {
			done = append(done, rec)
		} else {
			open = append(open, rec)
		}
	}
	if err := errors.Join(writeRecords(stateDir, done)...); err != nil {
		return err
	}
	path := journalPath(stateDir, j.name)
	j.f.Close()
	j.f = nil
	if len(open) == 0 {
		j.lines, j.recs = 0, nil
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return atomicfile.SyncDir(runsDir(stateDir))
	}
	var buf bytes.Buffer
	for _, rec := range open {
		if err := encodeRecord(&buf, rec); err != nil {
			return err
		}
	}
	if err := writeFileAtomic(path, buf.Bytes(), true); err != nil {
		return err
	}
	f, err := atomicfile.OpenAppend(path, 0o600)
	if err != nil {
		return err
	}
	j.f, j.lines = f, len(open)
	j.recs = make(map[string]Record, len(open))
	for _, rec := range open {
		j.recs[rec.ID] = rec
	}
	return nil
}

// compactOrphans compacts the journals whose every run's host is gone
// (their executors cannot): each record becomes its own file unless one at
// least as far along exists, then the journal is removed. fix is applied to
// each record first (MarkLost marks it lost). It returns how many records
// fix changed.
func compactOrphans(stateDir string, fix func(*Record) bool) (int, error) {
	n := 0
	var errs []error
	for _, name := range journals(stateDir) {
		recs, err := ReadJournal(stateDir, name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		orphan := len(recs) > 0
		for _, r := range recs {
			if hostAlive(r.HostPID, r.HostStart) {
				orphan = false
				break
			}
		}
		if !orphan {
			continue
		}
		var write []Record
		for _, r := range recs {
			if own, err := readRecord(recordPath(stateDir, r.ID), false); err == nil && NewerRecord(r, own) {
				continue
			}
			if fix(&r) {
				n++
			}
			write = append(write, r)
		}
		if err := errors.Join(writeRecords(stateDir, write)...); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := os.Remove(filepath.Join(runsDir(stateDir), name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return n, errors.Join(errs...)
}
