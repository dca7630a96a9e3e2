package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
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
	fmt.Fprintf(a.out, "\nagentgate: no allow-list rule allows this command.\n")
	fmt.Fprintf(a.out, "  command:    %s\n", display.Command(cmd.Argv))
	fmt.Fprintf(a.out, "  program:    %s\n", display.Word(cmd.Executable))
	fmt.Fprintf(a.out, "  directory:  %s (project %s)\n", display.Word(cmd.DirRel), display.Word(cmd.ProjectRoot))
	fmt.Fprintf(a.out, "  timeout:    %s\n", cmd.Timeout)
	if len(cmd.Stdin) > 0 {
		fmt.Fprintf(a.out, "  stdin:      %d bytes\n", len(cmd.Stdin))
	}
	if !req.Expires.IsZero() {
		fmt.Fprintf(a.out, "  expires:    in %s\n", time.Until(req.Expires).Round(time.Second))
	}
	temporarily := ""
	if a.grants != nil {
		temporarily = ", allow [t]emporarily"
	}
	for {
		fmt.Fprintf(a.out, "Run it? [o]nce, [d]eny, always allow the [p]rogram %s, always allow the [e]xact command%s: ", display.Word(cmd.Argv[0]), temporarily)
		choice, err := a.readLine(ctx)
		if err != nil {
			return agentbridge.Answer{}, err
		}
		switch strings.ToLower(choice) {
		case "o", "once":
			return agentbridge.Answer{Approved: true, By: "terminal"}, nil
		case "d", "deny", "n", "no":
			return agentbridge.Answer{Approved: false, Message: "denied at the terminal", By: "terminal"}, nil
		case "p", "program":
			if ok, err := a.always(ctx, req, cmd.Argv[:1]); err != nil || ok {
				return agentbridge.Answer{Approved: ok, By: "terminal"}, err
			}
		case "e", "exact":
			if ok, err := a.always(ctx, req, cmd.Argv); err != nil || ok {
				return agentbridge.Answer{Approved: ok, By: "terminal"}, err
			}
		case "t", "temporarily":
			if a.grants == nil {
				fmt.Fprintf(a.out, "Please answer o, d, p or e.\n")
				continue
			}
			if ok, err := a.temporarily(ctx, req); err != nil || ok {
				return agentbridge.Answer{Approved: ok, By: "terminal"}, err
			}
		default:
			fmt.Fprintf(a.out, "Please answer o, d, p, e or t.\n")
		}
	}
}

// always asks for the scope, warns about launchers, writes the rule and
// reports whether to run. ok=false with a nil error goes back to the main
// question.
func (a *terminalApprover) always(ctx context.Context, req *agentbridge.ApprovalRequest, tokens []string) (bool, error) {
	if len(tokens) == 1 && prefs.IsLauncher(tokens[0]) {
		fmt.Fprintf(a.out, "Warning: %s can run arbitrary code (it is an interpreter or launcher), so a rule for the program\n"+
			"alone would allow anything it is told to run. The exact command is the safer rule.\n"+
			"Allow the program %s anyway? [y/N]: ", display.Word(tokens[0]), display.Word(tokens[0]))
		answer, err := a.readLine(ctx)
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
		options = append(options, option{"v", "pro[v]ider " + req.Provider, prefs.ScopeProvider})
	}
	options = append(options, option{"j", "pro[j]ect " + req.ProjectRoot, prefs.ScopeProject})
	labels := make([]string, len(options))
	for i, o := range options {
		labels[i] = o.label
	}
	for {
		fmt.Fprintf(a.out, "Always allow (allow-list line: %s) in which list? %s, or [c]ancel: ", prefs.FormatList(tokens), strings.Join(labels, ", "))
		answer, err := a.readLine(ctx)
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
				fmt.Fprintf(a.out, "Could not write the rule: %v\n", err)
				return false, nil
			}
			fmt.Fprintf(a.out, "Added the line %s to %s:%d.\n", prefs.FormatList(rule.Tokens), rule.File, rule.Line)
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
		fmt.Fprintf(a.out, "Allow for how long? %s or %s, or [c]ancel: ", grantDurations[0].label, grantDurations[1].label)
		answer, err := a.readLine(ctx)
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
	if prefs.IsLauncher(cmd.Argv[0]) {
		fmt.Fprintf(a.out, "%s can run arbitrary code (it is an interpreter or launcher), so only the exact command can be allowed for a while.\n", display.Word(cmd.Argv[0]))
	} else {
		for chosen := false; !chosen; {
			fmt.Fprintf(a.out, "Allow what for %s? the [p]rogram %s with any arguments, the [e]xact command, or [c]ancel: ", display.Duration(d), display.Word(cmd.Argv[0]))
			answer, err := a.readLine(ctx)
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
	g, err := a.grants.Give(prefs.GrantRequest{Kind: kind, Argv: cmd.Argv, Executable: cmd.Executable, Project: req.ProjectRoot,
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

// readLine waits for the person's next line, ctx's end, or EOF (an error:
// nobody can answer).
//
// Only a line typed after the question was shown counts: input typed ahead
// (by a person, or by a program writing into the terminal before the
// prompt appeared) is discarded from the terminal's queue and skipped, so it
// can never answer a question it did not see.
func (a *terminalApprover) readLine(ctx context.Context) (string, error) {
	flushTerminalInput(a.in)
	shown := time.Now()
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
