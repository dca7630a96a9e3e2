package prefs

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"github.com/agentgate/agentgate/exec/display"
	"github.com/agentgate/agentgate/exec/envrisk"
)

// Finding is one reason the argument guard keeps a command from running on
// the strength of a rule alone: an argument that makes the
// program write outside its obvious output, run another program, or work
// on another directory; a wrapper rule that does not name what it wraps; a
// program that is never auto-allowed; a repository configuration that runs
// a program. A person sees every finding before approving.
type Finding struct {
	// Arg is the index in argv of the argument the finding is about (the
	// option, when its value is a separate argument); -1 when it concerns
	// the command as a whole or the repository's configuration.
	Arg int
	// Text is what the finding points at, in display form (control and
	// invisible characters escaped): the argument with its separate value
	// (`--output /tmp/x`), or a configuration entry (`core.pager = less`).
	Text string
	// Why says what it does, for a person: "writes the diff to a file
	// anywhere".
	Why string
}

// String returns the finding as one line for a person:
// "--output=/tmp/x (argument 3): writes the diff to a file anywhere".
func (f Finding) String() string {
	if f.Arg < 0 {
		return f.Text + ": " + f.Why
	}
	return fmt.Sprintf("%s (argument %d): %s", f.Text, f.Arg, f.Why)
}

// FindingsText joins findings into one sentence-like line for a refusal or
// an answer to an agent, "" for none.
func FindingsText(fs []Finding) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.String()
	}
	return strings.Join(parts, "; ")
}

// Guard returns what keeps argv from running on the strength of a rule of
// ruleLen tokens alone, or nil. It reads only argv:
//
//   - Wrappers are transparent: env, timeout, nice, nohup, stdbuf, time,
//     setsid, flock, xargs, command, builtin, exec and ionice are read with
//     their own options and the command they run is decided in their
//     place, recursively. A rule whose tokens stop inside the wrapper part
//     (`timeout 10` for `timeout 10 git push`) does not allow the wrapped
//     command. An env assignment of a variable that steers what a program
//     loads or runs (envrisk.Steers: LD_PRELOAD, GIT_SSH_COMMAND,
//     NODE_OPTIONS…) is a finding; so are flock -c and env -S/-C, and xargs
//     in front of a catalog program (it appends arguments the rule never
//     sees).
//   - sudo, doas, pkexec, su, runuser, run0 and sudoedit are never
//     auto-allowed, whatever the rule says.
//   - The command's program is looked up in the catalog (programs.go) by
//     base name, as IsLauncher does. Its options are normalised before
//     matching: --opt=value and --opt value, bundled short options (-ni is
//     -n -i), unambiguous prefixes of long options (--outp for --output;
//     a prefix of several options counts as each dangerous one), options
//     anywhere among the arguments (up to a --), subcommands with options
//     of their own (git diff, npm exec). Program-specific checks read sed
//     scripts, awk programs, find expressions, ssh -o options, make
//     variable assignments and the like.
//
// A finding whose argument is one of the rule's own tokens (index below
// ruleLen) is dropped: the person wrote it into the rule knowingly, so an
// exact-command rule allows exactly what it says. Findings about wrappers
// the rule does not cover, about programs never auto-allowed and about the
// repository are never dropped. ruleLen 0 returns every finding (for
// showing a command no rule allows).
//
// When the command (after its wrappers) is git, the repository it works on
// is checked as well: its configuration and hook programs, read from dir
// (the command's working directory, changed by git's -C, or the
// repository --git-dir names), see gitRepoFindings. These findings have
// Arg -1 and no rule covers them.
//
// Backslashes and quotes are not Guard's business: argv is what the
// program receives (the hook's shell words are resolved by
// shellword.AgentCommand first).
func Guard(argv []string, ruleLen int, dir string) []Finding {
	g := guardPool.Get().(*guardRun)
	defer g.release()
	g.argv = argv
	g.command(0)
	if g.git != nil {
		g.findings = append(g.findings, gitRepoFindingsFor(g.git, dir)...)
	}
	var kept []Finding
	for _, f := range g.findings {
		if f.Arg < 0 || f.Arg >= ruleLen {
			kept = append(kept, f)
		}
	}
	if ruleLen > 0 {
		for _, w := range g.wrappers {
			if ruleLen <= w.inner {
				kept = append(kept, Finding{Arg: w.inner, Text: display.Word(argv[w.inner]),
					Why: fmt.Sprintf("the rule names only the wrapper %s, which does not allow the command it runs", display.Word(argv[w.start]))})
			}
		}
	}
	return kept
}

// guardPool keeps guardRuns between Guard calls: Guard runs on every
// decision, and a decision that allocates makes the garbage collector
// mark the whole rule set (100,000 rules) the more often.
var guardPool = sync.Pool{New: func() any { return &guardRun{} }}

// newParsed lends a parsedCmd for argv with its program at prog, empty.
func (g *guardRun) newParsed(argv []string, prog int) *parsedCmd {
	if g.used == len(g.parsed) {
		g.parsed = append(g.parsed, &parsedCmd{})
	}
	pc := g.parsed[g.used]
	g.used++
	*pc = parsedCmd{argv: argv, prog: prog, end: len(argv), opts: pc.opts[:0], operands: pc.operands[:0]}
	return pc
}

// release empties g (keeping its slices' storage) and returns it to
// guardPool.
func (g *guardRun) release() {
	for _, pc := range g.parsed[:g.used] {
		pc.argv, pc.sub, pc.subCmd = nil, nil, nil
		clear(pc.opts)
	}
	g.argv, g.git, g.used = nil, nil, 0
	g.findings, g.wrappers = g.findings[:0], g.wrappers[:0]
	guardPool.Put(g)
}

// guardRun is one Guard call in progress.
type guardRun struct {
	// argv is the command.
	argv []string
	// findings collects what was found.
	findings []Finding
	// wrappers are the wrappers read, outermost first.
	wrappers []wrapperSpan
	// git is the git command read, when the command (after its wrappers)
	// is git: its repository's configuration is checked too.
	git *parsedCmd
	// parsed are the parsedCmds lent so far (reused across calls); used
	// counts those lent in this call.
	parsed []*parsedCmd
	used   int
}

// wrapperSpan is one wrapper in argv.
type wrapperSpan struct {
	// start is the wrapper's index in argv, inner the index of the program
	// it runs.
	start, inner int
}

// add records a finding about argv[at] (and its separate value at
// valueAt, or -1).
func (g *guardRun) add(at, valueAt int, why string) {
	end := at + 1
	if valueAt > at {
		end = valueAt + 1
	}
	g.findings = append(g.findings, Finding{Arg: at, Text: display.Command(g.argv[at:end]), Why: why})
}

// command reads the command starting at argv[start].
func (g *guardRun) command(start int) {
	if start >= len(g.argv) {
		return
	}
	p := programFor(g.argv[start], isWindows)
	if p == nil {
		return
	}
	name := display.Word(g.argv[start])
	if p.never != "" {
		g.findings = append(g.findings, Finding{Arg: -1, Text: name, Why: p.never + "; agentgate never allows it without a person"})
		return
	}
	if p.wrapper != nil {
		g.wrapped(start, p)
		return
	}
	if p.cmd == nil {
		return
	}
	pc := p.cmd.parse(g, g.argv, start+1)
	g.check(pc, p.cmd)
	if p == catalog["git"]() {
		g.git = pc
	}
}

// gitRepoFindingsFor checks the repository the git command pc uses when
// run in dir: dir changed by its -C options, or the repository its
// --git-dir names.
func gitRepoFindingsFor(pc *parsedCmd, dir string) []Finding {
	sub := ""
	if pc.sub != nil {
		sub = pc.argv[pc.sub.prog]
	}
	gitDir := ""
	for _, o := range pc.opts {
		if o.opt == nil || !o.hasValue || dir == "" {
			continue
		}
		switch {
		case o.name == "C":
			dir = joinDir(dir, o.value)
		case o.name == "git-dir":
			gitDir = joinDir(dir, o.value)
		}
	}
	if gitDir != "" {
		return gitRepoFindingsAt(gitDir, sub)
	}
	return gitRepoFindings(dir, sub)
}

// joinDir resolves p against dir as a program started in dir would.
func joinDir(dir, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(dir, p)
}

// check reports the dangerous options of a parsed command, runs its
// program-specific check, and descends into its subcommand.
func (g *guardRun) check(pc *parsedCmd, c *command) {
	for _, o := range pc.opts {
		if o.opt == nil || o.opt.why == "" {
			continue
		}
		if o.opt.when != nil && !o.opt.when(o.value, o.hasValue) {
			continue
		}
		why := o.opt.why
		if o.abbrev != "" {
			why = "abbreviates " + o.abbrev + ", which " + why
		}
		g.add(o.at, o.valueAt, why)
	}
	if c.check != nil {
		c.check(g, pc)
	}
	if pc.sub != nil {
		g.check(pc.sub, pc.subCmd)
	}
}

// wrapped reads a wrapper at argv[start] and decides the command it runs
// in its place.
func (g *guardRun) wrapped(start int, p *program) {
	w := p.wrapper
	pc := p.cmd.parse(g, g.argv, start+1)
	g.check(pc, p.cmd)
	for _, o := range pc.opts {
		if o.opt != nil && o.opt.noRun {
			return // command -v: describes, runs nothing
		}
	}
	i := pc.end
	for skip := w.leading; skip > 0 && i < len(g.argv); skip-- {
		i++
	}
	if w.lockCommand && i+1 < len(g.argv) && (g.argv[i] == "-c" || g.argv[i] == "--command") {
		g.add(i, i+1, "runs a shell command while holding the lock")
		return
	}
	if w.assignments {
		for ; i < len(g.argv); i++ {
			name, _, ok := strings.Cut(g.argv[i], "=")
			if !ok || name == "" {
				break
			}
			if envrisk.Steers(name) {
				g.add(i, -1, "sets "+name+", which changes what the program loads or runs")
			}
		}
	}
	if i >= len(g.argv) {
		return
	}
	if w.appendsInput {
		if inner := programFor(g.argv[i], isWindows); inner != nil {
			// Never covered by a rule: no rule can hold what the input adds.
			g.findings = append(g.findings, Finding{Arg: -1, Text: display.Command(g.argv[start : i+1]),
				Why: "xargs appends arguments read from its input to " + display.Word(g.argv[i]) + ", which no rule can see"})
		}
	}
	g.wrappers = append(g.wrappers, wrapperSpan{start: start, inner: i})
	g.command(i)
}
