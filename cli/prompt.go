package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentgate/agentgate/agentbridge"
	"github.com/agentgate/agentgate/exec/display"
	"github.com/agentgate/agentgate/prefs"
)

// terminalApprover is the terminal prompt of `agentgate run`: an
// agentbridge.Approver that asks the person at the terminal.
//
// The choices are: approve once, deny, always allow — the program (argv[0])
// or the exact command — into a scope (global, the provider's list when
// there is a provider, the project's list), or allow temporarily — the
// program or the exact command, for 15 minutes or 1 hour. Choosing the
// program of an interpreter or launcher (prefs.IsLauncher) as a rule shows
// why that allows anything and needs a second yes; as a grant it is not
// offered (only the exact command). A rule is written through
// prefs.Store.Add, which for the project scope also records the person's
// confirmation (trust). A grant given here is bound to the project and the
// resolved executable and applies to every provider (prefs.Grants.Give).
//
// A command with argument-guard findings is shown with them, and only its
// exact command is offered, as a rule (with a warning and a second yes) or
// a grant; with a finding no rule covers (the repository's configuration,
// sudo) neither is offered.
type terminalApprover struct {
	// lines delivers the person's answers, one line each, with the time it
	// was read; closed at EOF.
	lines <-chan typedLine
	// in is the terminal, whose typed-ahead input is discarded before each
	// question (flushTerminalInput).
	in io.Reader
	// out is where the prompt is written (the terminal).
	out io.Writer
	// store writes "always allow" rules.
	store *prefs.Store
	// grants records temporary grants; nil offers none.
	grants *prefs.Grants
	// mu serialises questions: one prompt at a time.
	mu sync.Mutex
}

// typedLine is one line the person typed.
type typedLine struct {
	// text is the line without surrounding space.
	text string
	// at is when it was read.
	at time.Time
}

// newTerminalApprover reads answers from in (a terminal) in a goroutine of
// its own, so a question can end when its context does.
func newTerminalApprover(in io.Reader, out io.Writer, store *prefs.Store, grants *prefs.Grants) *terminalApprover {
	lines := make(chan typedLine)
	go func() {
		defer close(lines)
		r := bufio.NewReader(in)
		for {
			line, err := r.ReadString('\n')
			if line != "" || err == nil {
				lines <- typedLine{text: strings.TrimSpace(line), at: time.Now()}
			}
			if err != nil {
				return
			}
		}
	}()
	return &terminalApprover{lines: lines, in: in, out: out, store: store, grants: grants}
}

// Ask implements agentbridge.Approver.
func (a *terminalApprover) Ask(ctx context.Context, req *agentbridge.ApprovalRequest) (agentbridge.Answer, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	cmd := req.Command
	if req.MatchedRule != nil {
		fmt.Fprintf(a.out, "\nagentgate: %s matches this command, but the argument guard stopped it:\n", req.MatchedRule.Describe())
	} else {
		fmt.Fprintf(a.out, "\nagentgate: no allow-list rule allows this command.\n")
	}
	for _, f := range req.Findings {
		fmt.Fprintf(a.out, "  ! %s\n", f)
	}
	if len(req.ProtectedChanged) > 0 {
		fmt.Fprintf(a.out, "  ! earlier runs in this project changed files that steer agents and tools; look at them before you answer:\n")
		for _, line := range req.ProtectedChanged {
			fmt.Fprintf(a.out, "      %s\n", line)
		}
	}
	fmt.Fprintf(a.out, "  command:    %s\n", display.Command(cmd.Argv))
	prog := display.Word(cmd.Executable)
	if cmd.ExecutableResolved != "" && cmd.ExecutableResolved != cmd.Executable {
		prog += " → " + display.Word(cmd.ExecutableResolved)
	}
	fmt.Fprintf(a.out, "  program:    %s\n", prog)
	fmt.Fprintf(a.out, "  directory:  %s (project %s)\n", display.Word(cmd.DirRel), display.Word(cmd.ProjectRoot))
	fmt.Fprintf(a.out, "  timeout:    %s\n", cmd.Timeout)
	if c := req.Confinement; c.Writes != nil || c.Unconfined != "" {
		fmt.Fprintf(a.out, "  confined:   %s\n", display.Text(c.Summary()))
	}
	if len(cmd.Stdin) > 0 {
		fmt.Fprintf(a.out, "  stdin:      %d bytes\n", len(cmd.Stdin))
	}
	if !req.Expires.IsZero() {
		fmt.Fprintf(a.out, "  expires:    in %s\n", time.Until(req.Expires).Round(time.Second))
	}
	// With findings only the exact command may become a rule (it covers its
	// own arguments); a finding no rule covers (the repository, sudo)
	// leaves no rule to offer.
	program, exact := len(req.Findings) == 0, !slices.ContainsFunc(req.Findings, func(f prefs.Finding) bool { return f.Arg < 0 })
	temporarily := ""
	if a.grants != nil && exact {
		temporarily = ", allow [t]emporarily"
	}
	for {
		var question string
		switch {
		case program:
			question = fmt.Sprintf("Run it? [o]nce, [d]eny, always allow the [p]rogram %s, always allow the [e]xact command%s: ", display.Word(cmd.Argv[0]), temporarily)
		case exact:
			question = fmt.Sprintf("Run it? [o]nce, [d]eny, always allow the [e]xact command (these arguments only)%s: ", temporarily)
		default:
			question = "Run it? [o]nce, [d]eny (no rule can allow it unattended): "
		}
		choice, err := a.ask(ctx, question)
		if err != nil {
			return agentbridge.Answer{}, err
		}
		switch strings.ToLower(choice) {
		case "o", "once":
			return agentbridge.Answer{Approved: true, By: "terminal"}, nil
		case "d", "deny", "n", "no":
			return agentbridge.Answer{Approved: false, Message: "denied at the terminal", By: "terminal"}, nil
		case "p", "program":
			if !program {
				fmt.Fprintf(a.out, "A rule for the program would not allow these arguments; answer o, d or e.\n")
				continue
			}
			if ok, err := a.always(ctx, req, cmd.Argv[:1]); err != nil || ok {
				return agentbridge.Answer{Approved: ok, By: "terminal"}, err
			}
		case "e", "exact":
			if !exact {
				fmt.Fprintf(a.out, "No rule lets this run unattended; answer o or d.\n")
				continue
			}
			if ok, err := a.always(ctx, req, cmd.Argv); err != nil || ok {
				return agentbridge.Answer{Approved: ok, By: "terminal"}, err
			}
		case "t", "temporarily":
			if temporarily == "" {
				fmt.Fprintf(a.out, "Please answer one of the letters in brackets.\n")
				continue
			}
			if ok, err := a.temporarily(ctx, req); err != nil || ok {
				return agentbridge.Answer{Approved: ok, By: "terminal"}, err
			}
		default:
			fmt.Fprintf(a.out, "Please answer one of the letters in brackets.\n")
		}
	}
}

// always asks for the scope, warns about launchers, writes the rule and
// reports whether to run. ok=false with a nil error goes back to the main
// question.
func (a *terminalApprover) always(ctx context.Context, req *agentbridge.ApprovalRequest, tokens []string) (bool, error) {
	warning := ""
	switch {
	case len(tokens) == 1 && prefs.IsLauncher(tokens[0]):
		warning = "Warning: " + prefs.LauncherWarning(tokens[0]) + ".\nAllow the program " + display.Word(tokens[0]) + " anyway? [y/N]: "
	case len(req.Findings) > 0:
		warning = "Warning: this command " + findingsSummary(req.Findings) + "; the rule lets an agent run exactly this command again without asking.\nAllow it always? [y/N]: "
	}
	if warning != "" {
		answer, err := a.ask(ctx, warning)
		if err != nil {
			return false, err
		}
		if a := strings.ToLower(answer); a != "y" && a != "yes" {
			return false, nil
		}
	}
	type option struct {
		key   string
		label string
		scope prefs.Scope
	}
	options := []option{{"g", "[g]lobal", prefs.ScopeGlobal}}
	if req.Provider != "" {
		options = append(options, option{"v", "pro[v]ider " + display.Text(req.Provider), prefs.ScopeProvider})
	}
	options = append(options, option{"j", "pro[j]ect " + display.Text(req.ProjectRoot), prefs.ScopeProject})
	labels := make([]string, len(options))
	for i, o := range options {
		labels[i] = o.label
	}
	for {
		answer, err := a.ask(ctx, fmt.Sprintf("Always allow (allow-list line: %s) in which list? %s, or [c]ancel: ", display.Text(prefs.FormatList(tokens)), strings.Join(labels, ", ")))
		if err != nil {
			return false, err
		}
		answer = strings.ToLower(answer)
		if answer == "c" || answer == "cancel" {
			return false, nil
		}
		for _, o := range options {
			if answer != o.key {
				continue
			}
			rule, err := a.store.Add(o.scope, req.Provider, req.ProjectRoot, tokens)
			if err != nil {
				fmt.Fprintf(a.out, "Could not write the rule: %s\n", display.Text(err.Error()))
				return false, nil
			}
			fmt.Fprintf(a.out, "Added the line %s to %s:%d.\n", display.Text(prefs.FormatList(rule.Tokens)), display.Text(rule.File), rule.Line)
			return true, nil
		}
		fmt.Fprintf(a.out, "Please answer one of the letters in brackets.\n")
	}
}

// grantDurations are the terminal's temporary grants: key, label, length.
var grantDurations = []struct {
	key, label string
	d          time.Duration
}{{"1", "[1]5 minutes", 15 * time.Minute}, {"h", "1 [h]our", time.Hour}}

// temporarily asks for how long and for what (the program or the exact
// command; the exact command only for a launcher), gives the grant and
// reports whether to run. ok=false with a nil error goes back to the main
// question.
func (a *terminalApprover) temporarily(ctx context.Context, req *agentbridge.ApprovalRequest) (bool, error) {
	cmd := req.Command
	var d time.Duration
	for d == 0 {
		answer, err := a.ask(ctx, fmt.Sprintf("Allow for how long? %s or %s, or [c]ancel: ", grantDurations[0].label, grantDurations[1].label))
		if err != nil {
			return false, err
		}
		switch answer = strings.ToLower(answer); answer {
		case "c", "cancel":
			return false, nil
		case "15", "15m", "15 minutes":
			answer = "1"
		case "1h", "hour", "1 hour":
			answer = "h"
		}
		for _, g := range grantDurations {
			if answer == g.key {
				d = g.d
			}
		}
		if d == 0 {
			fmt.Fprintf(a.out, "Please answer 1, h or c.\n")
		}
	}
	kind := prefs.GrantExact
	switch {
	case prefs.IsLauncher(cmd.Argv[0]):
		fmt.Fprintf(a.out, "%s can run arbitrary code (it is an interpreter or launcher), so only the exact command can be allowed for a while.\n", display.Word(cmd.Argv[0]))
	case len(req.Findings) > 0:
		fmt.Fprintf(a.out, "This command %s, so only the exact command can be allowed for a while.\n", findingsSummary(req.Findings))
	default:
		for chosen := false; !chosen; {
			answer, err := a.ask(ctx, fmt.Sprintf("Allow what for %s? the [p]rogram %s with any arguments, the [e]xact command, or [c]ancel: ", display.Duration(d), display.Word(cmd.Argv[0])))
			if err != nil {
				return false, err
			}
			switch strings.ToLower(answer) {
			case "c", "cancel":
				return false, nil
			case "p", "program":
				kind, chosen = prefs.GrantProgram, true
			case "e", "exact":
				kind, chosen = prefs.GrantExact, true
			default:
				fmt.Fprintf(a.out, "Please answer p, e or c.\n")
			}
		}
	}
	g, err := a.grants.Give(prefs.GrantRequest{Kind: kind, Argv: cmd.Argv, Executable: cmd.Executable, ProgramID: cmd.ProgramID, Project: req.ProjectRoot,
		AllProviders: true, By: "terminal", For: d})
	if err != nil {
		fmt.Fprintf(a.out, "Could not give the grant: %v\n", err)
		return false, nil
	}
	what := "the program " + display.Word(cmd.Argv[0])
	if kind == prefs.GrantExact {
		what = "exactly " + display.Command(cmd.Argv)
	}
	fmt.Fprintf(a.out, "Allowed %s (%s) in %s for every agent, for %s: grant %s. End it early with `agentgate allow revoke %s`.\n",
		what, display.Word(cmd.Executable), display.Word(req.ProjectRoot), display.Duration(d), g.ID, g.ID)
	return true, nil
}

// findingsSummary joins what the findings say a command does: "writes the
// diff to a file anywhere, runs a program on every file it searches".
func findingsSummary(fs []prefs.Finding) string {
	whys := make([]string, 0, len(fs))
	for _, f := range fs {
		if !slices.Contains(whys, f.Why) {
			whys = append(whys, f.Why)
		}
	}
	return strings.Join(whys, ", ")
}

// ask writes question and waits for the person's next line, ctx's end, or
// EOF (an error: nobody can answer).
//
// Only a line typed after the question was shown counts: input typed ahead
// (by a person, or by a program writing into the terminal before the
// prompt appeared) is discarded from the terminal's queue and skipped, so it
// can never answer a question it did not see. The queue is flushed and the
// moment taken before the question is written, never after: an answer typed
// as soon as the question appears must count.
func (a *terminalApprover) ask(ctx context.Context, question string) (string, error) {
	flushTerminalInput(a.in)
	shown := time.Now()
	fmt.Fprint(a.out, question)
	for {
		select {
		case line, ok := <-a.lines:
			if !ok {
				return "", fmt.Errorf("the terminal closed before an answer")
			}
			if line.at.Before(shown) {
				continue
			}
			return line.text, nil
		case <-ctx.Done():
			fmt.Fprintln(a.out)
			return "", ctx.Err()
		}
	}
}
