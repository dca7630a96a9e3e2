package prefs

import (
	"runtime"
	"strings"
	"sync"

	"github.com/agentgate/agentgate/exec/display"
)

// This file is the one list of programs agentgate knows something about:
// the interpreters and launchers a rule for the program alone opens to
// anything, the wrappers the argument guard sees through,
// the programs never auto-allowed, and the catalog of arguments that make a
// program write outside its obvious output, run another program or work
// on another directory. docs/allow-lists.md describes it for people; every
// catalog entry has a must-ask and an everyday example in guard_test.go.

// Why a rule for the program alone allows arbitrary code, in words that
// complete "<program> can run arbitrary code: it …" for a person.
const (
	isShell       = "is a shell and runs any command it is given"
	isInterpreter = "is an interpreter and runs any code it is given"
	runsCommand   = "runs the command it is given"
	runsOptions   = "runs programs named in its arguments or configuration"
	// runsProject also means: the program reads instructions from the
	// project's files, so a rule for it is a rule for the project's code.
	runsProject = "runs the project's own code (its build files, scripts or configuration), so a rule for it is a rule for the project's code"
)

// program is one entry of the catalog.
type program struct {
	// launcher says why a rule for the program alone allows arbitrary code
	// (one of the constants above); "" when it does not.
	launcher string
	// never says what the program does when it is never auto-allowed
	// (sudo…); "" otherwise.
	never string
	// wrapper, when set, makes the program transparent: the guard decides
	// the command it runs.
	wrapper *wrapper
	// cmd says how its arguments are read and which are dangerous; nil
	// when only launcher or never applies.
	cmd *command
}

// wrapper describes how a transparent wrapper finds the command it runs:
// after its options (read with stylePOSIX), leading operands, then
// assignments, then the command.
type wrapper struct {
	// leading is how many operands precede the command (timeout's
	// duration, flock's lock file).
	leading int
	// assignments: NAME=value operands precede the command (env).
	assignments bool
	// lockCommand: `-c CMD` may follow the leading operand (flock FILE -c).
	lockCommand bool
	// appendsInput: the wrapper adds arguments read from its input (xargs).
	appendsInput bool
}

// catalog maps a program's base name to the function returning its entry.
// init fills it from the tables below with builders only: an entry is
// built (and its option tables indexed) the first time it is looked up,
// once, shared by its names — the hook, a process per tool call, builds
// just the program it decides.
var catalog = make(map[string]func() *program, catalogSize)

// catalogSize is room for every name registered (157 today): the map is
// allocated once instead of growing, which is most of what filling it
// costs a short-lived process such as the hook.
const catalogSize = 192

// register adds the entry build returns under each space-separated name.
func register(names string, build func() *program) {
	entry := sync.OnceValue(build)
	for _, n := range strings.Fields(names) {
		catalog[n] = entry
	}
}

// launcherOnly registers programs that are launchers and nothing more.
func launcherOnly(why, names string) {
	p := &program{launcher: why}
	entry := func() *program { return p }
	for _, n := range strings.Fields(names) {
		catalog[n] = entry
	}
}

// wrapperCmd is the command description shared by wrappers: their options
// end at the first operand.
func wrapperCmd(opts ...option) *command { return &command{style: stylePOSIX, opts: opts} }

// join concatenates option lists.
func join(lists ...[]option) []option {
	n := 0
	for _, l := range lists {
		n += len(l)
	}
	out := make([]option, 0, n)
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// notDash reports whether a value is something other than "-" (standard
// output), the one harmless value of an output-file option.
func notDash(v string, has bool) bool { return has && v != "-" }

// hasValue reports whether the option was given a value (git --exec-path
// without one prints the path).
func hasValue(_ string, has bool) bool { return has }

func init() {
	launcherOnly(isShell, "sh bash zsh fish dash ksh mksh csh tcsh ash busybox pwsh powershell cmd eval source .")
	launcherOnly(isInterpreter, "python pypy node deno bun ruby perl php lua luajit tclsh wish expect osascript rscript julia java jshell cscript wscript mshta rundll32 irb")
	launcherOnly(runsCommand, "chrt taskset unbuffer script watch chroot unshare nsenter systemd-run strace ltrace gdb lldb valgrind parallel start npx pnpx bunx uvx pipx")
	launcherOnly(runsProject, "uv pip poetry cmake rustc gcc cc dotnet mvn mvnw gradle gradlew rake bundle composer docker podman kubectl just tox nox pytest jest vitest eslint pre-commit")
	launcherOnly(runsOptions, "vim nvim emacs less")

	// Never without a person: they run a command as another user.
	for _, n := range []string{"sudo", "doas", "pkexec", "su", "runuser", "run0", "sudoedit"} {
		register(n, func() *program {
			return &program{launcher: runsCommand, never: n + " runs a command with another user's privileges"}
		})
	}

	registerWrappers()
	registerCatalog()
	registerGit()
}

// registerWrappers adds the transparent wrappers.
func registerWrappers() {
	register("env", func() *program {
		return &program{launcher: runsCommand, wrapper: &wrapper{assignments: true}, cmd: wrapperCmd(
			flags("i|0|v|ignore-environment|null|debug|list-signal-handling"),
			opt("u|unset", reqArg, ""),
			opt("C|chdir", reqArg, "runs the command in another directory"),
			opt("S|split-string", reqArg, "splits one argument into a command line, hiding the program it runs"),
			opt("block-signal|default-signal|ignore-signal", optArg, ""),
		)}
	})
	register("timeout", func() *program {
		return &program{launcher: runsCommand, wrapper: &wrapper{leading: 1}, cmd: wrapperCmd(
			flags("foreground|preserve-status|p|v|verbose"), opt("s|signal", reqArg, ""), opt("k|kill-after", reqArg, ""),
		)}
	})
	register("nice", func() *program {
		return &program{launcher: runsCommand, wrapper: &wrapper{}, cmd: wrapperCmd(opt("n|adjustment", reqArg, ""))}
	})
	register("nohup", func() *program {
		return &program{launcher: runsCommand, wrapper: &wrapper{}, cmd: wrapperCmd()}
	})
	register("stdbuf", func() *program {
		return &program{launcher: runsCommand, wrapper: &wrapper{}, cmd: wrapperCmd(values("i|input o|output e|error")...)}
	})
	register("time", func() *program {
		return &program{launcher: runsCommand, wrapper: &wrapper{}, cmd: wrapperCmd(
			flags("p|a|v|q|append|verbose|quiet|portability"), opt("f|format", reqArg, ""),
			opt("o|output", reqArg, "writes the timing to a file anywhere"),
		)}
	})
	register("setsid", func() *program {
		return &program{launcher: runsCommand, wrapper: &wrapper{}, cmd: wrapperCmd(flags("c|f|w|ctty|fork|wait"))}
	})
	register("flock", func() *program {
		return &program{launcher: runsCommand, wrapper: &wrapper{leading: 1, lockCommand: true}, cmd: wrapperCmd(
			flags("s|x|u|n|o|F|e|shared|exclusive|unlock|nonblock|close|no-fork|verbose"),
			opt("w|timeout|wait", reqArg, ""), opt("E|conflict-exit-code", reqArg, ""),
			opt("c|command", reqArg, "runs a shell command while holding the lock"),
		)}
	})
	register("xargs", func() *program {
		return &program{launcher: runsCommand, wrapper: &wrapper{appendsInput: true}, cmd: wrapperCmd(
			flags("0|p|r|t|x|o|null|interactive|no-run-if-empty|verbose|exit|open-tty|show-limits"),
			opt("a|arg-file", reqArg, ""), opt("d|delimiter", reqArg, ""), opt("E", reqArg, ""), opt("e|eof", optArg, ""),
			opt("I", reqArg, ""), opt("i|replace", optArg, ""), opt("L|max-lines", reqArg, ""), opt("l", optArg, ""),
			opt("n|max-args", reqArg, ""), opt("P|max-procs", reqArg, ""), opt("s|max-chars", reqArg, ""),
			opt("process-slot-var", reqArg, ""),
		)}
	})
	describe := option{shorts: "vV", noRun: true}
	register("command", func() *program {
		return &program{launcher: runsCommand, wrapper: &wrapper{}, cmd: wrapperCmd(flags("p"), describe)}
	})
	register("builtin", func() *program {
		return &program{launcher: runsCommand, wrapper: &wrapper{}, cmd: wrapperCmd()}
	})
	register("exec", func() *program {
		return &program{launcher: runsCommand, wrapper: &wrapper{}, cmd: wrapperCmd(flags("c|l"), opt("a", reqArg, ""))}
	})
	register("ionice", func() *program {
		return &program{launcher: runsCommand, wrapper: &wrapper{}, cmd: wrapperCmd(
			flags("t|ignore"), opt("c|class", reqArg, ""), opt("n|classdata", reqArg, ""),
			option{shorts: "pPu", longs: []string{"pid", "pgid", "uid"}, arg: reqArg, noRun: true},
		)}
	})
}

// IsLauncher reports whether argv0 names a program that can run arbitrary
// code (a shell, an interpreter, a program that runs the command it is
// given, a tool that runs programs named in its arguments, or one that
// runs the project's own code), so that a rule for the program alone would
// allow anything. It looks at the base name (after the last '/', or '/' or
// '\' on Windows), ignoring ASCII case and, on Windows, an
// .exe/.com/.bat/.cmd/.ps1 extension, and also tries the name without a
// trailing version: python3.12, python3, perl5.36, node-18, ruby3.2 all
// count. LauncherWarning says why.
func IsLauncher(argv0 string) bool {
	return isLauncherName(argv0, runtime.GOOS == "windows")
}

// LauncherWarning returns, for a person about to allow the program argv0
// alone, why that allows arbitrary code and what to do instead
// ("git can run arbitrary code: it runs programs named in its arguments or
// configuration. A rule for the program alone …"); "" when argv0 is not a
// launcher.
func LauncherWarning(argv0 string) string {
	p := programFor(argv0, runtime.GOOS == "windows")
	if p == nil || p.launcher == "" {
		return ""
	}
	return display.Word(argv0) + " can run arbitrary code: it " + p.launcher + ". A rule for the program alone lets an agent run anything through it without asking; allow the exact command, or the program with its first arguments, instead"
}

// isLauncherName is IsLauncher with the platform made explicit for tests.
func isLauncherName(argv0 string, windows bool) bool {
	p := programFor(argv0, windows)
	return p != nil && p.launcher != ""
}

// windowsExecutableSuffixes are the extensions Windows runs without naming.
var windowsExecutableSuffixes = []string{".exe", ".com", ".bat", ".cmd", ".ps1"}

// isWindows is the platform the guard reads program names for.
var isWindows = runtime.GOOS == "windows"

// programFor returns the catalog entry of argv0: by its base name (see
// IsLauncher), else by the name without a trailing version; nil when
// neither is known.
func programFor(argv0 string, windows bool) *program {
	base := argv0[strings.LastIndexByte(argv0, '/')+1:]
	if windows {
		base = base[strings.LastIndexByte(base, '\\')+1:]
	}
	name := strings.ToLower(base)
	if windows {
		for _, suffix := range windowsExecutableSuffixes {
			if strings.HasSuffix(name, suffix) {
				name = strings.TrimSuffix(name, suffix)
				break
			}
		}
	}
	if entry := catalog[name]; entry != nil {
		return entry()
	}
	stem := strings.TrimSuffix(strings.TrimRight(name, "0123456789."), "-")
	if entry := catalog[stem]; entry != nil && stem != name {
		return entry()
	}
	return nil
}
