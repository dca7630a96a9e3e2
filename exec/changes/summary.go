// Package changes tells what a run changed under its working directory,
// at a cost that follows what changed rather than the size of the project.
//
// A Keeper holds, per project, an index of every entry (path, type and
// permission bits, size, modification and change times, inode, and the
// SHA-256 of small files' content, like git's index). It keeps the index
// current from filesystem events (inotify on Linux) or, where it cannot
// watch, by a parallel stat-only walk that hashes only what changed. Every
// change it folds into the index is journaled with the time it was folded.
// A run's summary is read off that journal: Begin notes when the run
// started, Finish waits until every change made up to the run's end is
// folded (a barrier through the event queue, or a walk) and lists what
// changed since, judging each entry by its change time (ctime), which no
// program can set back. So a run costs nothing at its start and, at its
// end, work in proportion to what changed.
//
// The index is persisted per project in the state directory under a lock
// (gofrs/flock): one Keeper process keeps a project at a time, and the
// hosts (desktop app, `agentgate run`) ask it over a socket (Client) so
// that they share it. See docs/executor.md.
package changes

import (
	"time"

	"github.com/agentgate/agentgate/exec/runinfo"
)

// Summary lists what changed under a run's working directory while it ran;
// it is declared in package runinfo so that the audit log and the hook can
// name it without linking this package.
type Summary = runinfo.ChangeSummary

// Cover says what a Summary covered.
type Cover = runinfo.ChangeCover

// Limits bound a Keeper's work. Zero fields take the defaults.
type Limits struct {
	// MaxEntries is the most entries one project's index holds (default
	// 1,000,000); directories beyond it are not indexed and are named in
	// Cover.Skipped.
	MaxEntries int
	// MaxHashSize is the largest file whose content is hashed (default 4 MiB);
	// larger files are compared by size and times only.
	MaxHashSize int64
	// MaxListed is the most paths kept in each of Created, Modified and
	// Deleted (default 1,000).
	MaxListed int
	// MaxWait bounds how long Finish waits for the index to catch up with
	// the run's end (default 2 minutes: a first walk of a large project);
	// past it the summary is incomplete.
	MaxWait time.Duration
}

// withDefaults fills zero fields with the default limits.
func (l Limits) withDefaults() Limits {
	if l.MaxEntries <= 0 {
		l.MaxEntries = 1_000_000
	}
	if l.MaxHashSize <= 0 {
		l.MaxHashSize = 4 << 20
	}
	if l.MaxListed <= 0 {
		l.MaxListed = 1000
	}
	if l.MaxWait <= 0 {
		l.MaxWait = 2 * time.Minute
	}
	return l
}

// Tracker makes change summaries. Keeper (in this process) and Client (a
// keeper process's) implement it; both are safe for concurrent use.
type Tracker interface {
	// Begin is called just before a run starts in dir, inside the project
	// root (both absolute, symlinks resolved). It returns at once once the
	// project is known to the keeper; the first run in a project never
	// indexed before waits for the first walk (bounded by MaxWait).
	Begin(root, dir string) Mark
	// Settle waits until the project at root is indexed and every file of
	// it hashed, at most Limits.MaxWait; benchmarks call it so that this
	// one-time work does not fall into what they time.
	Settle(root string) error
}

// Mark is one run's pending summary.
type Mark interface {
	// Finish is called once the run's process tree is gone; it returns the
	// summary of what changed under dir since Begin. It may take a while
	// (see Limits.MaxWait), so callers call it off any reply path. It
	// never returns nil; calling it twice returns the first result.
	Finish() *Summary
}
