package prefs

import (
	"path/filepath"
	"strings"

	"github.com/agentgate/agentgate/exec/envrisk"
)

// The catalog of dangerous arguments, one entry per program;
// git's is in catalog_git.go. Option names follow opt: single letters are
// short options, longer names long ones. An option listed with why "" is
// there only so that the arguments are read right (it takes a value, or an
// abbreviation must not be taken for a dangerous option).

// registerCatalog adds every catalog program but git.
func registerCatalog() {
	register("sed gsed", func() *program {
		return &program{launcher: isInterpreter, cmd: &command{check: sedCheck, opts: join([]option{
			opt("i|in-place", optArg, "edits the files in place"),
			{shorts: "e", longs: []string{"expression"}, arg: reqArg, script: true},
			opt("f|file", reqArg, "runs the sed script in a file the rule does not show"),
			opt("l|line-length", reqArg, ""),
			flags("n|E|r|s|u|z|b|quiet|silent|regexp-extended|separate|unbuffered|null-data|posix|debug|sandbox|follow-symlinks|binary"),
		})}}
	})

	register("awk gawk mawk nawk original-awk", func() *program {
		return &program{launcher: isInterpreter, cmd: &command{check: awkCheck, opts: join([]option{
			opt("f|file", reqArg, "runs the awk program in a file the rule does not show"),
			opt("E|exec", reqArg, "runs the awk program in a file the rule does not show"),
			{shorts: "e", longs: []string{"source"}, arg: reqArg, script: true},
			opt("i|include", reqArg, "loads awk source from a file the rule does not show"),
			opt("l|load", reqArg, "loads a compiled extension library"),
			{shorts: "o", longs: []string{"pretty-print"}, arg: optArg, why: "writes the program to a file anywhere", when: hasValue},
			{shorts: "d", longs: []string{"dump-variables"}, arg: optArg, why: "writes the variables to a file anywhere", when: hasValue},
			{shorts: "p", longs: []string{"profile"}, arg: optArg, why: "writes a profile to a file anywhere", when: hasValue},
			opt("W", reqArg, "passes an implementation option (-W) that the guard does not read"),
			opt("D|debug|L|lint", optArg, ""),
			flags("b|c|C|g|h|M|n|N|O|P|r|s|S|t|V|k|characters-as-bytes|traditional|copyright|gen-pot|help|bignum|use-lc-numeric|non-decimal-data|optimize|posix|re-interval|no-optimize|sandbox|lint-old|version|csv"),
		}, values("v|assign F|field-separator"))}}
	})

	register("find gfind", func() *program {
		return &program{launcher: runsCommand, cmd: &command{check: findCheck}}
	})

	register("sort gsort", func() *program {
		return &program{cmd: &command{opts: join([]option{
			opt("o|output", reqArg, "writes the sorted output to a file anywhere, even over its input"),
			opt("compress-program", reqArg, "runs a program to compress its temporary files"),
		}, values("k|key t|field-separator S|buffer-size T|temporary-directory parallel files0-from batch-size random-source"))}}
	})

	register("rg", func() *program {
		return &program{cmd: &command{opts: join([]option{
			opt("pre", reqArg, "runs a program on every file it searches"),
			opt("hostname-bin", reqArg, "runs a program to find the host name"),
		}, values("pre-glob e|regexp f|file g|glob iglob t|type T|type-not type-add type-clear m|max-count A|after-context B|before-context C|context j|threads M|max-columns max-depth d max-filesize r|replace path-separator sort sortr color colors E|encoding engine context-separator field-context-separator field-match-separator ignore-file dfa-size-limit regex-size-limit hyperlink-format"))}}
	})

	register("tar gtar bsdtar", func() *program {
		return &program{cmd: &command{check: tarCheck, opts: join([]option{
			opt("to-command", reqArg, "runs a command for every extracted file"),
			opt("I|use-compress-program", reqArg, "runs a program to compress or decompress"),
			{longs: []string{"checkpoint-action"}, arg: reqArg, why: "runs a command at checkpoints", when: func(v string, _ bool) bool { return strings.Contains(v, "exec") }},
			opt("F|info-script|new-volume-script", reqArg, "runs a script at the end of every volume"),
			opt("rsh-command|rmt-command", reqArg, "runs a program to reach a remote archive"),
			opt("C|directory", reqArg, "works in another directory (reads or extracts files there)"),
			opt("P|absolute-names", noArg, "extracts to absolute paths, anywhere"),
			opt("index-file", reqArg, "writes its listing to a file anywhere"),
			opt("remove-files", noArg, "deletes the files it archived"),
			opt("f|file", reqArg, ""), // a host:path archive is checked in tarCheck
			flags("force-local"),
		}, values("T|files-from X|exclude-from b|blocking-factor H|format V|label L|tape-length N|newer|after-date K|starting-file g|listed-incremental exclude owner group mode mtime strip-components transform xform"))}}
	})

	curlOut := func(names, why string) option {
		return option{longs: longNames(names), shorts: shortNames(names), arg: reqArg, why: why, when: notDash}
	}
	register("curl", func() *program {
		return &program{cmd: &command{opts: join([]option{
			curlOut("o|output", "writes the download to a file anywhere"),
			opt("O|remote-name|remote-name-all", noArg, "writes the download to a file named after the URL"),
			opt("J|remote-header-name", noArg, "writes the download to a file the server names"),
			opt("output-dir", reqArg, "writes downloads into another directory"),
			opt("K|config", reqArg, "reads more options from a file the rule does not show"),
			curlOut("D|dump-header", "writes the response headers to a file anywhere"),
			curlOut("c|cookie-jar", "writes cookies to a file anywhere"),
			curlOut("trace|trace-ascii", "writes a trace to a file anywhere"),
			curlOut("stderr", "writes its error output to a file anywhere"),
			curlOut("libcurl", "writes C source to a file anywhere"),
			opt("etag-save", reqArg, "writes the ETag to a file anywhere"),
			opt("hsts|alt-svc", reqArg, "reads and writes a cache file anywhere"),
			{shorts: "w", longs: []string{"write-out"}, arg: reqArg, why: "writes to a file named in the format (%output{…})",
				when: func(v string, _ bool) bool { return strings.Contains(v, "%output{") }},
		}, values("d|data data-raw data-binary data-urlencode json H|header X|request u|user A|user-agent e|referer b|cookie F|form form-string m|max-time x|proxy T|upload-file C|continue-at E|cert r|range U|proxy-user y|speed-time Y|speed-limit z|time-cond Q|quote P|ftp-port t|telnet-option connect-timeout retry retry-delay retry-max-time cacert capath key key-type cert-type resolve connect-to interface dns-servers max-filesize max-redirs oauth2-bearer proto proto-redir url variable expand-url"))}}
	})

	register("wget", func() *program {
		return &program{cmd: &command{opts: join([]option{
			{shorts: "O", longs: []string{"output-document"}, arg: reqArg, why: "writes the download to a file anywhere", when: notDash},
			opt("o|output-file|a|append-output", reqArg, "writes its log to a file anywhere"),
			opt("P|directory-prefix", reqArg, "saves files under another directory"),
			opt("e|execute", reqArg, "runs a .wgetrc command, which can set any option"),
			opt("config", reqArg, "reads options from a file the rule does not show"),
			opt("use-askpass", reqArg, "runs a program to ask for passwords"),
		}, values("i|input-file t|tries T|timeout w|wait U|user-agent Q|quota l|level A|accept R|reject D|domains X|exclude-directories I|include-directories B|base header post-data post-file body-data body-file method user password http-user http-password referer load-cookies save-cookies ca-certificate certificate private-key"))}}
	})

	register("make gmake", func() *program {
		return &program{launcher: runsProject, cmd: &command{check: makeCheck, opts: join([]option{
			opt("C|directory", reqArg, "runs make in another directory, with that directory's Makefile"),
			opt("f|file|makefile", reqArg, "runs the recipes of another Makefile"),
			opt("eval|E", reqArg, "evaluates text as Makefile code, which can run anything"),
			opt("I|include-dir", reqArg, "looks for included Makefiles in another directory"),
			opt("j|jobs|l|load-average|O|output-sync|debug", optArg, ""),
		}, values("o|old-file|assume-old W|what-if|new-file|assume-new jobserver-style shuffle"))}}
	})

	register("rsync", func() *program {
		return &program{cmd: &command{opts: join([]option{
			opt("e|rsh", reqArg, "runs a program as the remote shell"),
			opt("rsync-path", reqArg, "runs a program as rsync on the other side"),
			opt("log-file", reqArg, "writes its log to a file anywhere"),
			opt("write-batch|only-write-batch", reqArg, "writes a batch file anywhere"),
			opt("daemon", noArg, "runs the rsync daemon"),
			opt("config", reqArg, "reads a daemon configuration file"),
			opt("backup-dir", reqArg, "writes backups into another directory"),
			opt("M|remote-option", reqArg, "passes options to the rsync on the other side, which the guard does not read"),
		}, values("f|filter exclude include exclude-from include-from files-from B|block-size chmod port bwlimit T|temp-dir partial-dir compare-dest copy-dest link-dest max-size min-size timeout contimeout out-format log-file-format password-file read-batch suffix chown usermap groupmap iconv checksum-choice compress-choice compress-level skip-compress info debug stop-after stop-at address sockopts outbuf"))}}
	})

	sshCommon := func() []option {
		return []option{
			opt("F", reqArg, "reads the ssh configuration from a file the rule does not show (ProxyCommand… run programs)"),
			{shorts: "o", arg: reqArg}, // read in sshCheck
		}
	}
	register("ssh", func() *program {
		return &program{launcher: runsCommand, cmd: &command{check: sshCheck, opts: join(sshCommon(), []option{
			opt("E", reqArg, "writes its log to a file anywhere"),
			opt("I", reqArg, "loads a PKCS#11 library"),
		}, values("b c D e i J L l m O p Q R S W w B P"))}}
	})
	register("scp", func() *program {
		return &program{cmd: &command{check: sshCheck, opts: join(sshCommon(), []option{
			opt("S", reqArg, "runs another program instead of ssh"),
		}, values("c i J l P X D"))}}
	})
	register("sftp", func() *program {
		return &program{cmd: &command{check: sshCheck, opts: join(sshCommon(), []option{
			opt("S", reqArg, "runs another program instead of ssh"),
			opt("D", reqArg, "runs another program as the sftp server"),
		}, values("B b c i J l P R X"))}}
	})

	register("zip", func() *program {
		return &program{cmd: &command{opts: join([]option{
			opt("T|test", noArg, "tests the archive by running unzip, or the command -TT names"),
			opt("unzip-command", reqArg, "runs a command to test the archive"),
		}, values("b|temp-path n|suffixes t|from-date O|output-file Z|compression-method P|password s|split-size"))}}
	})

	// Package managers: their subcommands that run a package's program,
	// and the options that point them at other configuration.
	packageRunner := func(why string) *command { return &command{check: wholeSub(why)} }
	npmConfig := func() *command {
		return &command{check: operandIn(0, "changes npm's configuration (script-shell… run programs)", "set", "edit", "delete", "fix")}
	}
	npmInit := func() *command {
		return &command{check: anyOperand("runs a package's initializer (create-NAME), fetched from the registry")}
	}
	register("npm", func() *program {
		return &program{launcher: runsProject, cmd: &command{inherit: true, opts: join([]option{
			opt("prefix|C", reqArg, "works in another directory"),
			opt("userconfig|globalconfig", reqArg, "reads npm configuration from a file the rule does not show (script-shell… run programs)"),
			opt("script-shell", reqArg, "runs the package scripts with another shell"),
			opt("node-options", reqArg, "passes options to node (--require loads code)"),
			opt("c|call", reqArg, "runs a command"),
		}, values("w|workspace registry cache loglevel tag otp")), subs: map[string]*command{
			"exec":    packageRunner("runs a package's program, fetched from the registry if missing"),
			"x":       packageRunner("runs a package's program, fetched from the registry if missing"),
			"explore": packageRunner("runs a shell in a package's directory"),
			"init":    npmInit(), "create": npmInit(), "innit": npmInit(),
			"config": npmConfig(), "c": npmConfig(),
			"set": packageRunner("changes npm's configuration (script-shell… run programs)"),
			"*":   {},
		}}}
	})
	pnpmLike := func(cwd string) *program {
		return &program{launcher: runsProject, cmd: &command{inherit: true, opts: []option{
			opt(cwd, reqArg, "works in another directory"),
		}, subs: map[string]*command{
			"exec":   packageRunner("runs a program or package binary"),
			"dlx":    packageRunner("runs a package's program, fetched from the registry"),
			"x":      packageRunner("runs a package's program, fetched from the registry if missing"),
			"create": npmInit(),
			"node":   packageRunner("runs node with the given arguments"),
			"config": npmConfig(),
			"*":      {},
		}}}
	}
	register("pnpm", func() *program { return pnpmLike("C|dir") })
	register("yarn", func() *program { return pnpmLike("cwd") })
	register("bun", func() *program {
		bun := pnpmLike("cwd")
		bun.launcher = isInterpreter
		return bun
	})

	register("go", func() *program {
		goBuild := &command{style: styleGo, opts: join([]option{
			opt("C", reqArg, "runs in another directory"),
			opt("toolexec", reqArg, "runs every compiler tool through a program"),
			opt("exec", reqArg, "runs the built program through another program"),
			opt("vettool", reqArg, "runs another program as the vet tool"),
			{shorts: "o", arg: reqArg, why: "writes the result outside the working directory", when: escapesDir},
		}, values("run bench count cpu p parallel timeout tags ldflags gcflags asmflags mod modfile pkgdir covermode coverpkg coverprofile cpuprofile memprofile blockprofile mutexprofile trace outputdir overlay pgo benchtime fuzz fuzztime list skip shuffle json"))}
		return &program{launcher: runsProject, cmd: &command{style: styleGo, opts: goBuild.opts, subs: map[string]*command{
			"env": {style: styleGo, opts: []option{opt("w|u", noArg, "changes go's configuration (GOFLAGS=-toolexec=… runs programs)")}},
			"*":   goBuild,
		}}}
	})

	register("cargo", func() *program {
		return &program{launcher: runsProject, cmd: &command{inherit: true, opts: join([]option{
			opt("config", reqArg, "sets configuration (a runner or a rustc wrapper runs programs)"),
			opt("manifest-path", reqArg, "builds another package, whose build scripts run"),
			opt("C", reqArg, "works in another directory"),
			{longs: []string{"target-dir"}, arg: reqArg, why: "writes build output outside the working directory", when: escapesDir},
		}, values("p|package j|jobs target features F Z color message-format bin example test bench profile")), subs: map[string]*command{
			"install": packageRunner("builds and installs a crate, running its build scripts"),
			"*":       {},
		}}}
	})

	register("nc ncat netcat nc.traditional nc.openbsd", func() *program {
		return &program{cmd: &command{opts: join([]option{
			opt("e|exec", reqArg, "runs a program with the network connection as its input and output"),
			opt("c|sh-exec", reqArg, "runs a shell command with the network connection as its input and output"),
			opt("lua-exec", reqArg, "runs a Lua script with the network connection"),
		}, values("p s w i q x X W T I O b"))}}
	})

	register("fd fdfind", func() *program {
		return &program{cmd: &command{opts: join([]option{
			opt("x|exec|X|exec-batch", reqArg, "runs a command for every file it finds"),
		}, values("e|extension t|type E|exclude d|max-depth min-depth exact-depth S|size changed-within changed-before o|owner c|color j|threads base-directory path-separator search-path ignore-file max-results"))}}
	})
	register("ag", func() *program {
		return &program{cmd: &command{opts: join([]option{
			opt("pager", reqArg, "runs a program as the pager"),
		}, values("A|after B|before C|context G|file-search-regex m|max-count depth ignore ignore-dir path-to-ignore workers"))}}
	})
	register("base64 gbase64", func() *program {
		return &program{cmd: &command{opts: join([]option{
			opt("o|output", reqArg, "writes to a file anywhere (BSD base64)"),
		}, values("i|input w|wrap b|break"))}}
	})
	register("tree", func() *program {
		return &program{cmd: &command{opts: join([]option{
			opt("o", reqArg, "writes the listing to a file anywhere"),
		}, values("L P I H T timefmt charset filelimit sort"))}}
	})
	register("javac", func() *program { return &program{launcher: runsProject, cmd: &command{check: javacCheck}} })

	register("socat", func() *program {
		return &program{cmd: &command{check: socatCheck}}
	})

	register("crontab", func() *program {
		return &program{cmd: &command{check: crontabCheck, opts: []option{opt("u", reqArg, ""), flags("l")}}}
	})

	register("man", func() *program {
		return &program{launcher: runsOptions, cmd: &command{opts: join([]option{
			opt("P|pager", reqArg, "runs another program as the pager"),
			opt("H|html", optArg, "runs a web browser to show the page"),
			opt("C|config-file", reqArg, "reads man's configuration from a file the rule does not show"),
		}, values("M|manpath S|s|sections m|systems L|locale E|encoding R|recode"))}}
	})

	register("hg", func() *program {
		return &program{launcher: runsProject, cmd: &command{opts: join([]option{
			opt("config", reqArg, "sets configuration (hooks and aliases run programs)"),
			opt("cwd", reqArg, "works in another directory"),
			opt("R|repository", reqArg, "uses another repository"),
		})}}
	})
}

// longNames and shortNames split an opt-style name list.
func longNames(names string) []string { return opt(names, noArg, "").longs }

// shortNames returns the one-letter names of an opt-style list.
func shortNames(names string) string { return opt(names, noArg, "").shorts }

// escapesDir reports whether a path leaves the working directory: it is
// absolute, starts with ~, or has a .. element.
func escapesDir(v string, _ bool) bool {
	if v == "" {
		return false
	}
	if filepath.IsAbs(v) || strings.HasPrefix(v, "/") || strings.HasPrefix(v, `\`) || strings.HasPrefix(v, "~") || filepath.VolumeName(v) != "" {
		return true
	}
	for _, part := range strings.FieldsFunc(v, func(r rune) bool { return r == '/' || r == '\\' }) {
		if part == ".." {
			return true
		}
	}
	return false
}

// wholeSub returns a check that reports the subcommand itself.
func wholeSub(why string) func(*guardRun, *parsedCmd) {
	return func(g *guardRun, pc *parsedCmd) { g.add(pc.prog, -1, why) }
}

// operandIn returns a check that reports the operand number n (0 for the
// first) of a subcommand when it is one of words.
func operandIn(n int, why string, words ...string) func(*guardRun, *parsedCmd) {
	return func(g *guardRun, pc *parsedCmd) {
		if n < len(pc.operands) {
			for _, w := range words {
				if pc.argv[pc.operands[n]] == w {
					g.add(pc.operands[n], -1, why)
					return
				}
			}
		}
	}
}

// anyOperand returns a check that reports a subcommand's first operand.
func anyOperand(why string) func(*guardRun, *parsedCmd) {
	return func(g *guardRun, pc *parsedCmd) {
		if len(pc.operands) > 0 {
			g.add(pc.operands[0], -1, why)
		}
	}
}

// findCheck reports find's actions that run a command, delete or write:
// every argument equal to one of them counts, wherever it stands (a
// pattern spelled like an action is reported too, which only asks a
// person more often).
func findCheck(g *guardRun, pc *parsedCmd) {
	for i := pc.prog + 1; i < len(pc.argv); i++ {
		switch pc.argv[i] {
		case "-exec", "-execdir", "-ok", "-okdir":
			end := i
			for end+1 < len(pc.argv) && pc.argv[end] != ";" && pc.argv[end] != "+" {
				end++
			}
			g.add(i, end, "runs a command for every file it finds")
			i = end
		case "-delete":
			g.add(i, -1, "deletes the files it finds")
		case "-fprint", "-fprint0", "-fprintf", "-fls":
			v := -1
			if i+1 < len(pc.argv) {
				v = i + 1
			}
			g.add(i, v, "writes its list to a file anywhere")
		}
	}
}

// tarCheck reads tar's traditional first argument (`tar xzf a.tgz`: a
// bundle of option letters without a dash, whose values follow in order)
// and a -f archive on another host (host:path, unless --force-local).
func tarCheck(g *guardRun, pc *parsedCmd) {
	cmd := catalog["tar"]().cmd.index()
	first := pc.prog + 1
	next := first + 1
	remote := func(at, valueAt int, v string) {
		colon := strings.IndexByte(v, ':')
		if colon > 0 && !strings.Contains(v[:colon], "/") && !pc.has("force-local") {
			g.add(at, valueAt, "reads or writes the archive on another host through a remote shell")
		}
	}
	if first < len(pc.argv) && pc.argv[first] != "" && pc.argv[first][0] != '-' {
		for _, c := range []byte(pc.argv[first]) {
			o := cmd.shortIdx[c]
			if o == nil {
				continue
			}
			value, valueAt := "", -1
			if o.arg == reqArg && next < len(pc.argv) {
				value, valueAt = pc.argv[next], next
				next++
			}
			if c == 'f' {
				remote(first, valueAt, value)
				continue
			}
			if o.why != "" && (o.when == nil || o.when(value, valueAt >= 0)) {
				g.add(first, valueAt, o.why)
			}
		}
	}
	for _, o := range pc.opts {
		if (o.name == "f" || o.name == "file") && o.hasValue {
			remote(o.at, o.valueAt, o.value)
		}
	}
}

// makeVariables are the make variables that choose the program make runs
// recipes with; envrisk.Steers covers the others (CC, MAKEFLAGS…).
var makeVariables = map[string]bool{"SHELL": true, ".SHELLFLAGS": true, "MAKESHELL": true, "MAKE": true, "MAKEFILES": true}

// makeCheck reports variable assignments among make's operands that
// change what it runs: a variable naming a program (SHELL, CC…) and
// NAME!=command, which runs the command.
func makeCheck(g *guardRun, pc *parsedCmd) {
	for _, i := range pc.operands {
		a := pc.argv[i]
		eq := strings.IndexByte(a, '=')
		if eq <= 0 {
			continue
		}
		name := strings.TrimRight(a[:eq], ":+?!")
		switch {
		case a[eq-1] == '!':
			g.add(i, -1, "runs a shell command to set "+name+" (!=)")
		case makeVariables[name] || envrisk.Steers(name):
			g.add(i, -1, "sets "+name+", which changes the programs make runs")
		}
	}
}

// sshOptions are the ssh -o options (lower case) that run a program or
// load code on this machine, with what they do.
var sshOptions = map[string]string{
	"proxycommand":        "runs a program on this machine to connect",
	"localcommand":        "runs a program on this machine after connecting",
	"permitlocalcommand":  "lets the configuration run LocalCommand on this machine",
	"knownhostscommand":   "runs a program on this machine to list host keys",
	"pkcs11provider":      "loads a PKCS#11 library into ssh",
	"securitykeyprovider": "loads a security-key library into ssh",
	"include":             "reads more ssh configuration from a file the rule does not show",
	"proxyjump":           "", // another ssh: no program of the agent's choosing
}

// sshCheck reports ssh, scp and sftp -o options that run a program or load
// code on this machine; an option the guard cannot read counts too.
func sshCheck(g *guardRun, pc *parsedCmd) {
	for _, o := range pc.opts {
		if o.name != "o" || !o.hasValue {
			continue
		}
		key := o.value
		if i := strings.IndexAny(key, "= \t"); i >= 0 {
			key = key[:i]
		}
		if why := sshOptions[strings.ToLower(key)]; why != "" {
			g.add(o.at, o.valueAt, "sets "+key+", which "+why)
		}
	}
}

// javacCheck reports javac options that run code while compiling:
// annotation processors (-processor, -processorpath, --processor-path,
// --processor-module-path), compiler plugins (-Xplugin:, --plugin) and
// options passed to the JVM running javac (-J…, such as -J-javaagent:).
func javacCheck(g *guardRun, pc *parsedCmd) {
	for i := pc.prog + 1; i < len(pc.argv); i++ {
		a := pc.argv[i]
		switch {
		case a == "-processor" || a == "-processorpath" || a == "--processor-path" || a == "--processor-module-path" || a == "--plugin":
			v := -1
			if i+1 < len(pc.argv) {
				v = i + 1
			}
			g.add(i, v, "loads and runs annotation processors or compiler plugins while compiling")
			i++
		case strings.HasPrefix(a, "--processor-path=") || strings.HasPrefix(a, "--processor-module-path=") || strings.HasPrefix(a, "-Xplugin"):
			g.add(i, -1, "loads and runs annotation processors or compiler plugins while compiling")
		case strings.HasPrefix(a, "-J"):
			g.add(i, -1, "passes an option to the Java VM that runs the compiler (-J-javaagent: loads code)")
		}
	}
}

// socatCheck reports socat addresses that run a program (EXEC, SYSTEM) or
// create a file (CREATE).
func socatCheck(g *guardRun, pc *parsedCmd) {
	for _, i := range pc.operands {
		kind := pc.argv[i]
		if j := strings.IndexAny(kind, ":,"); j >= 0 {
			kind = kind[:j]
		}
		switch strings.ToUpper(kind) {
		case "EXEC", "SYSTEM":
			g.add(i, -1, "runs a program with the connection as its input and output")
		case "CREATE", "CREAT":
			g.add(i, -1, "creates or overwrites a file anywhere")
		}
	}
}

// crontabCheck reports every use of crontab but listing (-l, with -u).
func crontabCheck(g *guardRun, pc *parsedCmd) {
	for _, o := range pc.opts {
		if o.opt == nil {
			g.add(o.at, -1, "changes the scheduled commands, which run later without anyone asking")
			return
		}
	}
	if len(pc.operands) > 0 {
		g.add(pc.operands[0], -1, "replaces the scheduled commands, which run later without anyone asking")
	}
}
