package changes

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	osexec "os/exec"
	"path/filepath"
	"sync"
	"time"
)

// Timings of a Client.
const (
	// startWait bounds how long a Begin waits for a keeper process it
	// started to answer.
	startWait = 10 * time.Second
	// replySlack is added to Limits.MaxWait for a reply from the keeper.
	replySlack = 30 * time.Second
	// quietBegin is how long a run in a project the keeper already keeps
	// may go before the keeper is told of it: a shorter run's begin is sent
	// with its finish, so the keeper does not wake while it runs. It must
	// stay well under the keeper's lateBegin.
	quietBegin = time.Second
)

// Open returns the change tracker a host uses: on Linux a Client of the
// keeper process for stateDir (started from executable, "" for this one,
// with ServeCommand when none answers), elsewhere an in-process Keeper.
// Close it when the host ends.
func Open(stateDir, executable string) (Tracker, io.Closer, error) {
	stateDir, err := filepath.Abs(stateDir)
	if err != nil {
		return nil, nil, err
	}
	if executable == "" {
		if executable, err = os.Executable(); err != nil {
			return nil, nil, err
		}
	}
	if !keeperProcesses {
		k, err := NewKeeper(Options{StateDir: stateDir, Skip: []string{stateDir}})
		if err != nil {
			return nil, nil, err
		}
		return k, k, nil
	}
	c := &Client{stateDir: stateDir, start: func() error { return startKeeper(executable, stateDir) }}
	return c, c, nil
}

// startKeeper starts the keeper process detached (its own session, stdio
// on the null device), so that it outlives the host that started it.
func startKeeper(executable, stateDir string) error {
	if executable == "" {
		return errors.New("the agentgate executable is unknown")
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer devnull.Close()
	cmd := osexec.Command(executable, ServeCommand, stateDir)
	cmd.Env = append(os.Environ(), serveEnv)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, devnull, devnull
	cmd.SysProcAttr = detached()
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait() // reaps it should it exit while this host lives
	return nil
}

// StopKeeper asks the keeper process of stateDir, if one runs, to persist
// its indexes and exit, and waits (up to a while) until it has; tests call
// it before removing a state directory.
func StopKeeper(stateDir string) error {
	stateDir, err := filepath.Abs(stateDir)
	if err != nil {
		return err
	}
	c, err := dial(stateDir)
	if err != nil {
		return nil // none runs
	}
	defer c.Close()
	if err := json.NewEncoder(c).Encode(request{Op: "stop"}); err != nil {
		return err
	}
	c.SetReadDeadline(time.Now().Add(startWait))
	_, err = io.Copy(io.Discard, c) // the keeper closes it on its way out
	return err
}

// Client is a Tracker answered by the keeper process of a state
// directory (Serve), which it starts when none answers. All hosts of a user
// share that process and its indexes. Safe for concurrent use.
type Client struct {
	// stateDir names the keeper.
	stateDir string
	// start starts a keeper process.
	start func() error

	// mu guards the fields below.
	mu sync.Mutex
	// conn is the connection, nil before the first Begin or after it broke.
	conn net.Conn
	// enc writes requests to conn.
	enc *json.Encoder
	// nextID numbers requests.
	nextID uint64
	// waiting maps request ids to the channel their reply goes to.
	waiting map[uint64]chan reply
	// known holds project roots the keeper has begun runs in on this
	// connection: a Begin there does not wait for the answer.
	known map[string]bool
	// closed is set by Close.
	closed bool
}

// Begin implements Tracker. In a project this connection has seen it
// sends nothing yet: the begin (with the run's start time) goes with the
// finish, or after quietBegin for a run still going then. Otherwise it
// tells the keeper at once and waits for it (which may start the keeper
// process, and in a project never indexed waits for its first walk).
func (c *Client) Begin(root, dir string) Mark {
	t0 := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.connectLocked(); err != nil {
		return &clientMark{fail: fmt.Sprintf("the change keeper could not be reached (%v)", err)}
	}
	c.nextID++
	m := &clientMark{c: c, conn: c.conn, id: c.nextID, begin: request{Op: "begin", ID: c.nextID, Root: root, Dir: dir, T0: t0.UnixNano()}}
	if c.known[root] {
		m.begin.Quiet = true
		m.timer = time.AfterFunc(quietBegin, m.sendBegin)
		return m
	}
	ch := make(chan reply, 1)
	c.waiting[m.id] = ch
	m.sent = true
	if err := c.enc.Encode(m.begin); err != nil {
		c.dropLocked()
		return &clientMark{fail: fmt.Sprintf("the change keeper could not be reached (%v)", err)}
	}
	c.mu.Unlock()
	r, err := await(ch, DefaultLimits().MaxWait+replySlack)
	c.mu.Lock()
	switch {
	case err != nil:
		m.fail = err.Error()
	case r.Error != "":
		m.fail = r.Error
	case c.known != nil: // nil when the connection broke meanwhile
		c.known[root] = true
	}
	return m
}

// Settle waits until the keeper has indexed and hashed the project at root
// (see Keeper.Settle); benchmarks call it before they time anything.
func (c *Client) Settle(root string) error {
	c.mu.Lock()
	if err := c.connectLocked(); err != nil {
		c.mu.Unlock()
		return err
	}
	c.nextID++
	id := c.nextID
	ch := make(chan reply, 1)
	c.waiting[id] = ch
	err := c.enc.Encode(request{Op: "settle", ID: id, Root: root})
	if err != nil {
		c.dropLocked()
	}
	c.mu.Unlock()
	if err != nil {
		return err
	}
	r, err := await(ch, DefaultLimits().MaxWait+replySlack)
	if err == nil && r.Error != "" {
		err = errors.New(r.Error)
	}
	return err
}

// DefaultLimits returns the limits a Keeper takes by default.
func DefaultLimits() Limits { return Limits{}.withDefaults() }

// await waits for a reply on ch for at most d.
func await(ch chan reply, d time.Duration) (reply, error) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case r, ok := <-ch:
		if !ok {
			return reply{}, errors.New("the connection to the change keeper broke")
		}
		return r, nil
	case <-t.C:
		return reply{}, fmt.Errorf("the change keeper did not answer within %v", d)
	}
}

// connectLocked makes the connection, starting a keeper process when none
// answers; mu is held.
func (c *Client) connectLocked() error {
	if c.closed {
		return errors.New("the host is shutting down")
	}
	if c.conn != nil {
		return nil
	}
	conn, err := dial(c.stateDir)
	if err != nil {
		if startErr := c.start(); startErr != nil {
			return fmt.Errorf("%v; starting it failed: %v", err, startErr)
		}
		deadline := time.Now().Add(startWait)
		for delay := time.Millisecond; ; delay = min(2*delay, 100*time.Millisecond) {
			if conn, err = dial(c.stateDir); err == nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(delay)
		}
		if err != nil {
			return fmt.Errorf("the change keeper started but does not answer: %v", err)
		}
	}
	c.conn, c.enc = conn, json.NewEncoder(conn)
	c.waiting, c.known = map[uint64]chan reply{}, map[string]bool{}
	go c.read(conn)
	return nil
}

// read hands replies to their waiters until conn breaks.
func (c *Client) read(conn net.Conn) {
	sc := bufio.NewScanner(conn)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		var r reply
		if json.Unmarshal(sc.Bytes(), &r) != nil {
			break
		}
		c.mu.Lock()
		if ch := c.waiting[r.ID]; ch != nil && c.conn == conn {
			delete(c.waiting, r.ID)
			ch <- r
		}
		c.mu.Unlock()
	}
	c.mu.Lock()
	if c.conn == conn {
		c.dropLocked()
	}
	c.mu.Unlock()
}

// dropLocked forgets a broken connection, failing its waiters; mu is held.
func (c *Client) dropLocked() {
	if c.conn == nil {
		return
	}
	c.conn.Close()
	for _, ch := range c.waiting {
		close(ch)
	}
	c.conn, c.enc, c.waiting, c.known = nil, nil, nil, nil
}

// Close closes the connection; marks not finished yet finish incomplete.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	c.dropLocked()
	return nil
}

// clientMark is a run begun through a Client.
type clientMark struct {
	// c is the client; nil when fail is set at Begin.
	c *Client
	// conn is the connection the run was begun on.
	conn net.Conn
	// id is the begin's request id.
	id uint64
	// begin is the begin request; sent says it went out (guarded by c.mu).
	begin request
	// sent is true once begin was sent.
	sent bool
	// timer sends a quiet begin after quietBegin; nil when sent at once.
	timer *time.Timer
	// fail says why there is no summary.
	fail string
	// once makes Finish idempotent.
	once sync.Once
	// res is the summary.
	res *Summary
}

// sendBegin tells the keeper of a run still going after quietBegin.
func (m *clientMark) sendBegin() {
	c := m.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if m.sent || c.conn != m.conn {
		return
	}
	m.sent = true
	if err := c.enc.Encode(m.begin); err != nil {
		c.dropLocked()
	}
}

// Finish implements Mark: it asks the keeper for the summary and waits.
func (m *clientMark) Finish() *Summary {
	m.once.Do(func() { m.res = m.finish() })
	return m.res
}

func (m *clientMark) finish() *Summary {
	if m.fail != "" {
		return Unknown(m.fail)
	}
	c := m.c
	if m.timer != nil {
		m.timer.Stop()
	}
	c.mu.Lock()
	if c.conn != m.conn {
		c.mu.Unlock()
		return Unknown("the connection to the change keeper broke during the run")
	}
	if !m.sent {
		m.sent = true
		if err := c.enc.Encode(m.begin); err != nil {
			c.dropLocked()
			c.mu.Unlock()
			return Unknown(fmt.Sprintf("the change keeper could not be reached (%v)", err))
		}
	}
	c.nextID++
	id := c.nextID
	ch := make(chan reply, 1)
	c.waiting[id] = ch
	if err := c.enc.Encode(request{Op: "finish", ID: id, Mark: m.id}); err != nil {
		c.dropLocked()
		c.mu.Unlock()
		return Unknown(fmt.Sprintf("the change keeper could not be reached (%v)", err))
	}
	c.mu.Unlock()
	r, err := await(ch, DefaultLimits().MaxWait+replySlack)
	switch {
	case err != nil:
		return Unknown(err.Error())
	case r.Error != "":
		return Unknown(r.Error)
	case r.Summary == nil:
		return Unknown("the change keeper sent no summary")
	}
	return r.Summary
}
