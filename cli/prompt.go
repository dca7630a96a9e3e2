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
// The choices are: approve once, deny, or always allow — the program
// (argv[0]) or the exact command — into a scope (global, the provider's list
// when there is a provider, the project's list). Choosing the program of an
// interpreter or launcher (prefs.IsLauncher) shows why that allows anything
// and needs a second yes. A rule is written through prefs.Store.Add, which
// for the project scope also records the person's confirmation (trust).
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
func newTerminalApprover(in io.Reader, out io.Writer, store *prefs.Store) *terminalApprover {
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
	return &terminalApprover{lines: lines, in: in, out: out, store: store}
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
	for {
		fmt.Fprintf(a.out, "Run it? [o]nce, [d]eny, always allow the [p]rogram %s, always allow the [e]xact command: ", display.Word(cmd.Argv[0]))
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
		default:
			fmt.Fprintf(a.out, "Please answer o, d, p or e.\n")
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
