package changes

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// watchMask is what a directory watch reports: every change to an entry's
// name, content or metadata, and the directory's own removal. Never
// through a symlink, only directories, and no events for names already
// unlinked.
const watchMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_CLOSE_WRITE |
	unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF |
	unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW | unix.IN_EXCL_UNLINK

// watcher is one inotify instance for every project of a Keeper, with one
// watch per indexed directory. It is written by hand over inotify rather
// than with fsnotify because the index needs what fsnotify does not offer:
// watch descriptors that survive a directory's rename without rewriting
// paths, IN_ONLYDIR/IN_DONT_FOLLOW/IN_EXCL_UNLINK, and draining the event
// queue on demand (the barrier).
type watcher struct {
	// f is the inotify descriptor (non-blocking, read through the runtime
	// poller); fd is the same descriptor for inotify_add_watch (f.Fd would
	// turn it blocking).
	f *os.File
	// fd is f's descriptor.
	fd int
	// onOverflow is called when the kernel dropped events.
	onOverflow func()
	// gone is closed when the barrier directory was removed.
	gone chan struct{}

	// mu guards targets, goneClosed and closed.
	mu sync.Mutex
	// targets maps watch descriptors to the directory they watch.
	targets map[int32]watchTarget
	// goneClosed says gone is closed.
	goneClosed bool

	// barrierWD watches the barrier directory, a directory of the Keeper's
	// own whose removal means its state directory is gone (gone).
	barrierWD int32
	// rc reads f through the runtime poller, keeping it open meanwhile.
	rc syscall.RawConn
	// readMu serialises reading the queue (drain), by the reader goroutine
	// or a barrier; buf is the buffer it reads into.
	readMu sync.Mutex
	// buf holds events read; guarded by readMu.
	buf []byte
	// closed is set by close; guarded by mu.
	closed bool
	// done is closed when the reader stopped.
	done chan struct{}
}

// watchTarget is the directory a watch descriptor watches.
type watchTarget struct {
	// p is its project.
	p *project
	// rel is the directory relative to the project root.
	rel string
}

// errWatchLimit says the inotify watch limit is reached.
var errWatchLimit = errors.New("the inotify watch limit (fs.inotify.max_user_watches) is reached")

// newWatcher starts an inotify instance whose barrier lives in
// barrierDir (created); onOverflow is called when events were dropped.
func newWatcher(barrierDir string, onOverflow func()) (*watcher, error) {
	if err := os.MkdirAll(barrierDir, 0o700); err != nil {
		return nil, fmt.Errorf("changes: creating %s: %w", barrierDir, err)
	}
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("changes: inotify: %w (fs.inotify.max_user_instances may be reached)", err)
	}
	bwd, err := unix.InotifyAddWatch(fd, barrierDir, unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_ONLYDIR)
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("changes: watching %s: %w", barrierDir, err)
	}
	w := &watcher{
		f: os.NewFile(uintptr(fd), "inotify"), fd: fd, onOverflow: onOverflow, gone: make(chan struct{}),
		targets: map[int32]watchTarget{}, barrierWD: int32(bwd), buf: make([]byte, 256<<10), done: make(chan struct{}),
	}
	if w.rc, err = w.f.SyscallConn(); err != nil {
		w.f.Close()
		return nil, err
	}
	go w.read()
	return w, nil
}

// add watches directory abs (rel in p). It returns -1 and no error when
// the directory cannot be watched for a reason of its own (unreadable,
// gone: reading it fails too), and errWatchLimit when no more watches can
// be had.
func (w *watcher) add(p *project, rel, abs string) (int32, error) {
	wd, err := unix.InotifyAddWatch(w.fd, abs, watchMask)
	if errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.ENOMEM) {
		return -1, errWatchLimit
	}
	if err != nil {
		return -1, nil
	}
	w.mu.Lock()
	w.targets[int32(wd)] = watchTarget{p: p, rel: rel}
	w.mu.Unlock()
	return int32(wd), nil
}

// remove drops watch wd if it still watches rel in p (a directory moved
// elsewhere in the tree keeps its descriptor, now for its new path).
func (w *watcher) remove(wd int32, p *project, rel string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if t, ok := w.targets[wd]; ok && t.p == p && t.rel == rel {
		delete(w.targets, wd)
		unix.InotifyRmWatch(w.fd, uint32(wd))
	}
}

// barrier returns once every event queued before it was called has been
// read and handed to its project. The kernel queues an event in the very
// system call that makes the change, so once a run's processes are gone
// every event of theirs is queued: reading the queue until it is empty,
// here and now (drain), is the barrier — no round trip through another
// goroutine.
func (w *watcher) barrier(time.Duration) error {
	// Control holds the descriptor open (Close waits) while it drains.
	if err := w.rc.Control(func(fd uintptr) { w.drain(int(fd)) }); err != nil {
		return errors.New("the watcher stopped")
	}
	return nil
}

// read hands events to their projects until the descriptor is closed: it
// waits (in the runtime poller) until the queue has events and drains it.
func (w *watcher) read() {
	defer close(w.done)
	w.rc.Read(func(fd uintptr) bool {
		w.drain(int(fd))
		return w.isClosed()
	})
}

// drain reads and handles every event queued on fd (the inotify
// descriptor, held open by the caller), until the queue is empty.
func (w *watcher) drain(fd int) {
	w.readMu.Lock()
	defer w.readMu.Unlock()
	for {
		n, err := unix.Read(fd, w.buf)
		if err != nil || n <= 0 {
			return // EAGAIN: empty; EBADF: closed
		}
		now := time.Now().UnixNano()
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&w.buf[off]))
			name := w.buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			off += unix.SizeofInotifyEvent + int(ev.Len)
			w.handle(ev.Wd, ev.Mask, string(name), now)
		}
	}
}

// isClosed reports whether close was called.
func (w *watcher) isClosed() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.closed
}

// handle hands one event to its project.
func (w *watcher) handle(wd int32, mask uint32, name string, now int64) {
	switch {
	case mask&unix.IN_Q_OVERFLOW != 0:
		w.onOverflow()
		return
	case wd == w.barrierWD:
		if mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_IGNORED) != 0 {
			w.mu.Lock()
			if !w.goneClosed {
				w.goneClosed = true
				close(w.gone)
			}
			w.mu.Unlock()
		}
		return
	}
	w.mu.Lock()
	t, ok := w.targets[wd]
	if ok && mask&unix.IN_IGNORED != 0 {
		delete(w.targets, wd)
	}
	w.mu.Unlock()
	if !ok || mask&unix.IN_IGNORED != 0 {
		return
	}
	rel := t.rel
	if name != "" {
		rel = join(t.rel, name)
	}
	t.p.noteEvent(rel, now)
}

// close stops the watcher.
func (w *watcher) close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	w.f.Close() // waits for a drain in progress
	<-w.done
}
