package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/agentgate/agentgate/agentbridge"
	"github.com/agentgate/agentgate/agentbridge/host"
	"github.com/agentgate/agentgate/agentbridge/wire"
	"github.com/agentgate/agentgate/exec"
	"github.com/agentgate/agentgate/exec/display"
	"github.com/agentgate/agentgate/exec/runinfo"
	"github.com/agentgate/agentgate/prefs"
)

// Exit codes of `agentgate run` (and the other subcommands).
const (
	exitOK       = 0 // the command ran and exited 0
	exitFailed   = 1 // it ran and did not succeed: non-zero exit, timed out, cancelled
	exitDeclined = 2 // agentgate declined, or could not start it
)

// runPoll is how often `run` looks for new output while the command is
// quiet; output is copied as soon as a look finds it.
const runPoll = 20 * time.Millisecond

// runRun is `agentgate run [--cwd DIR] [--timeout DUR] [--provider NAME] --
// ARGV…`: the terminal as a host for one command, through the same broker
// path as the desktop app (validation, allow-lists, a person's approval,
// audit log, concurrent-run ceiling, run record with host kind cli).
//
// The project is the current directory's: its enclosing git work tree, else
// the directory itself. --cwd (relative to the current directory) must
// resolve inside that project, after `..` and symbolic links, and --timeout
// must be more than 0 and at most 10m; otherwise nothing runs (exit 2).
//
// When no rule allows the command, a person is asked at the terminal if
// stdin is one; otherwise the command is refused before anything starts,
// naming the allow-list file and the line that would allow it. Output
// streams live: the command's stdout to stdout, its stderr to stderr; it gets
// no stdin. SIGINT, SIGTERM and SIGHUP withdraw the question or cancel the
// command's whole process tree; so does `agentgate cancel ID` or the
// Processes window (exec.RequestCancel). Exit codes: 0 ran and exited 0; 1
// ran and did not succeed (the exit code or state is printed); 2 declined or
// could not start.
func runRun(args []string, e env) int {
	flags := flag.NewFlagSet("run", flag.ContinueOnError)
	flags.SetOutput(e.stderr)
	cwdFlag := flags.String("cwd", "", "working directory (default: the current directory); must be inside the current directory's project")
	timeout := flags.Duration("timeout", 0, "time limit, more than 0 and at most 10m (default: the default_timeout setting, 2m)")
	provider := flags.String("provider", "", "provider whose allow-list also applies (e.g. claude-code)")
	flags.Usage = func() {
		fmt.Fprintln(e.stderr, "usage: agentgate run [--cwd DIR] [--timeout DUR] [--provider NAME] -- ARGV...")
		flags.PrintDefaults()
	}
	if err := flags.Parse(args); err != nil {
		return exitDeclined
	}
	argv := flags.Args()
	if len(argv) == 0 {
		flags.Usage()
		return exitDeclined
	}
	timeoutSet := false
	flags.Visit(func(f *flag.Flag) { timeoutSet = timeoutSet || f.Name == "timeout" })
	// The project is the current directory's (SPEC §6, §10), never one
	// --cwd names: --cwd must lie inside it, as an agent's cwd must lie
	// inside its session's project.
	root, err := prefs.ProjectRoot(e.cwd)
	if err != nil {
		fmt.Fprintf(e.stderr, "agentgate run: the current directory %s: %v\n", display.Word(e.cwd), err)
		return exitDeclined
	}
	dir := e.cwd
	if *cwdFlag != "" {
		dir = *cwdFlag
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(e.cwd, dir)
		}
	}
	h, err := host.Open(context.Background(), host.Options{Paths: e.paths, Kind: exec.HostCLI, AuditHost: "cli"})
	if err != nil {
		fmt.Fprintf(e.stderr, "agentgate run: %v\n", err)
		return exitDeclined
	}
	defer h.Close()
	if h.SettingsErr != nil {
		fmt.Fprintf(e.stderr, "agentgate run: %v\n", h.SettingsErr)
		return exitDeclined
	}
	if e.stdinIsTerminal() {
		h.Broker.SetApprover(newTerminalApprover(e.stdin, e.stderr, h.Store, h.Grants))
	}
	session, werr := h.Broker.OpenSession(wire.HelloParams{Provider: *provider, ProjectRoot: root, Client: "agentgate run"}, wire.Peer{PID: os.Getpid()})
	if werr != nil {
		fmt.Fprintf(e.stderr, "agentgate run: %s\n", werr.Message)
		return exitDeclined
	}
	defer session.Close()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()

	params := wire.ProposeParams{Argv: argv, Cwd: dir}
	if timeoutSet {
		// Validation refuses ≤ 0 (a sub-millisecond value included) and
		// more than 600 s with the range, before anything runs: exit 2.
		ms := timeout.Milliseconds()
		params.TimeoutMS = &ms
	}
	proposed, werr := session.Propose(params)
	q := prefs.Query{Argv: argv, Provider: *provider, ProjectRoot: root, Dir: dir}
	if werr != nil {
		return reportRefusal(e, werr, q, h.Store)
	}
	if proposed.State == wire.StatePending || proposed.State == wire.StateQueued {
		if code, done := awaitStart(ctx, e, session, proposed.RunID, q, h.Store); done {
			return code
		}
	}
	run, ok := h.Executor.Get(proposed.RunID)
	if !ok {
		fmt.Fprintf(e.stderr, "agentgate run: run %s did not start\n", proposed.RunID)
		return exitDeclined
	}
	started := run.Record()
	fmt.Fprintf(e.stderr, "agentgate: run %s started (%s)%s\n", run.ID(), display.Command(argv), confinementNote(started.Confinement))
	rec := streamRun(ctx, e, run)
	if len(rec.ProtectedChanged) > 0 {
		fmt.Fprintf(e.stderr, "agentgate: ⚠ run %s changed files that steer agents and tools; look at them before the next agent session: %s\n",
			rec.ID, display.Text(strings.Join(rec.ProtectedChanged, ", ")))
	}
	return reportEnd(e, rec)
}

// confinementNote is " — " and the confinement's one line (what the run
// may write, its network), or "" when c says nothing.
func confinementNote(c *runinfo.Confinement) string {
	if c == nil || c.Summary() == "" {
		return ""
	}
	return " — " + display.Text(c.Summary())
}

// awaitStart waits for a pending or queued proposal to start. It returns
// done=true with an exit code when it ended without running.
func awaitStart(ctx context.Context, e env, s *agentbridge.Session, id string, q prefs.Query, store *prefs.Store) (int, bool) {
	argv := q.Argv
	for {
		wait := int64(250)
		res, werr := s.Wait(ctx, wire.WaitParams{RunID: id, WaitMS: &wait, MaxBytes: 1})
		if werr != nil {
			if ctx.Err() != nil {
				s.Cancel(context.Background(), id)
				fmt.Fprintf(e.stderr, "agentgate run: interrupted before %s started; nothing ran.\n", display.Command(argv))
				return exitDeclined, true
			}
			return reportRefusal(e, werr, q, store), true
		}
		if res.State != wire.StatePending && res.State != wire.StateQueued {
			return 0, false
		}
		if ctx.Err() != nil {
			s.Cancel(context.Background(), id)
			fmt.Fprintf(e.stderr, "agentgate run: interrupted before %s started; nothing ran.\n", display.Command(argv))
			return exitDeclined, true
		}
	}
}

// streamRun copies the run's stdout and stderr as they arrive until it ends,
// cancelling it when ctx ends (a signal), and returns its final record.
func streamRun(ctx context.Context, e env, run *exec.Run) exec.Record {
	var cursors [2]int64
	streams := [2]exec.Stream{exec.Stdout, exec.Stderr}
	outs := [2]interface{ Write([]byte) (int, error) }{e.rawStdout, e.rawStderr}
	copyOnce := func() (eof bool) {
		eof = true
		for i, s := range streams {
			for {
				chunk, err := run.Read(s, cursors[i], 256<<10)
				if err != nil {
					break
				}
				if chunk.Dropped {
					fmt.Fprintf(e.stderr, "\nagentgate: %d bytes of %s were no longer retained and are missing here\n", chunk.Next-int64(len(chunk.Data))-cursors[i], s)
				}
				if len(chunk.Data) > 0 {
					outs[i].Write(chunk.Data)
				}
				cursors[i] = chunk.Next
				if !chunk.EOF {
					eof = false
				}
				if len(chunk.Data) == 0 {
					break
				}
			}
		}
		return eof
	}
	cancelled := false
	ticker := time.NewTicker(runPoll)
	defer ticker.Stop()
	for {
		select {
		case <-run.Done():
			for !copyOnce() {
				time.Sleep(runPoll)
			}
			return run.Record()
		case <-ctx.Done():
			if !cancelled {
				cancelled = true
				fmt.Fprintf(e.stderr, "\nagentgate: signal received, cancelling run %s and every process it started\n", run.ID())
				run.Cancel()
			}
			copyOnce()
			select {
			case <-run.Done():
			case <-ticker.C:
			}
		case <-ticker.C:
			copyOnce()
		}
	}
}

// reportEnd prints how the run ended and returns the exit code.
func reportEnd(e env, rec exec.Record) int {
	switch rec.State {
	case exec.StateExited:
		if rec.ExitCode != nil && *rec.ExitCode == 0 {
			return exitOK
		}
		code := -1
		if rec.ExitCode != nil {
			code = *rec.ExitCode
		}
		fmt.Fprintf(e.stderr, "agentgate: run %s exited with code %d\n", rec.ID, code)
		return exitFailed
	case exec.StateTimedOut:
		fmt.Fprintf(e.stderr, "agentgate: run %s timed out after %s; it and every process it started were ended\n", rec.ID, time.Duration(rec.TimeoutMS)*time.Millisecond)
		return exitFailed
	case exec.StateCancelled:
		fmt.Fprintf(e.stderr, "agentgate: run %s was cancelled; it and every process it started were ended\n", rec.ID)
		return exitFailed
	case exec.StateFailedToStart:
		fmt.Fprintf(e.stderr, "agentgate: run %s could not start: %s\n", rec.ID, rec.Error)
		return exitDeclined
	default:
		fmt.Fprintf(e.stderr, "agentgate: run %s ended in state %s %s\n", rec.ID, rec.State, rec.Error)
		return exitFailed
	}
}

// reportRefusal prints why the broker refused q's command and returns
// exitDeclined. Without a person to ask (no_approver) it names the
// allow-list file and the exact line that would let the command run
// unattended — or, when a rule matched and the argument guard stopped it,
// the guard's findings.
func reportRefusal(e env, werr *wire.Error, q prefs.Query, store *prefs.Store) int {
	argv, provider := q.Argv, q.Provider
	code, message := werr.Message, werr.Message
	if werr.Data != nil {
		code, message = werr.Data.Code, werr.Data.Message
	}
	if code != wire.RefuseNoApprover {
		fmt.Fprintf(e.stderr, "agentgate run: not run: %s (%s)\n", display.Text(message), code)
		return exitDeclined
	}
	if d := store.Decide(q); d.Rule != nil && len(d.Findings) > 0 {
		fmt.Fprintf(e.stderr, "agentgate run: not run: %s, and stdin is not a terminal where a person could approve it. Nothing was started.\n", d.Explain(argv))
		return exitDeclined
	}
	line := store.RuleLineFor(argv)
	fmt.Fprintf(e.stderr, "agentgate run: not run: no allow-list rule allows %s, and stdin is not a terminal where a person could approve it. Nothing was started.\n", display.Command(argv))
	fmt.Fprintf(e.stderr, "To let it run unattended, add this line to %s:\n    %s\n", display.Text(e.paths.GlobalFile()), display.Text(line))
	if provider != "" {
		if f, err := e.paths.ProviderFile(provider); err == nil {
			fmt.Fprintf(e.stderr, "(or to %s, for provider %s only)\n", display.Text(f), display.Text(provider))
		}
	}
	fmt.Fprintf(e.stderr, "or run `agentgate allow add -- %s` in a terminal.\n", display.Command(argv))
	return exitDeclined
}
