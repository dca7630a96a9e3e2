package changes

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/gofrs/flock"
)

// ServeCommand is the first argument, with serveEnv in the environment,
// that makes any executable linking this package (agentgate, a test
// binary) run as the keeper process: `agentgate __agentgate_changes_keeper
// STATE_DIR`.
const ServeCommand = "__agentgate_changes_keeper"

// serveEnv marks a keeper process's environment, so that the argument alone
// never turns a process into one.
const serveEnv = "AGENTGATE_CHANGES_KEEPER=1"

// DefaultIdle is how long a keeper process lives with no host connected
// and nothing to do; AGENTGATE_CHANGES_IDLE (a Go duration) overrides it.
const DefaultIdle = 30 * time.Minute

// idleFromEnv returns the idle time the environment asks for, or
// DefaultIdle.
func idleFromEnv() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("AGENTGATE_CHANGES_IDLE")); err == nil && d > 0 {
		return d
	}
	return DefaultIdle
}

// request is one message from a host to the keeper process.
type request struct {
	// Op is "begin", "finish", "settle" (Client.Settle) or "stop"
	// (StopKeeper).
	Op string `json:"op"`
	// ID numbers the request on its connection; a begin's ID names its mark.
	ID uint64 `json:"id"`
	// Root and Dir are a begin's project root and run directory (Root also
	// a settle's).
	Root string `json:"root,omitempty"`
	// Dir is the run's working directory.
	Dir string `json:"dir,omitempty"`
	// T0 is a begin's start time (Unix ns).
	T0 int64 `json:"t0,omitempty"`
	// Mark is a finish's mark: the ID of its begin.
	Mark uint64 `json:"mark,omitempty"`
	// Quiet asks for no reply to a begin (the host does not wait for it).
	Quiet bool `json:"quiet,omitempty"`
}

// reply answers a request.
type reply struct {
	// ID is the request's.
	ID uint64 `json:"id"`
	// Summary answers a finish.
	Summary *Summary `json:"summary,omitempty"`
	// Error says why a request could not be served.
	Error string `json:"error,omitempty"`
}

func init() { MaybeServe() }

// MaybeServe runs the keeper process and exits when this process was
// started as one by a host (first argument ServeCommand and the
// environment marker); otherwise it returns at once. The package's init
// function calls it, so the keeper starts before later packages'
// initialisation, and any binary linking this package (agentgate, a test
// binary through os.Executable) can be a keeper.
func MaybeServe() {
	if len(os.Args) < 3 || os.Args[1] != ServeCommand || os.Getenv("AGENTGATE_CHANGES_KEEPER") != "1" {
		return
	}
	if err := Serve(os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "agentgate changes-keeper:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// Serve is the keeper process for stateDir: it keeps the indexes of the
// projects the hosts of this user run commands in and answers their Begin
// and Finish over a socket only this user can use. It returns nil at once
// when another keeper serves stateDir, and otherwise when it was idle
// (no host connected and nothing to fold) for AGENTGATE_CHANGES_IDLE
// (default 30 minutes), when stateDir is removed, or on SIGTERM or SIGINT,
// after persisting the indexes.
func Serve(stateDir string) error {
	stateDir, err := filepath.Abs(stateDir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(stateDir, "changes"), 0o700); err != nil {
		return err
	}
	lock := flock.New(filepath.Join(stateDir, "changes", "keeper.lock"))
	if ok, err := lock.TryLock(); err != nil || !ok {
		return err // another keeper serves this state directory
	}
	defer lock.Unlock()
	ln, err := listen(stateDir)
	if err != nil {
		return fmt.Errorf("listening for hosts: %w", err)
	}
	k, err := NewKeeper(Options{StateDir: stateDir, Skip: []string{stateDir}})
	if err != nil {
		ln.Close()
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	s := &server{k: k, idle: idleFromEnv(), quit: make(chan struct{})}
	s.armIdle()
	go s.accept(ln)
	select {
	case <-ctx.Done():
	case <-k.Gone():
	case <-s.quit:
	}
	ln.Close()
	err = k.Close()
	s.closeConns() // after the indexes are saved: StopKeeper waits for this
	return err
}

// server serves hosts' connections to one Keeper.
type server struct {
	// k is the Keeper.
	k *Keeper
	// idle is how long to live without hosts.
	idle time.Duration
	// quit is closed when the server stops for idleness.
	quit chan struct{}

	// mu guards conns, idleTimer and stopped.
	mu sync.Mutex
	// conns are the open connections.
	conns map[net.Conn]struct{}
	// idleTimer fires idle after the last connection closed.
	idleTimer *time.Timer
	// stopped says quit is closed.
	stopped bool
}

// armIdle starts the idle timer; mu must not be held.
func (s *server) armIdle() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.idleTimer != nil || s.stopped || len(s.conns) > 0 {
		return
	}
	s.idleTimer = time.AfterFunc(s.idle, func() {
		s.mu.Lock()
		s.idleTimer = nil
		if len(s.conns) == 0 && !s.k.Busy() && !s.stopped {
			s.stopped = true
			close(s.quit)
		}
		s.mu.Unlock()
		s.armIdle()
	})
}

// stop ends the server (StopKeeper).
func (s *server) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.stopped {
		s.stopped = true
		close(s.quit)
	}
}

// accept serves connections until ln is closed.
func (s *server) accept(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		if err := checkPeer(c); err != nil {
			c.Close()
			continue
		}
		s.mu.Lock()
		if s.conns == nil {
			s.conns = map[net.Conn]struct{}{}
		}
		s.conns[c] = struct{}{}
		if s.idleTimer != nil {
			s.idleTimer.Stop()
			s.idleTimer = nil
		}
		s.mu.Unlock()
		go s.serve(c)
	}
}

// closeConns closes every connection.
func (s *server) closeConns() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		c.Close()
	}
}

// serve answers one host's requests. Begins and finishes run concurrently
// (a begin in a project never indexed waits for its first walk; a finish
// for its run's changes); a finish waits for its begin. Marks left
// unfinished when the host goes away are finished and dropped.
func (s *server) serve(c net.Conn) {
	type pending struct {
		// begun is closed once m is set.
		begun chan struct{}
		// m is the mark.
		m Mark
	}
	var (
		wmu   sync.Mutex
		mmu   sync.Mutex
		marks = map[uint64]*pending{}
		wg    sync.WaitGroup
	)
	enc := json.NewEncoder(c)
	send := func(r reply) {
		wmu.Lock()
		defer wmu.Unlock()
		enc.Encode(r)
	}
	sc := bufio.NewScanner(c)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var req request
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			send(reply{Error: "malformed request: " + err.Error()})
			break
		}
		switch req.Op {
		case "begin":
			p := &pending{begun: make(chan struct{})}
			mmu.Lock()
			marks[req.ID] = p
			mmu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				p.m = s.k.BeginAt(req.Root, req.Dir, time.Unix(0, req.T0))
				close(p.begun)
				if !req.Quiet {
					send(reply{ID: req.ID})
				}
			}()
		case "finish":
			mmu.Lock()
			p, ok := marks[req.Mark]
			delete(marks, req.Mark)
			mmu.Unlock()
			if !ok {
				send(reply{ID: req.ID, Error: fmt.Sprintf("no run %d was begun on this connection", req.Mark)})
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-p.begun
				send(reply{ID: req.ID, Summary: p.m.Finish()})
			}()
		case "settle":
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := reply{ID: req.ID}
				if err := s.k.Settle(req.Root); err != nil {
					r.Error = err.Error()
				}
				send(r)
			}()
		case "stop":
			s.stop()
		default:
			send(reply{ID: req.ID, Error: fmt.Sprintf("unknown op %q", req.Op)})
		}
	}
	c.Close()
	wg.Wait()
	for _, p := range marks {
		p.m.Finish() // releases what the mark held in the journal
	}
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	s.armIdle()
}
