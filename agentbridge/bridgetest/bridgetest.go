// Package bridgetest starts a real bridge for tests anywhere in the
// repository, assembled by agentbridge/host as the app's is: a real socket
// in a fresh private directory, fresh config and state directories, a real
// exec.Executor, a real prefs.Store, a real audit log and the scripted
// approver of agentbridge/approvertest.
//
// The executor re-executes the test binary as each run's supervisor, so a
// package using bridgetest must call unixpg.MaybeSupervise() first thing in
// its TestMain (on Unix).
package bridgetest

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/agentgate/agentgate/agentbridge"
	"github.com/agentgate/agentgate/agentbridge/approvertest"
	"github.com/agentgate/agentgate/agentbridge/audit"
	"github.com/agentgate/agentgate/agentbridge/client"
	"github.com/agentgate/agentgate/agentbridge/host"
	"github.com/agentgate/agentgate/agentbridge/wire"
	"github.com/agentgate/agentgate/exec"
	"github.com/agentgate/agentgate/exec/changes"
	"github.com/agentgate/agentgate/exec/changes/changestest"
	"github.com/agentgate/agentgate/exec/platformtest"
	"github.com/agentgate/agentgate/prefs"
)

// Options adjust the bridge.
type Options struct {
	// Steps script the fake approver (see approvertest.New).
	Steps []approvertest.Step
	// NoApprover starts the broker without an approver.
	NoApprover bool
	// Settings, when set, edits the default settings before start.
	Settings func(*prefs.Settings)
	// OnShow is the app.show handler (nil: none).
	OnShow func()
	// Socket, when set, is the socket path (e.g. another bridge's, to take
	// its place); "" means a fresh one in a private directory.
	Socket string
	// MaxFinishedPerSession is passed to the broker (0: its default).
	MaxFinishedPerSession int
	// Project, when set, is the project sessions declare (an existing
	// directory, symlinks resolved) instead of a fresh empty one.
	Project string
	// KeeperProcess makes change summaries come from a keeper process, as
	// in the app (benchmarks: the index's memory is then not this
	// process's), instead of a Keeper in this process (Bridge.Changes).
	KeeperProcess bool
	// Unconfined turns write confinement off (host.Options.Unconfined): for
	// benchmarks that show what confinement costs.
	Unconfined bool
	// Shim is the confinement shim (host.Options.Shim); "" means
	// agentgate-shim beside the test binary, which is not there: runs are
	// then unconfined, with the protected paths compared before and after.
	// Benchmarks that run commands as the app does give
	// shimbuild.Path().
	Shim string
}

// Bridge is a running test bridge. Everything is torn down by t.Cleanup.
type Bridge struct {
	// Socket is the socket path.
	Socket string
	// Paths are the config and state directories (prefs layout).
	Paths prefs.Paths
	// AuditPath is the audit log file.
	AuditPath string
	// Project is the project sessions declare: Options.Project, or a fresh
	// directory (symlinks resolved).
	Project string
	// Approver is the scripted approver (nil with NoApprover).
	Approver *approvertest.Fake
	// Broker takes the proposals.
	Broker *agentbridge.Broker
	// Server serves the socket.
	Server *agentbridge.Server
	// Executor runs the commands.
	Executor *exec.Executor
	// Rules is the allow-list store.
	Rules *prefs.Store
	// Grants are the temporary grants the broker honours.
	Grants *prefs.Grants
	// Audit is the audit log writer.
	Audit *audit.Log
	// Host is the assembled gate (agentbridge/host) the fields above come from.
	Host *host.Host
	// Changes is the change keeper in this process (nil with
	// KeeperProcess).
	Changes *changes.Keeper

	// mu guards settings.
	mu sync.Mutex
	// settings are the current settings.
	settings prefs.Settings
}

// Start starts a bridge and registers its teardown with t.
func Start(t testing.TB, opts Options) *Bridge {
	t.Helper()
	platformtest.RequireUnixSockets(t)
	base := t.TempDir()
	// A short socket directory: sun_path holds 108 bytes (104 on macOS) and
	// test temp dirs carry the test's name.
	socket := opts.Socket
	if socket == "" {
		sockDir, err := os.MkdirTemp("", "agb")
		if err != nil {
			t.Fatalf("bridgetest: %v", err)
		}
		t.Cleanup(func() { os.RemoveAll(sockDir) })
		socket = filepath.Join(sockDir, "bridge.sock")
	}
	var err error
	b := &Bridge{
		Socket:   socket,
		Paths:    prefs.Paths{ConfigDir: filepath.Join(base, "config", "agentgate"), StateDir: filepath.Join(base, "state", "agentgate")},
		settings: prefs.DefaultSettings(),
	}
	if opts.Settings != nil {
		opts.Settings(&b.settings)
	}
	project := filepath.Join(base, "project")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatalf("bridgetest: %v", err)
	}
	if b.Project, err = filepath.EvalSymlinks(project); err != nil {
		t.Fatalf("bridgetest: %v", err)
	}
	if opts.Project != "" {
		b.Project = opts.Project
	}
	for _, dir := range []string{b.Paths.ConfigDir, b.Paths.StateDir} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatalf("bridgetest: %v", err)
		}
	}
	// The change keeper in this process (the app's is a process of its own,
	// answering the same way over a socket): closed after the host. With
	// KeeperProcess, the host opens the keeper process as the app does; it
	// is stopped before the state directory is removed.
	var tracker changes.Tracker
	if opts.KeeperProcess {
		t.Cleanup(func() { changes.StopKeeper(b.Paths.StateDir) })
	} else {
		keeper, err := changes.NewKeeper(changes.Options{StateDir: b.Paths.StateDir})
		if err != nil {
			t.Fatalf("bridgetest: change keeper: %v", err)
		}
		t.Cleanup(func() { keeper.Close() })
		b.Changes, tracker = keeper, keeper
	}
	cfg := host.Options{Paths: b.Paths, Kind: exec.HostApp, AuditHost: "app", Socket: b.Socket, Env: os.Environ(),
		Settings: b.Settings, MaxFinishedPerSession: opts.MaxFinishedPerSession, Changes: tracker, Unconfined: opts.Unconfined, Shim: opts.Shim}
	if !opts.NoApprover {
		b.Approver = approvertest.New(opts.Steps...)
		cfg.Approver = b.Approver
	}
	h, err := host.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("bridgetest: %v", err)
	}
	b.Host = h
	b.Broker, b.Executor, b.Rules, b.Grants, b.Audit, b.AuditPath = h.Broker, h.Executor, h.Store, h.Grants, h.Audit, h.AuditPath
	var logMu sync.Mutex
	testOver := false
	logf := func(format string, args ...any) { // t.Logf panics once the test is over
		logMu.Lock()
		defer logMu.Unlock()
		if !testOver {
			t.Logf(format, args...)
		}
	}
	t.Cleanup(func() {
		logMu.Lock()
		testOver = true
		logMu.Unlock()
	})
	h.Serve(agentbridge.ServerOptions{OnShow: opts.OnShow, Logf: logf})
	b.Server = h.Server
	t.Cleanup(h.Close)
	return b
}

// SettleChanges has the change keeper index and hash the project before a
// benchmark times anything.
func (b *Bridge) SettleChanges(t testing.TB) {
	t.Helper()
	tracker := changes.Tracker(b.Changes)
	if b.Changes == nil {
		client, closer, err := changes.Open(b.Paths.StateDir, "")
		if err != nil {
			t.Fatalf("bridgetest: change keeper: %v", err)
		}
		defer closer.Close()
		tracker = client
	}
	tracker.Begin(b.Project, b.Project).Finish()
	changestest.Settle(t, tracker, b.Project)
}

// Settings returns the current settings (the broker reads them per proposal).
func (b *Bridge) Settings() prefs.Settings {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.settings
}

// SetSettings changes the settings for later proposals.
func (b *Bridge) SetSettings(edit func(*prefs.Settings)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	edit(&b.settings)
}

// Allow adds a global allow-list rule, as a person would.
func (b *Bridge) Allow(t testing.TB, tokens ...string) prefs.Rule {
	t.Helper()
	r, err := b.Rules.Add(prefs.ScopeGlobal, "", "", tokens)
	if err != nil {
		t.Fatalf("bridgetest: allow %q: %v", tokens, err)
	}
	return r
}

// Dial connects a client (no hello) and closes it at cleanup.
func (b *Bridge) Dial(t testing.TB) *client.Client {
	t.Helper()
	c, err := client.Dial(b.Socket)
	if err != nil {
		t.Fatalf("bridgetest: dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Session connects a client and says hello for the bridge's project.
func (b *Bridge) Session(t testing.TB, provider string) *client.Client {
	t.Helper()
	c := b.Dial(t)
	if _, err := c.Hello(context.Background(), wire.HelloParams{Provider: provider, ProjectRoot: b.Project, Client: "bridgetest"}); err != nil {
		t.Fatalf("bridgetest: hello: %v", err)
	}
	return c
}

// AuditEntries returns the audit log's entries, oldest first.
func (b *Bridge) AuditEntries(t testing.TB) []audit.Entry {
	t.Helper()
	var out []audit.Entry
	for e, err := range audit.Entries(b.AuditPath, audit.OldestFirst) {
		if err != nil {
			t.Fatalf("bridgetest: audit log: %v", err)
		}
		out = append(out, e)
	}
	return out
}
