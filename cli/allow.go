package cli

import (
	"bufio"
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/agentgate/agentgate/agentbridge/audit"
	"github.com/agentgate/agentgate/agentbridge/rulestats"
	"github.com/agentgate/agentgate/cli/hook"
	"github.com/agentgate/agentgate/exec/display"
	"github.com/agentgate/agentgate/exec/procspec"
	"github.com/agentgate/agentgate/prefs"
)

// allowOptions are the flags every `allow` subcommand takes.
type allowOptions struct {
	// provider is --provider: the provider whose list also applies.
	provider string
	// project is --project: the project directory.
	project string
	// scope is --scope: the list add and rm change.
	scope string
	// all is --all: revoke every grant.
	all bool
	// stats is --stats: list each rule with its uses.
	stats bool
}

// runAllow is `agentgate allow list|add|rm|check|trust [--provider NAME]
// [--project DIR] [--scope global|provider|project] [-- ARGV…]`.
//
//   - list: every rule of the global list, the provider's list (with
//     --provider) and the project's list, with file:line, and whether a
//     project rule is active (confirmed by a person); malformed lines too.
//   - check -- ARGV: the decision and the matching rule with its scope and
//     file:line; exit 0 allowed, 1 not (then the line that would allow it).
//   - add -- ARGV / rm -- ARGV: write or remove a rule in --scope (default
//     global). They change what people decided, so they need a terminal on
//     stdin (exit 2 otherwise); add warns before allowing an interpreter or
//     launcher as a whole program.
//   - trust: shows the project rules changed outside agentgate and, when the
//     person confirms at the terminal, makes the current file active.
//   - grants: the temporary grants in force, with their time left (every
//     project, or only --project's when given).
//   - revoke ID / revoke --all: end one grant, or all, at once. Ending a
//     grant only takes permission away, so it needs no terminal.
//
// The project defaults to the current directory's project (the enclosing
// git work tree, else the directory itself).
func runAllow(args []string, e env) int {
	if len(args) == 0 {
		fmt.Fprintln(e.stderr, allowUsage)
		return exitDeclined
	}
	sub := args[0]
	var o allowOptions
	flags := flag.NewFlagSet("allow "+sub, flag.ContinueOnError)
	flags.SetOutput(e.stderr)
	flags.StringVar(&o.provider, "provider", "", "provider whose list also applies (e.g. claude-code)")
	flags.StringVar(&o.project, "project", "", "project directory (default: the current directory's project)")
	flags.StringVar(&o.scope, "scope", "global", "list to change for add and rm: global, provider or project")
	switch sub {
	case "revoke":
		flags.BoolVar(&o.all, "all", false, "revoke every temporary grant")
	case "list":
		flags.BoolVar(&o.stats, "stats", false, "show how many commands each rule allowed, its last use, and unused or redundant rules")
	}
	if err := flags.Parse(args[1:]); err != nil {
		return exitDeclined
	}
	argv := flags.Args()
	switch sub {
	case "grants":
		return allowGrants(e, o.project, argv)
	case "revoke":
		return allowRevoke(e, o.all, argv)
	}
	dir := o.project
	if dir == "" {
		dir = e.cwd
	} else if !filepath.IsAbs(dir) {
		dir = filepath.Join(e.cwd, dir)
	}
	root, err := prefs.ProjectRoot(dir)
	if err != nil {
		fmt.Fprintf(e.stderr, "agentgate allow: the project %s: %v\n", display.Word(dir), err)
		return exitDeclined
	}
	if err := e.checkDirs(root); err != nil {
		fmt.Fprintf(e.stderr, "agentgate allow: %v\n", err)
		return exitDeclined
	}
	store, err := prefs.Open(e.paths)
	if err != nil {
		fmt.Fprintf(e.stderr, "agentgate allow: %s\n", display.Text(err.Error()))
		return exitDeclined
	}
	needsArgv := sub == "check" || sub == "add" || sub == "rm"
	if needsArgv != (len(argv) > 0) {
		if needsArgv {
			fmt.Fprintf(e.stderr, "agentgate allow %s: name the command after --, e.g. agentgate allow %s -- git status\n", sub, sub)
		} else {
			fmt.Fprintf(e.stderr, "agentgate allow %s takes no command\n", sub)
		}
		return exitDeclined
	}
	switch sub {
	case "list":
		return allowList(e, store, o.provider, root, o.stats)
	case "check":
		return allowCheck(e, store, argv, o.provider, root)
	case "add", "rm", "trust":
		if !e.stdinIsTerminal() {
			fmt.Fprintf(e.stderr, "agentgate allow %s changes what a person decided, so it must be run at a terminal (stdin is not one). Nothing changed.\n", sub)
			return exitDeclined
		}
	default:
		fmt.Fprintf(e.stderr, "agentgate allow: unknown subcommand %q: choose list, add, rm, check, trust, grants or revoke\n", sub)
		return exitDeclined
	}
	in := bufio.NewReader(e.stdin)
	switch sub {
	case "add":
		return allowAdd(e, in, store, prefs.Scope(o.scope), o.provider, root, argv)
	case "rm":
		if err := store.Remove(prefs.Scope(o.scope), o.provider, root, argv); err != nil {
			fmt.Fprintf(e.stderr, "agentgate allow rm: %s\n", display.Text(err.Error()))
			return exitDeclined
		}
		file, _ := store.FileFor(prefs.Scope(o.scope), o.provider, root)
		fmt.Fprintf(e.stdout, "Removed %s from %s.\n", display.Text(prefs.FormatList(argv)), display.Text(file))
		return exitOK
	default:
		return allowTrust(e, in, store, root)
	}
}

// allowList is `agentgate allow list [--stats]`: every rule of the global
// list, the provider's (with --provider) and the project's, with its line;
// with --stats as a table with how many commands each allowed, when it last
// did and what, and the unused and redundant marks (package rulestats).
func allowList(e env, store *prefs.Store, provider, root string, withStats bool) int {
	var counter *rulestats.Counter
	if withStats {
		counter = rulestats.New(e.paths.StateDir, audit.Path(e.paths.StateDir))
		counter.Now = e.now
	}
	scopes := []prefs.Scope{prefs.ScopeGlobal}
	if provider != "" {
		scopes = append(scopes, prefs.ScopeProvider)
	}
	scopes = append(scopes, prefs.ScopeProject)
	status := exitOK
	for _, scope := range scopes {
		file, err := store.FileFor(scope, provider, root)
		if err != nil {
			fmt.Fprintf(e.stderr, "agentgate allow list: %s\n", display.Text(err.Error()))
			status = exitDeclined
			continue
		}
		rules, bad, err := store.Rules(scope, provider, root)
		if err != nil {
			fmt.Fprintf(e.stderr, "agentgate allow list: %s\n", display.Text(err.Error()))
			status = exitDeclined
			continue
		}
		fmt.Fprintf(e.stdout, "%s: %s\n", scopeLabel(scope, provider), display.Text(file))
		if len(rules) == 0 && len(bad) == 0 {
			fmt.Fprintf(e.stdout, "  (no rules)\n")
		}
		if counter != nil && len(rules) > 0 {
			if err := listStats(e, counter, store, rules); err != nil {
				fmt.Fprintf(e.stderr, "agentgate allow list: %s\n", display.Text(err.Error()))
				status = exitDeclined
			}
			rules = nil
		}
		for _, r := range rules {
			note := ""
			if !r.Active {
				note = "   [inactive: changed outside agentgate; review with `agentgate allow trust`]"
			}
			fmt.Fprintf(e.stdout, "  %4d  %s%s\n", r.Line, display.Text(prefs.FormatList(r.Tokens)), note)
		}
		for _, pe := range bad {
			fmt.Fprintf(e.stdout, "  skipped: %s\n", display.Text(pe.Error()))
		}
	}
	return status
}

// listStats prints rules as a table: line, uses, last use, rule, and the
// last command or the rule's marks.
func listStats(e env, counter *rulestats.Counter, store *prefs.Store, rules []prefs.Rule) error {
	stats, err := counter.Stats(store.CoveringRule, rules)
	if stats == nil {
		return err
	}
	tw := tabwriter.NewWriter(e.stdout, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "  LINE\tUSES\tLAST USED\tRULE\tLAST COMMAND / NOTES")
	for _, st := range stats {
		last, notes := "-", st.Use.LastCommand
		if !st.Use.Last.IsZero() {
			last = st.Use.Last.Local().Format("2006-01-02 15:04")
		}
		var marks []string
		if !st.Rule.Active {
			marks = append(marks, "inactive: changed outside agentgate; review with `agentgate allow trust`")
		}
		if m := st.Marks(); m != "" {
			marks = append(marks, m)
		}
		if len(marks) > 0 {
			notes = strings.TrimSpace(notes + "  [" + strings.Join(marks, "; ") + "]")
		}
		fmt.Fprintf(tw, "  %4d\t%d\t%s\t%s\t%s\n", st.Rule.Line, st.Use.Count, last, display.Text(prefs.FormatList(st.Rule.Tokens)), display.Text(notes))
	}
	tw.Flush()
	return err
}

func scopeLabel(scope prefs.Scope, provider string) string {
	if scope == prefs.ScopeProvider {
		return "provider " + provider
	}
	return string(scope)
}

// allowCheck is `agentgate allow check -- ARGV` (argv run in the
// project's root): the rule that allows argv, else the temporary grant
// (for the program argv[0] resolves to on this terminal's PATH), each only
// when the argument guard finds nothing beyond its tokens; else the rule
// that matches and each finding of the guard, with what would let it run
// unattended, or that nothing matches, with the line that would allow it.
func allowCheck(e env, store *prefs.Store, argv []string, provider, root string) int {
	d := store.Decide(prefs.Query{Argv: argv, Provider: provider, ProjectRoot: root, Dir: root})
	if d.Allowed && d.Rule != nil {
		fmt.Fprintf(e.stdout, "allowed: %s by %s\n", display.Command(argv), d.Rule.Describe())
		return exitOK
	}
	grants := prefs.OpenGrants(e.paths)
	grants.Now = e.now
	m, ok, err := grants.Match(prefs.GrantQuery{Argv: argv, Provider: provider, Project: root,
		Resolve: func(argv0 string) (string, procspec.FileID, bool) { return hook.ResolveProgram(argv0, e.cwd) }})
	if err != nil {
		fmt.Fprintf(e.stderr, "agentgate allow check: %s\n", display.Text(err.Error()))
	}
	if ok {
		if fs := prefs.Guard(argv, len(m.Grant.Tokens), root); len(fs) == 0 {
			fmt.Fprintf(e.stdout, "allowed: %s by %s\n", display.Command(argv), display.Text(audit.GrantOf(m).String()))
			return exitOK
		}
	}
	if d.Rule != nil {
		fmt.Fprintf(e.stdout, "not allowed unattended: %s matches %s, but the argument guard stopped it:\n", d.Rule.Describe(), display.Command(argv))
	} else {
		fmt.Fprintf(e.stdout, "not allowed: no active rule or temporary grant matches %s\n", display.Command(argv))
		if len(d.Findings) > 0 {
			fmt.Fprintf(e.stdout, "and the argument guard would stop it under any shorter rule:\n")
		}
	}
	for _, f := range d.Findings {
		fmt.Fprintf(e.stdout, "  - %s\n", f)
	}
	if slices.ContainsFunc(d.Findings, func(f prefs.Finding) bool { return f.Arg < 0 }) {
		fmt.Fprintf(e.stdout, "no rule lets it run unattended while that holds; a person can approve it on the desktop card or at the terminal prompt of `agentgate run`\n")
		return exitFailed
	}
	if len(d.Findings) > 0 {
		fmt.Fprintf(e.stdout, "only the exact command would allow it unattended; ")
	}
	fmt.Fprintf(e.stdout, "the line that would allow it in %s:\n    %s\n", display.Text(e.paths.GlobalFile()), display.Text(store.RuleLineFor(argv)))
	return exitFailed
}

func allowAdd(e env, in *bufio.Reader, store *prefs.Store, scope prefs.Scope, provider, root string, argv []string) int {
	if len(argv) == 1 && prefs.IsLauncher(argv[0]) {
		fmt.Fprintf(e.stdout, "Warning: %s, e.g. `agentgate allow add -- %s <args>`.\nAdd %s anyway? [y/N]: ",
			prefs.LauncherWarning(argv[0]), display.Word(argv[0]), display.Word(argv[0]))
		answer, _ := in.ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
			fmt.Fprintln(e.stdout, "Nothing changed.")
			return exitFailed
		}
	}
	rule, err := store.Add(scope, provider, root, argv)
	if err != nil {
		fmt.Fprintf(e.stderr, "agentgate allow add: %s\n", display.Text(err.Error()))
		return exitDeclined
	}
	fmt.Fprintf(e.stdout, "Added %s to %s:%d.\n", display.Text(prefs.FormatList(rule.Tokens)), display.Text(rule.File), rule.Line)
	return exitOK
}

func allowTrust(e env, in *bufio.Reader, store *prefs.Store, root string) int {
	changed, err := store.Untrusted(root)
	if err != nil {
		fmt.Fprintf(e.stderr, "agentgate allow trust: %s\n", display.Text(err.Error()))
		return exitDeclined
	}
	if len(changed) == 0 {
		fmt.Fprintf(e.stdout, "Every rule in %s is confirmed; nothing to review.\n", display.Text(prefs.ProjectFile(root)))
		return exitOK
	}
	fmt.Fprintf(e.stdout, "%d rules in %s changed outside agentgate and are inactive:\n", len(changed), display.Text(prefs.ProjectFile(root)))
	for _, r := range changed {
		launcher := ""
		if len(r.Tokens) == 1 && prefs.IsLauncher(r.Tokens[0]) {
			launcher = "   [warning: allows arbitrary code]"
		}
		fmt.Fprintf(e.stdout, "  %4d  %s%s\n", r.Line, display.Text(prefs.FormatList(r.Tokens)), launcher)
	}
	fmt.Fprintf(e.stdout, "Make these %d rules active? [y/N]: ", len(changed))
	answer, _ := in.ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
		fmt.Fprintln(e.stdout, "Nothing changed.")
		return exitFailed
	}
	// Exactly the rules shown are confirmed: a line the file gained while
	// the person was reading stays inactive.
	shown := make([][]string, len(changed))
	for i, r := range changed {
		shown[i] = r.Tokens
	}
	if err := store.TrustRules(root, shown); err != nil {
		fmt.Fprintf(e.stderr, "agentgate allow trust: %s\n", display.Text(err.Error()))
		return exitDeclined
	}
	fmt.Fprintln(e.stdout, "Confirmed.")
	return exitOK
}
