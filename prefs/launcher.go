package prefs

import (
	"runtime"
	"strings"
)

// launchers lists programs that run arbitrary other code given the right
// arguments (SPEC §3): shells, interpreters, programs that run a command
// they are given, and tools whose subcommands, options or project files run
// arbitrary code. A rule for the bare program allows anything; offer the
// exact command first for these.
var launchers = map[string]bool{
	// shells
	"sh": true, "bash": true, "zsh": true, "fish": true, "dash": true, "ksh": true, "mksh": true,
	"csh": true, "tcsh": true, "ash": true, "busybox": true, "pwsh": true, "powershell": true, "cmd": true,
	// interpreters
	"python": true, "pypy": true, "node": true, "deno": true, "bun": true, "ruby": true, "perl": true,
	"php": true, "lua": true, "luajit": true, "tclsh": true, "wish": true, "expect": true, "osascript": true,
	"rscript": true, "julia": true, "java": true, "jshell": true, "awk": true, "gawk": true, "mawk": true,
	"nawk": true, "sed": true, "cscript": true, "wscript": true, "mshta": true, "rundll32": true,
	// programs that run the command they are given
	"env": true, "xargs": true, "sudo": true, "doas": true, "su": true, "pkexec": true, "runuser": true,
	"nohup": true, "time": true, "timeout": true, "nice": true, "ionice": true, "chrt": true, "taskset": true,
	"setsid": true, "stdbuf": true, "unbuffer": true, "script": true, "watch": true, "flock": true,
	"chroot": true, "unshare": true, "nsenter": true, "systemd-run": true, "strace": true, "ltrace": true,
	"gdb": true, "lldb": true, "valgrind": true, "parallel": true, "ssh": true, "start": true,
	"find": true, // -exec
	// tools that run code from options, subcommands or the project
	"git": true, // -c core.pager=…, aliases, hooks
	"npx": true, "npm": true, "pnpm": true, "pnpx": true, "yarn": true, "uv": true, "uvx": true,
	"pip": true, "pipx": true, "poetry": true, "make": true, "cmake": true, "cargo": true, "go": true,
	"rustc": true, "gcc": true, "cc": true, "dotnet": true, "mvn": true, "gradle": true, "rake": true,
	"bundle": true, "composer": true, "docker": true, "podman": true, "kubectl": true, "vim": true,
	"nvim": true, "emacs": true, "less": true, "man": true,
}

// windowsExecutableSuffixes are the extensions Windows runs without naming.
var windowsExecutableSuffixes = []string{".exe", ".com", ".bat", ".cmd", ".ps1"}

// IsLauncher reports whether argv0 names a program that can run arbitrary
// code (see the list in the source and docs/allow-lists.md), so that a rule
// for the program alone would allow anything. It looks at the base name
// (after the last '/', or '/' or '\' on Windows), ignoring ASCII case and,
// on Windows, an .exe/.com/.bat/.cmd/.ps1 extension, and also tries the name
// without a trailing version: python3.12, python3, perl5.36, node-18,
// ruby3.2 all count.
func IsLauncher(argv0 string) bool {
	return isLauncherName(argv0, runtime.GOOS == "windows")
}

// isLauncherName is IsLauncher with the platform made explicit for tests.
func isLauncherName(argv0 string, windows bool) bool {
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
	if launchers[name] {
		return true
	}
	stem := strings.TrimRight(name, "0123456789.")
	stem = strings.TrimSuffix(stem, "-")
	return stem != name && launchers[stem]
}
