package agentbridge

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"github.com/gofrs/flock"

	"github.com/agentgate/agentgate/agentbridge/client"
	"github.com/agentgate/agentgate/agentbridge/wire"
)

// ErrAlreadyRunning is returned by Listen when another agentgate already
// serves the socket. Listen has then asked it to show its main window; the
// caller should exit with status 0: there is one bridge per user.
var ErrAlreadyRunning = errors.New("agentgate is already running; its window was brought forward")

// ErrRunningWithoutWindows is returned by Listen when the agentgate that
// serves the socket has no window (it serves without a display: app.show
// answered {"shown": false}). errors.Is(err, ErrAlreadyRunning) holds too.
// A desktop app that can open windows asks it to hand over
// (client.HandOver) and listens again.
var ErrRunningWithoutWindows error = runningWithoutWindows{}

// runningWithoutWindows is ErrRunningWithoutWindows's type.
type runningWithoutWindows struct{}

func (runningWithoutWindows) Error() string {
	return "agentgate is already running without windows (it found no display)"
}

// Is makes ErrRunningWithoutWindows match ErrAlreadyRunning.
func (runningWithoutWindows) Is(target error) bool { return target == ErrAlreadyRunning }

// Listener is the bridge's listening socket. It holds the single-instance
// lock (<socket>.lock, github.com/gofrs/flock) for as long as it is open.
type Listener struct {
	// Listener accepts the connections (a *net.UnixListener).
	net.Listener
	// path is the socket path.
	path string
	// lock is held while listening; the OS releases it if the process dies.
	lock *flock.Flock
	// closeOnce makes Close act once: a second Close must not remove a
	// socket that another agentgate created after the lock was released.
	closeOnce sync.Once
	// closeErr is the first Close's result.
	closeErr error
}

// Path returns the socket path.
func (l *Listener) Path() string { return l.path }

// Close stops listening, removes the socket file and releases the lock, in
// that order, so whoever takes the lock next finds no socket file. Calls
// after the first do nothing and return its result.
func (l *Listener) Close() error {
	l.closeOnce.Do(func() {
		l.closeErr = l.Listener.Close()
		os.Remove(l.path) // already unlinked by net on Unix; harmless otherwise
		l.lock.Unlock()
	})
	return l.closeErr
}

// showTimeout bounds the conversation with an already running instance.
const showTimeout = 3 * time.Second

// Listen opens the bridge socket at path ("" means wire.SocketPath(), the
// per-user default):
//
//  1. The socket's directory is created 0700 if missing and must be private
//     (wire.PrepareSocketDir); a directory that is not is refused, never
//     repaired.
//  2. The single-instance lock <path>.lock is taken without waiting. If
//     another process holds it, an agentgate is running: Listen sends it
//     app.show and returns ErrAlreadyRunning, or ErrRunningWithoutWindows
//     when it has no window to show.
//  3. Holding the lock, a socket file left at path is either live (another
//     process answers — it is sent app.show and ErrAlreadyRunning or
//     ErrRunningWithoutWindows returned) or stale from a crashed app
//     (connection refused): it is removed. A directory at path is refused.
//  4. It listens.
func Listen(path string) (*Listener, error) {
	if path == "" {
		p, err := wire.SocketPath()
		if err != nil {
			return nil, err
		}
		path = p
	}
	if err := wire.PrepareSocketDir(path); err != nil {
		return nil, err
	}
	lock := flock.New(path + ".lock")
	locked, err := lock.TryLock()
	if err != nil {
		return nil, fmt.Errorf("take the single-instance lock %s: %w", lock.Path(), err)
	}
	if !locked {
		if answered, shown := showRunning(path, showTimeout); answered && !shown {
			return nil, ErrRunningWithoutWindows
		}
		return nil, ErrAlreadyRunning
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.IsDir() {
			lock.Unlock()
			return nil, fmt.Errorf("the socket path %s is a directory; remove it and start agentgate again", path)
		}
		if answered, shown := showRunning(path, 0); answered {
			lock.Unlock()
			if !shown {
				return nil, ErrRunningWithoutWindows
			}
			return nil, ErrAlreadyRunning
		}
		if err := os.Remove(path); err != nil {
			lock.Unlock()
			return nil, fmt.Errorf("remove the stale socket %s left by a previous run: %w", path, err)
		}
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		lock.Unlock()
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	return &Listener{Listener: ln, path: path, lock: lock}, nil
}

// showRunning asks the bridge at path to show its main window; it reports
// whether a bridge answered and whether it showed a window. A bridge that
// answers app.show with an error (an older one) counts as showing. It
// retries for up to patience, for a lock holder that is still starting up
// (0: one try, for a stale-socket probe).
func showRunning(path string, patience time.Duration) (answered, shown bool) {
	deadline := time.Now().Add(patience)
	for {
		c, err := client.Dial(path)
		if err == nil {
			shown, err = c.Show()
			c.Close()
			if client.IsRemote(err) {
				return true, true
			}
			return err == nil, shown
		}
		if time.Now().After(deadline) {
			return false, false
		}
		time.Sleep(100 * time.Millisecond)
	}
}
