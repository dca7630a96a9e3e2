package changes

import (
	"errors"
	"io/fs"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"time"
)

// dirNode is what the index knows of one directory's content.
type dirNode struct {
	// entries maps the names in the directory to their state. Replaced
	// (never mutated) when the directory is read again in a walk.
	entries map[string]*entry
	// skipped says why the directory's content is not indexed ("" when it
	// is): it could not be read, or the index was full.
	skipped string
	// wd is the directory's inotify watch, or -1.
	wd int32
}

// index is a project's entries, one node per directory, keyed by the
// directory's slash-separated path relative to the root ("" is the root).
type index struct {
	// dirs holds every indexed directory.
	dirs map[string]*dirNode
	// count is the number of entries in all nodes.
	count int
}

// newIndex returns an index holding only the (empty) root.
func newIndex() index {
	return index{dirs: map[string]*dirNode{"": {entries: map[string]*entry{}, wd: -1}}}
}

// lookup returns the entry at rel ("" is not an entry).
func (x *index) lookup(rel string) (*entry, bool) {
	n := x.dirs[parentOf(rel)]
	if n == nil {
		return nil, false
	}
	e, ok := n.entries[path.Base(rel)]
	return e, ok
}

// parentOf returns rel's directory ("" for a top-level name).
func parentOf(rel string) string {
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		return rel[:i]
	}
	return ""
}

// join joins a directory's rel path and a name.
func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// under reports whether rel is dir or inside it ("" holds everything).
func under(rel, dir string) bool {
	return dir == "" || rel == dir || strings.HasPrefix(rel, dir+"/")
}

// change is one journaled update of the index: the path's state before a
// fold changed it.
type change struct {
	// at is when the fold applied it (Unix ns); a change made at time t is
	// folded at or after t.
	at int64
	// path is the entry's rel path.
	path string
	// old is the state before; had is false when there was no entry.
	old entry
	// had says old is valid.
	had bool
	// event is when the last filesystem event for the path was read before
	// the fold (Unix ns), 0 when a walk found the change.
	event int64
}

// scanJob asks a worker to read directory rel and stat its entries.
type scanJob struct {
	// rel is the directory.
	rel string
	// w watches it first; nil when walking.
	w *watcher
	// old is the directory's entries before (nil for a new directory): a
	// file whose stat is unchanged keeps its hash.
	old map[string]*entry
	// lazy leaves files without a reusable hash unhashed (the first walk:
	// they are hashed in the background, see hashInBackground).
	lazy bool
}

// scanResult is a read directory.
type scanResult struct {
	// rel is the directory.
	rel string
	// entries are its entries, hashed where needed; nil when err is set.
	entries map[string]*entry
	// err says why the directory could not be read.
	err error
	// wd is the watch added before reading (-1 when not watched).
	wd int32
	// watchErr is set when the watch could not be added.
	watchErr error
}

// statJob asks a worker to look at one path again.
type statJob struct {
	// rel is the path.
	rel string
	// old is its entry before, nil when there was none.
	old *entry
}

// statResult is a looked-at path.
type statResult struct {
	// rel is the path.
	rel string
	// e is its state when exists.
	e entry
	// exists is false when nothing is there any more.
	exists bool
	// err is set when it could not be looked at (other than not existing).
	err error
}

// workers is how many goroutines read directories and hash files at once:
// the work is mostly system calls answered from the kernel's caches, so
// twice the processors keeps them busy.
func workers() int { return max(4, 2*runtime.GOMAXPROCS(0)) }

// scanDir reads one directory (adding a watch first when watching) and
// stats and, where its stat changed or it is racy, hashes each entry.
func (p *project) scanDir(j scanJob) scanResult {
	res := scanResult{rel: j.rel, wd: -1}
	abs := p.abs(j.rel)
	if j.w != nil {
		// The watch goes first: a change after it is an event, a change
		// before it is seen by the read below.
		res.wd, res.watchErr = j.w.add(p, j.rel, abs)
	}
	recordedAt := time.Now().UnixNano()
	raw, err := readDirEntries(abs)
	if err != nil {
		res.err = err
		return res
	}
	res.entries = make(map[string]*entry, len(raw))
	for i := range raw {
		r := &raw[i]
		if r.err != nil {
			// Listed but not stattable (a directory readable but not
			// searchable): its content is not indexed; what was known
			// of it stays.
			res.entries, res.err = nil, r.err
			return res
		}
		e := r.e
		p.fillHash(join(j.rel, r.name), &e, j.old[r.name], recordedAt, j.lazy)
		res.entries[r.name] = &e
	}
	return res
}

// statPath looks at one path again.
func (p *project) statPath(j statJob) statResult {
	res := statResult{rel: j.rel}
	recordedAt := time.Now().UnixNano()
	e, err := lstatEntry(p.abs(j.rel))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return res
	}
	if err != nil {
		res.err = err
		return res
	}
	p.fillHash(j.rel, &e, j.old, recordedAt, false)
	res.e, res.exists = e, true
	return res
}

// fillHash gives e (just stat'ed at recordedAt) its content hash: the old
// entry's when every stat field is the same and the old entry was not racy,
// a fresh one otherwise (none when lazy); and sets e.racy.
func (p *project) fillHash(rel string, e *entry, old *entry, recordedAt int64, lazy bool) {
	e.racy = e.ctime > recordedAt-int64(granularity) || e.mtime > recordedAt-int64(granularity)
	if e.isDir() {
		return
	}
	if old != nil && old.sameStat(e) && !old.racy {
		e.hash, e.hashed = old.hash, old.hashed
		return
	}
	if lazy {
		return
	}
	hashEntry(p.abs(rel), e, p.k.lim.MaxHashSize)
}

// abs returns the absolute path of rel.
func (p *project) abs(rel string) string {
	if rel == "" {
		return p.root
	}
	return filepath.Join(p.root, filepath.FromSlash(rel))
}

// skipContent reports whether directory rel is listed but its content not
// indexed: every directory named .git (a repository's own bookkeeping),
// and agentgate's state directory should it sit inside the project.
func (p *project) skipContent(rel string) bool {
	if path.Base(rel) == ".git" {
		return true
	}
	for _, s := range p.k.skip {
		if s == p.abs(rel) {
			return true
		}
	}
	return false
}

// syncPaths brings the index up to date with the paths that had events
// (path → time of its last event), then walks every directory that is new
// or replaced. Called with foldMu held.
func (p *project) syncPaths(dirty map[string]int64) {
	paths := make([]string, 0, len(dirty))
	for rel := range dirty {
		paths = append(paths, rel)
	}
	sort.Strings(paths)
	jobs := make([]statJob, 0, len(paths))
	p.mu.Lock()
	for _, rel := range paths {
		if rel == "" {
			continue // the root itself: its entries have their own events
		}
		old, _ := p.idx.lookup(rel)
		if old != nil {
			c := *old
			old = &c
		}
		jobs = append(jobs, statJob{rel: rel, old: old})
	}
	p.mu.Unlock()
	results := parallel(jobs, p.statPath)
	now := time.Now().UnixNano()
	var newDirs []string
	p.mu.Lock()
	for _, r := range results {
		if dir, ok := p.applyStat(r, dirty[r.rel], now); ok {
			newDirs = append(newDirs, dir)
		}
	}
	p.mu.Unlock()
	if len(newDirs) > 0 {
		p.walk(newDirs, dirty, false)
	}
}

// applyStat applies one looked-at path; mu is held. It returns a directory
// to walk when the path is a directory the index does not hold.
func (p *project) applyStat(r statResult, event, now int64) (string, bool) {
	parent := p.idx.dirs[parentOf(r.rel)]
	if parent == nil || parent.skipped != "" {
		return "", false // inside a directory that is new (walked whole) or not indexed
	}
	name := path.Base(r.rel)
	old, had := parent.entries[name]
	if r.err != nil {
		return "", false // unreadable now: keep what we knew
	}
	if !r.exists {
		if had {
			p.removeEntry(parent, name, r.rel, event, now)
		}
		return "", false
	}
	cur := r.e
	if had && old.isDir() && (!cur.isDir() || old.ino != cur.ino) {
		// A directory replaced by something else (or another directory):
		// what was inside is gone.
		p.removeEntry(parent, name, r.rel, event, now)
		had = false
	}
	if had && old.sameStat(&cur) && old.hash == cur.hash && old.hashed == cur.hashed {
		old.racy = cur.racy
		return "", false
	}
	if !had && p.idx.count >= p.k.lim.MaxEntries {
		p.markFull(parent, parentOf(r.rel))
		return "", false
	}
	p.journal(r.rel, old, had, event, now)
	e := cur
	parent.entries[name] = &e
	if !had {
		p.idx.count++
	}
	if cur.isDir() && p.idx.dirs[r.rel] == nil && !p.skipContent(r.rel) {
		return r.rel, true
	}
	return "", false
}

// removeEntry removes name from parent (journaled as deleted), and with a
// directory everything inside it, watches included; mu is held.
func (p *project) removeEntry(parent *dirNode, name, rel string, event, now int64) {
	old := parent.entries[name]
	if old.isDir() {
		p.removeTree(rel, event, now)
	}
	p.journal(rel, old, true, event, now)
	delete(parent.entries, name)
	p.idx.count--
}

// removeTree removes directory rel's node and every node below it,
// journaling each entry as deleted; mu is held.
func (p *project) removeTree(rel string, event, now int64) {
	n := p.idx.dirs[rel]
	if n == nil {
		return
	}
	for name, e := range n.entries {
		child := join(rel, name)
		if e.isDir() {
			p.removeTree(child, event, now)
		}
		p.journal(child, e, true, event, now)
		p.idx.count--
	}
	if n.wd >= 0 && p.watch != nil {
		p.watch.remove(n.wd, p, rel)
	}
	delete(p.skipped, rel)
	delete(p.idx.dirs, rel)
}

// walk reads the given directories and everything below them in parallel,
// reconciling the index with what it finds (a full walk passes [""]).
// Entries whose stat is unchanged keep their hashes; with lazy, others are
// left for hashInBackground (p.toHash). Called with foldMu held; dirty (may
// be nil) gives paths' last event times for the journal.
func (p *project) walk(dirs []string, dirty map[string]int64, lazy bool) {
	in := make(chan scanJob)
	out := make(chan scanResult)
	n := workers()
	for range n {
		go func() {
			for j := range in {
				out <- p.scanDir(j)
			}
		}()
	}
	queue := make([]scanJob, 0, len(dirs))
	sort.Strings(dirs)
	p.mu.Lock()
	w := p.watch
	kept := ""
	for i, d := range dirs {
		if i > 0 && under(d, kept) {
			continue // walked with its ancestor
		}
		kept = d
		var old map[string]*entry
		if node := p.idx.dirs[d]; node != nil {
			old = node.entries
		}
		queue = append(queue, scanJob{rel: d, w: w, old: old, lazy: lazy})
	}
	p.mu.Unlock()
	inflight := 0
	for len(queue) > 0 || inflight > 0 {
		var send chan scanJob
		var next scanJob
		if len(queue) > 0 {
			send, next = in, queue[len(queue)-1]
		}
		select {
		case send <- next:
			queue = queue[:len(queue)-1]
			inflight++
		case r := <-out:
			inflight--
			p.mu.Lock()
			queue = p.applyScan(r, w, dirty, time.Now().UnixNano(), lazy, queue)
			p.mu.Unlock()
		}
	}
	close(in)
}

// applyScan reconciles directory r.rel with what was read and queues its
// subdirectories; mu is held.
func (p *project) applyScan(r scanResult, w *watcher, dirty map[string]int64, now int64, lazy bool, queue []scanJob) []scanJob {
	if r.watchErr != nil {
		p.stopWatching(r.watchErr)
	}
	if r.wd >= 0 && p.watch == nil {
		w.remove(r.wd, p, r.rel) // watching stopped while this was read
		r.wd = -1
	}
	node := p.idx.dirs[r.rel]
	if node == nil {
		if r.rel != "" {
			// Its entry in the parent must still say "directory", or the
			// directory was removed while it was read.
			if e, ok := p.idx.lookup(r.rel); !ok || !e.isDir() {
				if r.wd >= 0 {
					w.remove(r.wd, p, r.rel)
				}
				return queue
			}
		}
		node = &dirNode{entries: map[string]*entry{}, wd: -1}
		p.idx.dirs[r.rel] = node
	}
	if r.wd >= 0 {
		node.wd = r.wd
	}
	if r.err != nil {
		if r.rel == "" && errors.Is(r.err, fs.ErrNotExist) {
			// The project itself is gone: so is everything in it.
			for name := range node.entries {
				p.removeEntry(node, name, name, dirty[name], now)
			}
			return queue
		}
		node.skipped = describe(r.err)
		p.skipped[r.rel] = node.skipped
		return queue
	}
	if node.skipped != "" {
		node.skipped = ""
		delete(p.skipped, r.rel)
	}
	event := func(name string) int64 { return dirty[join(r.rel, name)] }
	for name := range node.entries {
		if _, ok := r.entries[name]; !ok {
			p.removeEntry(node, name, join(r.rel, name), event(name), now)
		}
	}
	names := make([]string, 0, len(r.entries))
	for name := range r.entries {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		cur := r.entries[name]
		rel := join(r.rel, name)
		old, had := node.entries[name]
		if had && old.isDir() && (!cur.isDir() || old.ino != cur.ino) {
			p.removeEntry(node, name, rel, event(name), now)
			had = false
		}
		switch {
		case had && old.sameStat(cur) && old.hash == cur.hash && old.hashed == cur.hashed:
			old.racy = cur.racy
		case !had && p.idx.count >= p.k.lim.MaxEntries:
			p.markFull(node, r.rel)
			continue
		default:
			p.journal(rel, old, had, event(name), now)
			node.entries[name] = cur
			if !had {
				p.idx.count++
			}
		}
		if e := node.entries[name]; lazy && e.mode.IsRegular() && !e.hashed && e.size <= p.k.lim.MaxHashSize {
			p.toHash = append(p.toHash, rel)
		}
		if cur.isDir() && !p.skipContent(rel) {
			var oldEntries map[string]*entry
			if child := p.idx.dirs[rel]; child != nil {
				oldEntries = child.entries
			}
			queue = append(queue, scanJob{rel: rel, w: p.watch, old: oldEntries, lazy: lazy})
		}
	}
	return queue
}

// markFull notes that directory rel holds entries the full index could not
// take; mu is held.
func (p *project) markFull(node *dirNode, rel string) {
	if node.skipped == "" {
		node.skipped = "over the limit of " + itoa(p.k.lim.MaxEntries) + " entries"
		p.skipped[rel] = node.skipped
	}
}

// journal records that rel is about to change from old (had) ; mu is held.
// Nothing is journaled while the index is first built from nothing: no run
// can be looking at that (Begin waits for it).
func (p *project) journal(rel string, old *entry, had bool, event, now int64) {
	if !p.journaling {
		return
	}
	c := change{at: now, path: rel, had: had, event: event}
	if had {
		c.old = *old
	}
	p.changes = append(p.changes, c)
}

// hashBatch is how many files the background hashing hashes between two
// chances for a fold to run.
const hashBatch = 256

// hashInBackground hashes the files the first walk left unhashed (p.toHash),
// a batch at a time under foldMu, so that folds (and runs' summaries) wait
// at most one batch; then persists the index and closes p.settled. A file whose stat changed since
// the walk is left to its fold.
func (p *project) hashInBackground() {
	defer close(p.settled)
	defer func() {
		// Persist the hashes now rather than at the next save timer.
		p.foldMu.Lock()
		p.save()
		p.foldMu.Unlock()
	}()
	for {
		p.foldMu.Lock()
		p.mu.Lock()
		n := min(hashBatch, len(p.toHash))
		batch := p.toHash[:n:n]
		p.toHash = p.toHash[n:]
		closed := p.closed
		if len(p.toHash) == 0 {
			p.toHash = nil
		}
		jobs := make([]statJob, 0, n)
		for _, rel := range batch {
			if e, ok := p.idx.lookup(rel); ok && !e.hashed {
				c := *e
				jobs = append(jobs, statJob{rel: rel, old: &c})
			}
		}
		p.mu.Unlock()
		if closed || n == 0 {
			p.foldMu.Unlock()
			return
		}
		hashed := parallel(jobs, func(j statJob) entry {
			e := *j.old
			hashEntry(p.abs(j.rel), &e, p.k.lim.MaxHashSize)
			return e
		})
		p.mu.Lock()
		for i, j := range jobs {
			if e, ok := p.idx.lookup(j.rel); ok && hashed[i].hashed && e.sameStat(&hashed[i]) && !e.hashed {
				e.hash, e.hashed = hashed[i].hash, true
				p.changed = true
			}
		}
		p.mu.Unlock()
		p.foldMu.Unlock()
	}
}

// parallel runs f on every job with workers() goroutines and returns the
// results in job order.
func parallel[J, R any](jobs []J, f func(J) R) []R {
	out := make([]R, len(jobs))
	if len(jobs) == 0 {
		return out
	}
	next := make(chan int)
	done := make(chan struct{})
	n := min(workers(), len(jobs))
	for range n {
		go func() {
			for i := range next {
				out[i] = f(jobs[i])
			}
			done <- struct{}{}
		}()
	}
	for i := range jobs {
		next <- i
	}
	close(next)
	for range n {
		<-done
	}
	return out
}

// describe says why a directory could not be read, for a person.
func describe(err error) string {
	switch {
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	case errors.Is(err, fs.ErrNotExist):
		return "removed while it was read"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// itoa formats n with thousands separators, for a person.
func itoa(n int) string {
	s := []byte{}
	d := 0
	if n == 0 {
		return "0"
	}
	for ; n > 0; n /= 10 {
		if d > 0 && d%3 == 0 {
			s = append(s, ',')
		}
		s = append(s, byte('0'+n%10))
		d++
	}
	for i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {
		s[i], s[j] = s[j], s[i]
	}
	return string(s)
}
