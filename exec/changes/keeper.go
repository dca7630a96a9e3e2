package changes

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofrs/flock"
)

// Timings of a Keeper.
const (
	// idleFoldDelay is how long after the last event, with no run going,
	// the Keeper folds events into the index (one timer, armed only while
	// events wait).
	idleFoldDelay = time.Second
	// saveDelay is how long after the index changed it is persisted.
	saveDelay = 30 * time.Second
	// lateBegin is how long journaled changes are kept with no run going,
	// so a Begin sent by another process (BeginAt, with the run's start
	// time) still finds the changes made since.
	lateBegin = 10 * time.Second
	// barrierWait bounds one barrier through the event queue; past it the
	// Keeper walks instead.
	barrierWait = 10 * time.Second
)

// Options configure a Keeper.
type Options struct {
	// StateDir is agentgate's state directory: indexes persist in
	// StateDir/changes/. Required.
	StateDir string
	// Limits bound the work; the zero value takes the defaults.
	Limits Limits
	// Skip lists absolute directories whose content is never indexed
	// (agentgate's own state, should it sit inside a project). Every
	// directory named .git is skipped as well.
	Skip []string
	// NoWatch makes the Keeper walk the project after every run instead of
	// keeping it from filesystem events (the behaviour where it cannot
	// watch: macOS, Windows, or too few inotify watches).
	NoWatch bool
}

// Keeper keeps the indexes of the projects runs happen in and makes their
// change summaries (see the package comment). Safe for concurrent use.
type Keeper struct {
	// lim is Options.Limits with defaults.
	lim Limits
	// dir is StateDir/changes.
	dir string
	// skip is Options.Skip, cleaned.
	skip []string
	// watch is the filesystem watcher, nil when walking.
	watch *watcher

	// mu guards projects and closed.
	mu sync.Mutex
	// projects maps project roots to their state.
	projects map[string]*project
	// closed is set by Close.
	closed bool
}

// NewKeeper returns a Keeper persisting under opts.StateDir. It watches
// with inotify on Linux unless opts.NoWatch; elsewhere it walks.
func NewKeeper(opts Options) (*Keeper, error) {
	if opts.StateDir == "" {
		return nil, errors.New("changes: Options.StateDir is empty; give agentgate's state directory")
	}
	k := &Keeper{lim: opts.Limits.withDefaults(), dir: filepath.Join(opts.StateDir, "changes"), projects: map[string]*project{}}
	for _, s := range opts.Skip {
		k.skip = append(k.skip, filepath.Clean(s))
	}
	if err := os.MkdirAll(k.dir, 0o700); err != nil {
		return nil, fmt.Errorf("changes: creating %s: %w", k.dir, err)
	}
	if !opts.NoWatch {
		w, err := newWatcher(filepath.Join(k.dir, "barrier"), k.overflowed)
		if err != nil {
			return nil, err
		}
		k.watch = w // nil where this platform has no watcher
	}
	return k, nil
}

// Gone returns a channel closed when the Keeper's state directory was
// removed (a keeper process then exits); nil when it cannot tell.
func (k *Keeper) Gone() <-chan struct{} {
	if k.watch == nil {
		return nil
	}
	return k.watch.gone
}

// Close stops watching, persists every index it keeps (unless the state
// directory is gone) and releases their locks. Marks not finished yet then
// finish incomplete.
func (k *Keeper) Close() error {
	k.mu.Lock()
	if k.closed {
		k.mu.Unlock()
		return nil
	}
	k.closed = true
	projects := make([]*project, 0, len(k.projects))
	for _, p := range k.projects {
		projects = append(projects, p)
	}
	k.mu.Unlock()
	var errs []error
	for _, p := range projects {
		errs = append(errs, p.close())
	}
	if k.watch != nil {
		k.watch.close()
	}
	return errors.Join(errs...)
}

// Busy reports whether a run is being summarised or events wait to be
// folded: a keeper process does not exit for idleness then.
func (k *Keeper) Busy() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, p := range k.projects {
		p.mu.Lock()
		busy := len(p.marks) > 0 || len(p.dirty) > 0
		p.mu.Unlock()
		select {
		case <-p.settled:
		default:
			busy = true
		}
		if busy {
			return true
		}
	}
	return false
}

// Settle waits until the project at root is indexed and every file of it
// hashed (the first walk hashes in the background), at most Limits.MaxWait;
// benchmarks call it so that this work does not fall into what they time.
func (k *Keeper) Settle(root string) error {
	p, err := k.project(root)
	if err != nil {
		return err
	}
	select {
	case <-p.settled:
		return nil
	case <-time.After(k.lim.MaxWait):
		return fmt.Errorf("the index of %s did not settle within %v", root, k.lim.MaxWait)
	}
}

// Begin implements Tracker: the run starts now.
func (k *Keeper) Begin(root, dir string) Mark { return k.BeginAt(root, dir, time.Now()) }

// BeginAt is Begin for a run that started at t0 (a moment ago, in another
// process). A project seen for the first time is indexed in the background;
// if it was never indexed before (nothing persisted), BeginAt waits for
// that first walk, bounded by Limits.MaxWait, and the window then starts
// when the walk ended.
func (k *Keeper) BeginAt(root, dir string, t0 time.Time) Mark {
	m := &mark{dir: relDir(root, dir), t0: t0.UnixNano()}
	p, err := k.project(root)
	if err != nil {
		m.fail = err.Error()
		return m
	}
	m.p = p
	<-p.loaded
	if !p.hadBase {
		select {
		case <-p.ready:
		case <-time.After(k.lim.MaxWait):
			m.fail = fmt.Sprintf("agentgate had no index of this project before the run and its first walk took longer than %v", k.lim.MaxWait)
		}
		if ready := p.readyAt.Load(); ready > m.t0 {
			m.t0 = ready
		}
	}
	p.mu.Lock()
	p.marks[m] = struct{}{}
	p.mu.Unlock()
	return m
}

// relDir returns dir relative to root, slash-separated ("" for the root).
func relDir(root, dir string) string {
	rel, err := filepath.Rel(root, dir)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return ""
	}
	return filepath.ToSlash(rel)
}

// project returns the state of root, creating it (and starting its first
// walk) when new.
func (k *Keeper) project(root string) (*project, error) {
	root = filepath.Clean(root)
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return nil, errors.New("the change keeper is shutting down")
	}
	if p := k.projects[root]; p != nil {
		return p, nil
	}
	sum := sha256.Sum256([]byte(root))
	key := hex.EncodeToString(sum[:12])
	p := &project{
		k: k, root: root, watch: k.watch,
		file:    filepath.Join(k.dir, key+".index"),
		idx:     newIndex(),
		skipped: map[string]string{},
		dirty:   map[string]int64{},
		marks:   map[*mark]struct{}{},
		loaded:  make(chan struct{}),
		ready:   make(chan struct{}),
		settled: make(chan struct{}),
	}
	lock := flock.New(filepath.Join(k.dir, key+".lock"))
	if ok, err := lock.TryLock(); err == nil && ok {
		p.lock = lock
	}
	k.projects[root] = p
	go p.build()
	return p, nil
}

// overflowed is called by the watcher when the kernel dropped events: every
// project is walked at its next fold.
func (k *Keeper) overflowed() {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, p := range k.projects {
		p.mu.Lock()
		p.overflow = true
		p.mu.Unlock()
	}
}

// project is one project root's index and journal.
type project struct {
	// k is the Keeper.
	k *Keeper
	// root is the absolute project root.
	root string
	// file is where the index persists.
	file string
	// lock is the index's lock, held while this Keeper keeps the project;
	// nil when another process holds it (then nothing is persisted).
	lock *flock.Flock
	// loaded is closed once the persisted index (if any) was read.
	loaded chan struct{}
	// ready is closed once the first walk ended; readyAt says when.
	ready chan struct{}
	// settled is closed once the files the first walk left unhashed are
	// hashed (hashInBackground).
	settled chan struct{}
	// readyAt is when the first walk ended (Unix ns).
	readyAt atomic.Int64

	// foldMu serialises folds: the index has one writer at a time.
	foldMu sync.Mutex
	// lastFold is when the last completed fold began (Unix ns): it holds
	// every change made before that; guarded by foldMu.
	lastFold int64
	// lastWalked says the last fold was a walk rather than events; guarded
	// by foldMu.
	lastWalked bool

	// mu guards the fields below (and the index's content).
	mu sync.Mutex
	// watch is the watcher, nil when walking.
	watch *watcher
	// hadBase says an index existed (persisted) before the first walk.
	hadBase bool
	// idx is the index.
	idx index
	// skipped maps directories whose content is not indexed to why.
	skipped map[string]string
	// changes is the journal, oldest first.
	changes []change
	// journaling is false during the first walk of a never-indexed project.
	journaling bool
	// toHash lists files the first walk left for hashInBackground.
	toHash []string
	// trimmed is the time before which journal records were dropped.
	trimmed int64
	// dirty maps paths with events not folded yet to their last event time.
	dirty map[string]int64
	// overflow says events were lost: the next fold walks everything.
	overflow bool
	// marks are the runs being watched.
	marks map[*mark]struct{}
	// idleTimer folds events when no run is going; nil when not armed.
	idleTimer *time.Timer
	// saveTimer persists the index; nil when not armed.
	saveTimer *time.Timer
	// changed says the index changed since it was last persisted.
	changed bool
	// closed is set by close.
	closed bool
	// watchOff says why the project stopped being watched ("" when it is
	// watched or the Keeper never watches).
	watchOff string
}

// build reads the persisted index, then walks the project once (watching
// every directory as it goes, stat only: files whose hash cannot be reused
// are hashed in the background afterwards, so the first run in a project
// waits for the walk alone).
func (p *project) build() {
	p.foldMu.Lock()
	defer func() {
		p.foldMu.Unlock()
		go p.hashInBackground()
	}()
	if idx, skipped, err := loadIndex(p.file, p.root); err == nil {
		p.mu.Lock()
		p.idx, p.skipped, p.hadBase, p.journaling = idx, skipped, true, true
		p.mu.Unlock()
	}
	close(p.loaded)
	start := time.Now().UnixNano()
	p.walk([]string{""}, nil, true)
	p.mu.Lock()
	p.journaling = true
	p.changed = true
	p.mu.Unlock()
	p.lastFold, p.lastWalked = start, true
	p.readyAt.Store(time.Now().UnixNano())
	close(p.ready)
	p.scheduleSave()
}

// noteEvent records an event for rel read at now; called by the watcher.
func (p *project) noteEvent(rel string, now int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dirty[rel] = now
	p.armIdleFold()
}

// armIdleFold arms the idle fold when events wait and no run is going;
// mu is held.
func (p *project) armIdleFold() {
	if p.idleTimer != nil || p.closed || len(p.marks) > 0 || (len(p.dirty) == 0 && !p.overflow) {
		return
	}
	p.idleTimer = time.AfterFunc(idleFoldDelay, func() {
		p.catchUp(time.Now().UnixNano())
		p.mu.Lock()
		p.idleTimer = nil
		p.trim()
		p.armIdleFold()
		p.mu.Unlock()
	})
}

// stopWatching turns the project to walking after every run, because a
// watch could not be added (the inotify watch limit); mu is held.
func (p *project) stopWatching(err error) {
	if p.watch == nil {
		return
	}
	p.watchOff = err.Error()
	w := p.watch
	p.watch = nil
	for rel, n := range p.idx.dirs {
		if n.wd >= 0 {
			w.remove(n.wd, p, rel)
			n.wd = -1
		}
	}
}

// catchUp folds into the index every change made before requested (Unix
// ns): through the event queue when watching, by a walk otherwise. A fold
// that began after requested already did, so concurrent callers share one.
func (p *project) catchUp(requested int64) {
	p.foldMu.Lock()
	defer p.foldMu.Unlock()
	if p.lastFold >= requested {
		return
	}
	start := time.Now().UnixNano()
	p.mu.Lock()
	w := p.watch
	p.mu.Unlock()
	walk := w == nil
	if !walk && w.barrier(barrierWait) != nil {
		walk = true
	}
	p.mu.Lock()
	dirty := p.dirty
	p.dirty = map[string]int64{}
	if p.overflow {
		walk, p.overflow = true, false
	}
	n := len(p.changes)
	p.mu.Unlock()
	if walk {
		p.walk([]string{""}, dirty, false)
	} else {
		p.syncPaths(dirty)
	}
	p.lastFold, p.lastWalked = start, walk
	p.mu.Lock()
	if len(p.changes) != n || walk {
		p.changed = true
	}
	p.mu.Unlock()
	p.scheduleSave()
}

// scheduleSave arms the save timer when the index changed.
func (p *project) scheduleSave() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.changed || p.saveTimer != nil || p.closed || p.lock == nil {
		return
	}
	p.saveTimer = time.AfterFunc(saveDelay, func() {
		p.foldMu.Lock()
		p.save()
		p.foldMu.Unlock()
		p.mu.Lock()
		p.saveTimer = nil
		p.mu.Unlock()
	})
}

// save persists the index if it changed, this Keeper holds its lock and
// its state directory is still there; foldMu is held.
func (p *project) save() error {
	p.mu.Lock()
	if gone := p.k.Gone(); gone != nil {
		select {
		case <-gone:
			p.changed = false // writing would recreate what was removed
		default:
		}
	}
	if !p.changed || p.lock == nil {
		p.mu.Unlock()
		return nil
	}
	p.changed = false
	p.mu.Unlock()
	// Only folds write the index, and foldMu is held: no lock needed to
	// read it.
	if err := saveIndex(p.file, p.root, &p.idx); err != nil {
		return fmt.Errorf("changes: saving the index of %s: %w", p.root, err)
	}
	return nil
}

// close persists the index, releases its lock and stops the timers.
func (p *project) close() error {
	p.mu.Lock()
	p.closed = true
	for _, t := range []*time.Timer{p.idleTimer, p.saveTimer} {
		if t != nil {
			t.Stop()
		}
	}
	p.mu.Unlock()
	select {
	case <-p.ready:
	default:
		return nil // the first walk is still going: nothing worth saving
	}
	p.foldMu.Lock()
	defer p.foldMu.Unlock()
	err := p.save()
	if p.lock != nil {
		p.lock.Unlock()
	}
	return err
}

// trim drops journal records no run can need: older than every going
// run's start and than lateBegin; mu is held.
func (p *project) trim() {
	keep := time.Now().Add(-lateBegin).UnixNano()
	for m := range p.marks {
		keep = min(keep, m.t0)
	}
	i := sort.Search(len(p.changes), func(i int) bool { return p.changes[i].at >= keep })
	if i > 0 {
		p.changes = append(p.changes[:0:0], p.changes[i:]...)
	}
	p.trimmed = max(p.trimmed, keep)
}

// mark is one run's pending summary in a Keeper.
type mark struct {
	// p is the project; nil when fail is set.
	p *project
	// dir is the run's directory relative to the root.
	dir string
	// t0 is when the run started (Unix ns).
	t0 int64
	// fail says why no summary can be made ("" normally).
	fail string
	// once makes Finish idempotent.
	once sync.Once
	// res is the summary.
	res *Summary
}

// Finish implements Mark.
func (m *mark) Finish() *Summary {
	m.once.Do(func() { m.res = m.finish() })
	return m.res
}

// finish waits until every change up to now is folded and reads the
// summary off the journal.
func (m *mark) finish() *Summary {
	if m.p == nil {
		return Unknown(m.fail)
	}
	p := m.p
	requested := time.Now().UnixNano()
	defer func() {
		p.mu.Lock()
		delete(p.marks, m)
		p.trim()
		p.armIdleFold()
		p.mu.Unlock()
	}()
	if m.fail != "" {
		return Unknown(m.fail)
	}
	select {
	case <-p.ready:
	case <-time.After(p.k.lim.MaxWait):
		return Unknown(fmt.Sprintf("the walk of the project took longer than %v", p.k.lim.MaxWait))
	}
	p.catchUp(requested)
	p.foldMu.Lock()
	walked := p.lastWalked
	p.foldMu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.summarize(m, time.Now().UnixNano(), !walked)
}

// Unknown returns the summary of a run whose changes are not known: it
// lists nothing and is incomplete for reason.
func Unknown(reason string) *Summary {
	return &Summary{Created: []string{}, Modified: []string{}, Deleted: []string{}, Method: method, Incomplete: true, Reason: reason}
}

// summarize reads mark m's summary off the journal: every path folded since
// the run began, judged by its first journaled state (before the run) and
// its state now, and by its change time (a change made before the run but
// folded after it began is not the run's); mu is held.
func (p *project) summarize(m *mark, to int64, watched bool) *Summary {
	lim := p.k.lim
	from := m.t0 - int64(granularity)
	s := Unknown("")
	s.Incomplete = false
	s.Cover = &Cover{From: time.Unix(0, from).UTC(), To: time.Unix(0, to).UTC(), Watched: watched}
	var reasons []string
	if m.t0 < p.trimmed {
		reasons = append(reasons, "the run was announced to the change keeper too late: changes made early in the run may be missing")
	}
	first := map[string]*change{}
	var paths []string
	for i := sort.Search(len(p.changes), func(i int) bool { return p.changes[i].at >= m.t0 }); i < len(p.changes); i++ {
		c := &p.changes[i]
		if c.path == m.dir || !under(c.path, m.dir) {
			continue
		}
		if _, seen := first[c.path]; !seen {
			first[c.path] = c
			paths = append(paths, c.path)
		}
	}
	sort.Strings(paths)
	capped := false
	add := func(list *[]string, rel string, dir bool) {
		if len(*list) >= lim.MaxListed {
			capped = true
			return
		}
		if m.dir != "" {
			rel = rel[len(m.dir)+1:]
		}
		if dir {
			rel += "/"
		}
		*list = append(*list, rel)
	}
	ctimes := map[string]int64{}
	// A directory moved into place keeps its content's change times:
	// what appears inside a directory created in the window was created
	// in it too (parents sort before their content).
	createdDirs := map[string]bool{}
	for _, rel := range paths {
		c := first[rel]
		cur, exists := p.idx.lookup(rel)
		switch {
		case !c.had && exists:
			if cur.ctime >= from || createdDirs[parentOf(rel)] {
				add(&s.Created, rel, cur.isDir())
				if cur.isDir() {
					createdDirs[rel] = true
				}
			}
		case c.had && !exists:
			if p.deletedSince(c, m.t0, from, ctimes) {
				add(&s.Deleted, rel, c.old.isDir())
			}
		case c.had && exists:
			if cur.ctime >= from && differs(&c.old, cur) {
				add(&s.Modified, rel, cur.isDir())
			}
		}
	}
	if capped {
		reasons = append(reasons, fmt.Sprintf("more than %d entries in one list", lim.MaxListed))
	}
	s.Cover.Entries = p.countUnder(m.dir)
	var skipped []string
	for rel := range p.skipped {
		if under(rel, m.dir) {
			skipped = append(skipped, rel)
		}
	}
	if len(skipped) > 0 {
		sort.Strings(skipped)
		reasons = append(reasons, fmt.Sprintf("the content of %d directories is not indexed (cover.skipped)", len(skipped)))
		for _, rel := range skipped[:min(len(skipped), 20)] {
			shown := rel
			if m.dir != "" {
				shown = strings.TrimPrefix(strings.TrimPrefix(rel, m.dir), "/")
			}
			s.Cover.Skipped = append(s.Cover.Skipped, shown+"/ ("+p.skipped[rel]+")")
		}
	}
	if len(reasons) > 0 {
		s.Incomplete, s.Reason = true, strings.Join(reasons, "; ")
	}
	return s
}

// deletedSince reports whether the entry journaled by c went away inside
// the window: not when its last event was read before the run began, nor
// when its nearest remaining directory last changed before the window
// (ctimes caches those directories' change times); mu is held.
func (p *project) deletedSince(c *change, t0, from int64, ctimes map[string]int64) bool {
	if c.event != 0 && c.event < t0 {
		return false
	}
	for dir := parentOf(c.path); ; dir = parentOf(dir) {
		ct, ok := ctimes[dir]
		if !ok {
			e, err := lstatEntry(p.abs(dir))
			ct = -1
			if err == nil && e.isDir() {
				ct = e.ctime
			}
			ctimes[dir] = ct
		}
		if ct >= 0 {
			return ct >= from
		}
		if dir == "" {
			return true // the project itself is gone
		}
	}
}

// countUnder returns how many entries the index holds under dir; mu is held.
func (p *project) countUnder(dir string) int {
	if dir == "" {
		return p.idx.count
	}
	n := 0
	for rel, node := range p.idx.dirs {
		if under(rel, dir) {
			n += len(node.entries)
		}
	}
	return n
}
