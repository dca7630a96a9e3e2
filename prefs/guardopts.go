package prefs

import (
	"strings"
	"sync"
)

// argKind says whether an option takes a value.
type argKind uint8

const (
	// noArg: a flag.
	noArg argKind = iota
	// reqArg: a value always follows, attached (--opt=v, -ov) or as the
	// next argument (--opt v, -o v).
	reqArg
	// optArg: a value only when attached (--opt=v, -ov).
	optArg
)

// optStyle says how a command's options are written.
type optStyle uint8

const (
	// styleGNU: getopt_long and git's parse-options: -abc bundles short
	// options, --long[=v], options anywhere among the operands, -- ends
	// the options.
	styleGNU optStyle = iota
	// stylePOSIX: as styleGNU, but the first operand ends the options
	// (wrappers: what follows is the command they run).
	stylePOSIX
	// styleGo: Go's flag package: -name[=v] or --name[=v], no bundles,
	// options anywhere among the operands (go test passes later ones on).
	styleGo
)

// option is one option of a command in the catalog.
type option struct {
	// shorts are its one-letter names ("o" for -o), longs its long names
	// without dashes ("output" for --output).
	shorts string
	// longs are its long names without the dashes.
	longs []string
	// arg says whether it takes a value.
	arg argKind
	// why is the danger in a few words completing "it …", for a person
	// ("writes the diff to a file anywhere"); "" for an option the catalog
	// knows only to read the arguments right (it takes a value, or it is a
	// harmless option that an abbreviation might otherwise be taken for).
	why string
	// when, if set, narrows the danger to some uses: it reports whether
	// the value (hasValue false when none was given) is dangerous.
	when func(value string, hasValue bool) bool
	// script marks an option whose value is a program text the command's
	// check reads (sed -e, awk -e).
	script bool
	// noRun marks a wrapper option with which the wrapper runs nothing
	// (command -v).
	noRun bool
}

// opt returns an option named by names: single letters separated by | are
// short options, longer names long ones ("o|output").
func opt(names string, arg argKind, why string) option {
	o := option{arg: arg, why: why}
	// The catalog is built in every hook process: the names are cut in
	// place rather than split into a slice.
	for rest := names; rest != ""; {
		n, after, _ := strings.Cut(rest, "|")
		if len(n) == 1 {
			o.shorts += n
		} else {
			if o.longs == nil {
				o.longs = make([]string, 0, strings.Count(rest, "|")+1)
			}
			o.longs = append(o.longs, n)
		}
		rest = after
	}
	return o
}

// flags returns harmless no-value options, each name as in opt.
func flags(names string) option { return opt(names, noArg, "") }

// values returns harmless value-taking options, each name as in opt.
func values(names string) []option {
	out := make([]option, 0, strings.Count(names, " ")+1)
	for rest := names; rest != ""; {
		n, after, _ := strings.Cut(rest, " ")
		out = append(out, opt(n, reqArg, ""))
		rest = after
	}
	return out
}

// command is how the guard reads one program or subcommand.
type command struct {
	// style is how its options are written.
	style optStyle
	// opts are the options it knows; built by index from lazy when that
	// is set.
	opts []option
	// lazy, when set, returns opts; index calls it once. Large catalog
	// entries (git's subcommands) build the option lists of only the
	// subcommands a process reads: the hook, a process per tool call, then
	// allocates none of the others (git's catalog: 54 µs at a process's
	// first git command with every subcommand's options built, 25 µs
	// without, 2026-12-02).
	lazy func() []option
	// subs are its subcommands by name (the first operand), each read with
	// its own options; nil when it has none.
	subs map[string]*command
	// inherit makes the program's options valid after the subcommand too
	// (npm: --prefix anywhere); otherwise only the subcommand's.
	inherit bool
	// check, if set, looks at the parsed command beyond its options: sed
	// scripts, find expressions, assignments…
	check func(g *guardRun, pc *parsedCmd)

	// indexOnce guards building shortIdx and longIdx, on first use (most
	// subcommands are never read in a process).
	indexOnce sync.Once
	// shortIdx maps a short letter to its option; built by index.
	shortIdx map[byte]*option
	// longIdx maps a long name to its option; built by index.
	longIdx map[string]*option
}

// index returns c with its lookup tables built (once; safe for concurrent
// use).
func (c *command) index() *command {
	c.indexOnce.Do(c.buildIndex)
	return c
}

// buildIndex builds c's lookup tables.
func (c *command) buildIndex() {
	if c.lazy != nil {
		c.opts = c.lazy()
	}
	c.shortIdx = map[byte]*option{}
	c.longIdx = map[string]*option{}
	for i := range c.opts {
		o := &c.opts[i]
		if c.style == styleGo {
			// Go flags have one dash and whole names: -o is the name "o".
			for j := 0; j < len(o.shorts); j++ {
				c.longIdx[o.shorts[j:j+1]] = o
			}
		} else {
			for j := 0; j < len(o.shorts); j++ {
				c.shortIdx[o.shorts[j]] = o
			}
		}
		for _, l := range o.longs {
			c.longIdx[l] = o
		}
	}
}

// seenOpt is one option occurrence in argv.
type seenOpt struct {
	// opt is the catalog option, nil for an option the catalog does not
	// know.
	opt *option
	// name is the option's name as it stands for: the short letter, or
	// the full long name (also when abbreviated); "" when unknown.
	name string
	// abbrev is the full spelling ("--output") when the option was written
	// as an abbreviation of it, else "".
	abbrev string
	// at is the argv index of the option.
	at int
	// value is the option's value and hasValue whether it has one.
	value    string
	hasValue bool
	// valueAt is the argv index of a separate value, -1 when attached or
	// absent.
	valueAt int
}

// parsedCmd is a command's arguments read with its options.
type parsedCmd struct {
	// argv is the whole command line.
	argv []string
	// prog is the argv index of the program or subcommand word.
	prog int
	// opts are the options in argv order.
	opts []seenOpt
	// operands are the argv indexes of the operands (before the
	// subcommand, if any).
	operands []int
	// end is where reading stopped: len(argv), or the first operand for
	// stylePOSIX.
	end int
	// sub is the subcommand read with its own options, subCmd its
	// description; nil when there is none.
	sub    *parsedCmd
	subCmd *command
}

// has reports whether one of the named options occurs (short letters and
// long names, as they were written or abbreviated).
func (pc *parsedCmd) has(names ...string) bool {
	for _, o := range pc.opts {
		for _, n := range names {
			if o.opt != nil && o.name == n {
				return true
			}
		}
	}
	return false
}

// parse reads argv[from:] with c's options, into a parsedCmd g lends.
func (c *command) parse(g *guardRun, argv []string, from int) *parsedCmd {
	pc := g.newParsed(argv, from-1)
	c.parseInto(g, pc, argv, from, nil)
	return pc
}

// parseInto reads argv[from:] into pc; outer, if set, is the program whose
// options the subcommand inherits.
func (c *command) parseInto(g *guardRun, pc *parsedCmd, argv []string, from int, outer *command) {
	c.index()
	endOfOpts := false
	for i := from; i < len(argv); i++ {
		a := argv[i]
		if endOfOpts || a == "-" || len(a) < 2 || a[0] != '-' {
			if c.subs != nil && pc.sub == nil && !endOfOpts {
				if s := c.subs[a]; s != nil || c.subs["*"] != nil {
					if s == nil {
						s = c.subs["*"]
					}
					pc.operands = append(pc.operands, i)
					sub := g.newParsed(argv, i)
					var inherit *command
					if c.inherit {
						inherit = c
					}
					s.parseInto(g, sub, argv, i+1, inherit)
					pc.sub, pc.subCmd = sub, s
					return
				}
			}
			if c.style == stylePOSIX {
				pc.end = i
				return
			}
			pc.operands = append(pc.operands, i)
			continue
		}
		if a == "--" {
			endOfOpts = true
			if c.style == stylePOSIX {
				pc.end = i + 1
				return
			}
			continue
		}
		i = c.readOption(pc, argv, i, outer)
	}
}

// readOption reads the option at argv[i] (and its separate value) into pc
// and returns the index of the last argument it used.
func (c *command) readOption(pc *parsedCmd, argv []string, i int, outer *command) int {
	a := argv[i]
	long := strings.HasPrefix(a, "--") || c.style == styleGo
	if long {
		body := strings.TrimLeft(a, "-")
		name, value, attached := strings.Cut(body, "=")
		o, full := c.lookupLong(name)
		if o == nil && outer != nil {
			o, full = outer.lookupLong(name)
		}
		s := seenOpt{opt: o, name: full, at: i, value: value, hasValue: attached, valueAt: -1}
		if full != name && o != nil {
			s.abbrev = "-" + full
			if c.style != styleGo {
				s.abbrev = "--" + full
			}
		}
		if o != nil && o.arg == reqArg && !attached && i+1 < len(argv) {
			s.value, s.hasValue, s.valueAt = argv[i+1], true, i+1
			i++
		}
		pc.opts = append(pc.opts, s)
		return i
	}
	for j := 1; j < len(a); j++ {
		o := c.shortIdx[a[j]]
		if o == nil && outer != nil {
			o = outer.shortIdx[a[j]]
		}
		s := seenOpt{opt: o, name: a[j : j+1], at: i, valueAt: -1}
		if o == nil || o.arg == noArg {
			pc.opts = append(pc.opts, s)
			continue
		}
		if j+1 < len(a) {
			s.value, s.hasValue = a[j+1:], true
		} else if o.arg == reqArg && i+1 < len(argv) {
			s.value, s.hasValue, s.valueAt = argv[i+1], true, i+1
			i++
		}
		pc.opts = append(pc.opts, s)
		break
	}
	return i
}

// lookupLong finds the long option name (without dashes) and returns it
// with the full name it stands for. An exact name wins. Otherwise name may
// abbreviate longer names, as getopt_long and git accept (Go's flag
// package does not): a dangerous option among them is returned even when
// the abbreviation is ambiguous, so that no spelling slips past; a single
// harmless one is returned as the option meant.
func (c *command) lookupLong(name string) (o *option, full string) {
	if o := c.longIdx[name]; o != nil {
		return o, name
	}
	if name == "" || c.style == styleGo {
		return nil, ""
	}
	var harmless *option
	harmlessName := ""
	candidates := 0
	for l, cand := range c.longIdx {
		if !strings.HasPrefix(l, name) {
			continue
		}
		if cand.why != "" {
			if o == nil || l < full {
				o, full = cand, l
			}
			continue
		}
		harmless, harmlessName = cand, l
		candidates++
	}
	if o != nil {
		return o, full
	}
	if candidates == 1 {
		return harmless, harmlessName
	}
	return nil, ""
}
