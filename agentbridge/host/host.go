// Package host is agentgate's composition root: it assembles the gate —
// allow-list store, settings source, executor, audit log, broker and, for a
// host that serves agents, the socket server — for a given Approver and host
// kind. The desktop app (ui), its headless form, `agentgate run` (cli) and
// the tests (agentbridge/bridgetest) all build their gate here, so the gate
// is wired one way only.
//
// It knows no window toolkit: the Approver is whatever asks the person (the
// desktop card, the terminal prompt, a scripted fake), or nil.
package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/agentgate/agentgate/agentbridge"
	"github.com/agentgate/agentgate/agentbridge/audit"
	"github.com/agentgate/agentgate/agentbridge/wire"
	"github.com/agentgate/agentgate/exec"
	"github.com/agentgate/agentgate/exec/changes"
	"github.com/agentgate/agentgate/prefs"
)

// Options say what kind of gate to assemble.
type Options struct {
	// Paths locate the configuration (allow-lists, settings) and the state
	// (run records, audit log).
	Paths prefs.Paths
	// Kind is the host kind written into every run record (exec.HostApp,
	// exec.HostCLI).
	Kind exec.HostKind
	// AuditHost names this process in every audit line ("app", "cli").
	AuditHost string
	// Socket is where the bridge serves agents; "" serves none (`agentgate
	// run` hosts its one command in-process). A host with a socket is long
	// lived: at Open it marks runs of dead hosts lost, prunes old run
	// records and follows the allow-list files.
	Socket string
	// TakeOver makes Open ask an agentgate that serves the socket without
	// windows to hand over (app.hand_over), and wait for the socket, instead
	// of failing with agentbridge.ErrRunningWithoutWindows. The desktop app
	// sets it when it can open windows.
	TakeOver bool
	// Env is every run's environment; nil means exec.HostEnv(ctx, Kind):
	// the person's login environment (kept in the state directory for an
	// hour, exec.UseLoginEnvCache) with this process's variables that steer
	// no program (docs/executor.md).
	Env []string
	// Settings returns the settings in force, read per proposal; nil means
	// the settings file, re-read when it changes (prefs.SettingsSource).
	Settings func() prefs.Settings
	// Approver asks the person when no rule decides; nil asks nobody (such
	// proposals are refused with no_approver) until Broker.SetApprover.
	Approver agentbridge.Approver
	// NoApproverReason replaces the no_approver refusal's text (see
	// agentbridge.Config); "" keeps the default.
	NoApproverReason string
	// MaxFinishedPerSession is passed to the broker (0: its default).
	MaxFinishedPerSession int
	// Unconfined turns write confinement off (exec.ConfineConfig.Off):
	// for tests of the gate that are not about confinement; every record
	// says so.
	Unconfined bool
	// Shim is the confinement shim (exec.ConfineConfig.Shim); "" means
	// agentgate-shim beside the running executable, as installed.
	Shim string
	// Changes makes the runs' change summaries; nil uses the keeper
	// process of Paths.StateDir, shared with every other host
	// (changes.Open; started from this executable when none runs).
	Changes changes.Tracker
	// OnHistoryCap, if set, is told (with a sentence for the person) when a
	// disk cap made agentgate drop history younger than history_span —
	// the audit log's or the Processes history's; it is audited
	// (history_cap) first. The desktop app notifies the person. It may be
	// called from any goroutine, during Open too.
	OnHistoryCap func(message string)
}

// Host is an assembled gate. Its parts are exported for the host's own
// front end (windows, terminal, tests); Close takes it down in order.
type Host struct {
	// Paths are the configuration and state directories.
	Paths prefs.Paths
	// Settings returns the settings in force.
	Settings func() prefs.Settings
	// SettingsErr is why the settings file could not be loaded at Open (the
	// defaults are in force then); nil when it loaded or is absent.
	SettingsErr error
	// Store holds the allow-lists.
	Store *prefs.Store
	// Grants holds the person's temporary grants, honoured by the broker.
	Grants *prefs.Grants
	// Instance is this app instance, the owner of "until agentgate quits"
	// grants; held by a host that serves a socket (the app, headless or
	// not), nil for `agentgate run`. Close ends it and its grants.
	Instance *prefs.Instance
	// Executor runs the approved commands of this host.
	Executor *exec.Executor
	// AuditPath is the audit log file.
	AuditPath string
	// Audit writes the audit log.
	Audit *audit.Log
	// Broker takes proposals along SPEC §1's path.
	Broker *agentbridge.Broker
	// TookOver is true when Open took the socket over from an agentgate
	// serving without windows (Options.TakeOver).
	TookOver bool
	// Listener is the bridge socket, nil without Options.Socket.
	Listener *agentbridge.Listener
	// Server serves the socket once Serve was called (nil before, and
	// without a socket).
	Server *agentbridge.Server

	// stop ends the allow-list watcher.
	stop context.CancelFunc
	// served is closed when Server.Serve returned (nil before Serve).
	served chan struct{}
	// closeOnce makes Close idempotent.
	closeOnce sync.Once
	// changes closes the change tracker Open opened (nil when given one).
	changes io.Closer
}

// shutdownSlack is how long Close waits, beyond the kill grace, for the runs
// it cancelled to end: a cancelled run ends within the grace plus the time
// its supervisor takes to report (docs/lifetime.md).
const shutdownSlack = 10 * time.Second

// Open assembles the gate. With a Socket it listens first, so a second
// start learns at once that an agentgate already serves (the error then
// wraps agentbridge.ErrAlreadyRunning and the running one was asked to show
// its window; see TakeOver for one serving without windows) before
// anything else is opened. The allow-lists must be
// readable and the audit log writable (a gate that cannot record runs
// nothing); a settings file that does not load leaves the defaults in force
// and is reported in SettingsErr. Nothing is served until Serve.
func Open(ctx context.Context, opts Options) (h *Host, err error) {
	h = &Host{Paths: opts.Paths, AuditPath: audit.Path(opts.Paths.StateDir)}
	var cleanup []func()
	defer func() {
		if err != nil {
			for i := len(cleanup) - 1; i >= 0; i-- {
				cleanup[i]()
			}
		}
	}()
	if opts.Socket != "" {
		h.Listener, err = agentbridge.Listen(opts.Socket)
		if errors.Is(err, agentbridge.ErrRunningWithoutWindows) && opts.TakeOver {
			h.Listener, err = takeOver(opts.Socket)
			h.TookOver = err == nil
		}
		if err != nil {
			return nil, err
		}
		cleanup = append(cleanup, func() { h.Listener.Close() })
	}
	h.Settings = opts.Settings
	if h.Settings == nil {
		src, err := prefs.NewSettingsSource(opts.Paths)
		h.Settings, h.SettingsErr = src.Get, err
	}
	settings := h.Settings()
	if h.Store, err = prefs.Open(opts.Paths); err != nil {
		return nil, fmt.Errorf("reading the allow-lists in %s: %w", opts.Paths.ConfigDir, err)
	}
	h.Grants = prefs.OpenGrants(opts.Paths)
	if opts.Socket != "" {
		if h.Instance, err = prefs.HoldInstance(opts.Paths); err != nil {
			return nil, err
		}
		cleanup = append(cleanup, func() { h.Instance.Close(h.Grants) })
	}
	watchCtx, stop := context.WithCancel(context.Background())
	h.stop = stop
	cleanup = append(cleanup, stop)
	if opts.Socket != "" {
		go func() { _ = h.Store.Watch(watchCtx) }()
		if _, err := exec.MarkLost(opts.Paths.StateDir); err != nil {
			fmt.Fprintln(os.Stderr, "agentgate: marking runs of dead hosts as lost:", err)
		}
	}
	env := opts.Env
	if env == nil {
		exec.UseLoginEnvCache(opts.Paths.StateDir)
		env = exec.HostEnv(ctx, opts.Kind)
	}
	cgroups := exec.UseRunCgroups(ctx)
	if opts.Socket != "" {
		fmt.Fprintln(os.Stderr, "agentgate:", cgroups)
	}
	tracker := opts.Changes
	if tracker == nil {
		if tracker, h.changes, err = changes.Open(opts.Paths.StateDir, ""); err != nil {
			return nil, fmt.Errorf("opening the change keeper: %w", err)
		}
		cleanup = append(cleanup, func() { h.changes.Close() })
	}
	if h.Executor, err = exec.New(exec.Config{StateDir: opts.Paths.StateDir, HostKind: opts.Kind, Env: env,
		Grace: settings.Grace, SpillCap: settings.OutputMaxBytes, Changes: tracker,
		Confine: confineConfig(opts, h.Settings)}); err != nil {
		return nil, fmt.Errorf("starting the executor: %w", err)
	}
	auditOpts := audit.Options{MaxBytes: settings.AuditMaxBytes, MaxTotal: settings.AuditMaxTotalBytes, Span: settings.HistorySpan,
		Host: opts.AuditHost, Maintain: true}
	if opts.OnHistoryCap != nil {
		auditOpts.OnCap = func(c audit.CapEvent) { opts.OnHistoryCap(c.Message()) }
	}
	if h.Audit, err = audit.Open(h.AuditPath, auditOpts); err != nil {
		return nil, fmt.Errorf("opening the audit log (nothing runs unrecorded): %w", err)
	}
	cleanup = append(cleanup, func() { h.Audit.Close() })
	if h.Broker, err = agentbridge.NewBroker(agentbridge.Config{
		Executor: h.Executor, Rules: h.Store, Grants: h.Grants, Audit: h.Audit, Settings: h.Settings,
		PathEnv: exec.PathFromEnv(env), StateDir: opts.Paths.StateDir, Approver: opts.Approver,
		NoApproverReason: opts.NoApproverReason, MaxFinishedPerSession: opts.MaxFinishedPerSession,
	}); err != nil {
		return nil, err
	}
	if opts.Socket != "" {
		h.keepHistory(settings, opts.OnHistoryCap)
	}
	return h, nil
}

// keepHistory brings a long-lived host's history within its bounds at
// start (docs/protocol.md, "Audit"): the audit log's old files are
// compressed and the disk cap enforced, in the background; finished runs
// beyond the retention are pruned (exec.PruneRecords), and when the runs'
// disk cap cut into history_span that is audited and told.
func (h *Host) keepHistory(settings prefs.Settings, onCap func(string)) {
	go func() {
		if err := h.Audit.Housekeep(); err != nil {
			fmt.Fprintln(os.Stderr, "agentgate: audit log housekeeping:", err)
		}
	}()
	pruned, err := exec.PruneRecords(h.Paths.StateDir, exec.Retention{Keep: settings.RetainRuns, Span: settings.HistorySpan, MaxTotal: settings.RunsMaxTotalBytes})
	if err != nil {
		fmt.Fprintln(os.Stderr, "agentgate: pruning old run records:", err)
	}
	if pruned.CapCut == 0 {
		return
	}
	msg := fmt.Sprintf("the Processes history reached its disk cap of %d MiB: the output or record of %d run(s) started up to %s was removed although younger than the %v kept at least (history_span); raise runs_max_total_bytes to keep more",
		settings.RunsMaxTotalBytes>>20, pruned.CapCut, pruned.Through.UTC().Format(time.RFC3339), settings.HistorySpan)
	if err := h.Audit.Append(audit.Entry{Kind: audit.KindHistoryCap, Message: msg}); err != nil {
		fmt.Fprintln(os.Stderr, "agentgate: audit log:", err)
	}
	if onCap != nil {
		onCap(msg)
	}
}

// Serve starts serving the socket in the background with the given server
// options (app.show's handler, diagnostics). It does nothing without a
// socket, or when called again.
func (h *Host) Serve(opts agentbridge.ServerOptions) {
	if h.Listener == nil || h.Server != nil {
		return
	}
	h.Server = agentbridge.NewServer(h.Broker, opts)
	h.served = make(chan struct{})
	go func() {
		defer close(h.served)
		if err := h.Server.Serve(h.Listener); err != nil && !errors.Is(err, agentbridge.ErrServerClosed) {
			fmt.Fprintln(os.Stderr, "agentgate:", err)
		}
	}()
}

// Close takes the gate down in order: nobody is asked any more, the socket
// closes (connections end, pending proposals are withdrawn), every run of
// this host is cancelled and waited for (up to the kill grace plus
// shutdownSlack), the broker stops, the final run records are written (so
// the next start does not mark these runs lost), the audit log closes and
// the app instance ends with its "until agentgate quits" grants. It is
// idempotent.
func (h *Host) Close() {
	h.closeOnce.Do(func() {
		h.Broker.SetApprover(nil)
		if h.Server != nil {
			h.Server.Close()
			<-h.served
		}
		if h.Listener != nil {
			h.Listener.Close()
		}
		h.Executor.CancelAll()
		ctx, cancel := context.WithTimeout(context.Background(), h.Settings().Grace+shutdownSlack)
		for _, r := range h.Executor.Runs() {
			_, _ = r.Wait(ctx)
		}
		cancel()
		h.Broker.Close()
		h.Executor.Flush()
		if h.changes != nil {
			h.changes.Close()
		}
		h.Audit.Close()
		if h.Instance != nil {
			if err := h.Instance.Close(h.Grants); err != nil {
				fmt.Fprintln(os.Stderr, "agentgate: ending the grants that last until agentgate quits:", err)
			}
		}
		h.stop()
	})
}

// confineConfig is the executor's write confinement for this host
// (docs/lifetime.md): the settings in force (writable_paths, network,
// require_confinement), agentgate's configuration and state and the
// agents' user-level settings protected, and the bridge socket (this
// host's, or where the app's would be) and the session bus hidden.
func confineConfig(opts Options, settings func() prefs.Settings) exec.ConfineConfig {
	home, _ := os.UserHomeDir()
	socket := opts.Socket
	if socket == "" {
		socket, _ = wire.SocketPath()
	}
	return exec.ConfineConfig{
		Off:  opts.Unconfined,
		Shim: opts.Shim,
		Settings: func() exec.ConfineSettings {
			s := settings()
			return exec.ConfineSettings{WritablePaths: s.WritablePaths, Network: s.Network, Require: s.RequireConfinement}
		},
		Protect: exec.UserProtectedPaths(home, opts.Paths.ConfigDir, opts.Paths.StateDir),
		Hide:    exec.HiddenFromRuns(socket),
		Home:    home,
	}
}
