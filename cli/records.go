package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/agentgate/agentgate/agentbridge/audit"
	"github.com/agentgate/agentgate/exec"
	"github.com/agentgate/agentgate/exec/display"
)

// runPs is `agentgate ps [--all]`: the runs in the run records of every
// host (the app, `agentgate run`), oldest first — running ones, or with
// --all every retained one. Records left running by a dead host are shown
// as lost (exec.MarkLost runs first).
func runPs(args []string, e env) int {
	flags := flag.NewFlagSet("ps", flag.ContinueOnError)
	flags.SetOutput(e.stderr)
	all := flags.Bool("all", false, "show finished runs too")
	if err := flags.Parse(args); err != nil || flags.NArg() != 0 {
		fmt.Fprintln(e.stderr, "usage: agentgate ps [--all]")
		return exitDeclined
	}
	if _, err := exec.MarkLost(e.paths.StateDir); err != nil {
		fmt.Fprintf(e.stderr, "agentgate ps: %v\n", err)
	}
	recs, err := exec.ListRecords(e.paths.StateDir)
	if err != nil {
		fmt.Fprintf(e.stderr, "agentgate ps: %v\n", err)
		return exitDeclined
	}
	tw := tabwriter.NewWriter(e.stdout, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATE\tHOST\tPROVIDER\tSTARTED\tTIME\tEXIT\tCOMMAND")
	for _, r := range recs {
		if !*all && r.State != exec.StateRunning {
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.State, r.HostKind, dash(r.Provider),
			r.StartedAt.Local().Format("15:04:05"), runDuration(r, e.now()), exitText(r), display.Command(r.Argv))
	}
	tw.Flush()
	return exitOK
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func runDuration(r exec.Record, now time.Time) string {
	end := r.EndedAt
	if end.IsZero() {
		end = now
	}
	return end.Sub(r.StartedAt).Round(100 * time.Millisecond).String()
}

func exitText(r exec.Record) string {
	if r.ExitCode != nil {
		return fmt.Sprint(*r.ExitCode)
	}
	return "-"
}

// runCancel is `agentgate cancel ID`: asks whichever process hosts the run
// to cancel it (exec.RequestCancel); the host ends the whole process tree.
// It waits up to about 15 s for the record to reach a final state and
// reports it.
func runCancel(args []string, e env) int {
	if len(args) != 1 {
		fmt.Fprintln(e.stderr, "usage: agentgate cancel ID   (IDs are listed by `agentgate ps`)")
		return exitDeclined
	}
	id := args[0]
	if err := exec.RequestCancel(e.paths.StateDir, id); err != nil {
		fmt.Fprintf(e.stderr, "agentgate cancel: %v\n", err)
		return exitDeclined
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		recs, _ := exec.ListRecords(e.paths.StateDir)
		for _, r := range recs {
			if r.ID == id && r.State.Final() {
				fmt.Fprintf(e.stdout, "run %s: %s\n", id, r.State)
				return exitOK
			}
		}
		if time.Now().After(deadline) {
			fmt.Fprintf(e.stderr, "agentgate cancel: asked the host of run %s to cancel it, but it has not ended yet; check `agentgate ps`\n", id)
			return exitFailed
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// runLog is `agentgate log [-f] [--json] [-n N]`: the audit log, oldest
// first, the last N entries (default 50, 0 for all); -f then follows new
// entries until interrupted; --json prints each entry as its JSON line.
func runLog(args []string, e env) int {
	flags := flag.NewFlagSet("log", flag.ContinueOnError)
	flags.SetOutput(e.stderr)
	follow := flags.Bool("f", false, "follow: print new entries as they are written")
	asJSON := flags.Bool("json", false, "print entries as JSON lines")
	last := flags.Int("n", 50, "show the last N entries first (0: all)")
	if err := flags.Parse(args); err != nil || flags.NArg() != 0 {
		fmt.Fprintln(e.stderr, "usage: agentgate log [-f] [--json] [-n N]")
		return exitDeclined
	}
	path := audit.Path(e.paths.StateDir)
	var entries []audit.Entry
	for entry, err := range audit.Entries(path, audit.NewestFirst) {
		if err != nil {
			if os.IsNotExist(err) {
				break
			}
			fmt.Fprintf(e.stderr, "agentgate log: %v\n", err)
			continue
		}
		entries = append(entries, entry)
		if *last > 0 && len(entries) == *last {
			break
		}
	}
	for i := len(entries) - 1; i >= 0; i-- {
		printEntry(e, entries[i], *asJSON)
	}
	if !*follow {
		return exitOK
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	err := audit.Follow(ctx, path, func(entry audit.Entry, err error) bool {
		if err != nil {
			fmt.Fprintf(e.stderr, "agentgate log: %v\n", err)
			return true
		}
		printEntry(e, entry, *asJSON)
		return true
	})
	if err != nil && ctx.Err() == nil {
		fmt.Fprintf(e.stderr, "agentgate log: %v\n", err)
		return exitDeclined
	}
	return exitOK
}

// printEntry prints one audit entry: its JSON line, or one readable line
// (time, kind, run, who, what, outcome) with the command in display form.
func printEntry(e env, entry audit.Entry, asJSON bool) {
	if asJSON {
		line, err := audit.Marshal(entry)
		if err != nil {
			line, _ = json.Marshal(entry)
			line = append(line, '\n')
		}
		e.stdout.Write(line)
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %-10s", entry.Time.Local().Format("2006-01-02 15:04:05"), entry.Kind)
	if entry.RunID != "" {
		fmt.Fprintf(&b, " %s", entry.RunID)
	}
	who := entry.Host
	if entry.Provider != "" {
		who += "/" + entry.Provider
	}
	if who != "" {
		fmt.Fprintf(&b, " [%s]", who)
	}
	switch {
	case len(entry.Argv) > 0:
		fmt.Fprintf(&b, " %s", display.Command(entry.Argv))
	case entry.CommandLine != "":
		fmt.Fprintf(&b, " shell: %s", display.Word(entry.CommandLine))
	}
	if entry.Decision != "" {
		fmt.Fprintf(&b, " → %s", entry.Decision)
		if entry.By != "" {
			fmt.Fprintf(&b, " by %s", entry.By)
		}
	}
	if entry.Rule != nil {
		fmt.Fprintf(&b, " rule «%s» (%s, %s:%d)", entry.Rule.Text, entry.Rule.Scope, entry.Rule.File, entry.Rule.Line)
	}
	if entry.Grant != nil {
		fmt.Fprintf(&b, " %s", entry.Grant)
	}
	if entry.Code != "" {
		fmt.Fprintf(&b, " code=%s", entry.Code)
	}
	if entry.State != "" {
		fmt.Fprintf(&b, " state=%s", entry.State)
	}
	if entry.ExitCode != nil {
		fmt.Fprintf(&b, " exit=%d", *entry.ExitCode)
	}
	if entry.Message != "" {
		fmt.Fprintf(&b, " %q", entry.Message)
	}
	if entry.WithoutWriteConfinement {
		b.WriteString(" without write confinement")
	}
	if c := entry.Confinement; c != nil && c.Summary() != "" {
		fmt.Fprintf(&b, " (%s)", c.Summary())
	}
	if len(entry.ProtectedChanged) > 0 {
		fmt.Fprintf(&b, " ⚠ files that steer agents and tools changed: %s", strings.Join(entry.ProtectedChanged, ", "))
	}
	if c := entry.Changes; c != nil {
		fmt.Fprintf(&b, " created=%d modified=%d deleted=%d", len(c.Created), len(c.Modified), len(c.Deleted))
		if c.Incomplete {
			fmt.Fprintf(&b, " (incomplete: %s)", display.Word(c.Reason))
		}
	}
	// One entry, one line: whatever an agent put into it is escaped.
	fmt.Fprintln(e.stdout, display.Text(b.String()))
}
