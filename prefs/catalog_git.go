package prefs

import "sync"

// registerGit adds git's catalog entry (gitProgram).
func registerGit() { register("git", gitProgram) }

// gitProgram is git's catalog entry: its global options, the subcommands
// with dangerous options, and the subcommands whose operands decide (git
// config, git bisect run…). The repository's own configuration is checked
// separately (gitrepo.go), as it depends on the directory.
func gitProgram() *program {
	diffOpts := sync.OnceValue(func() []option {
		return join([]option{
			opt("output", reqArg, "writes the diff to a file anywhere"),
			opt("ext-diff", noArg, "runs the external diff program the configuration names"),
			opt("textconv", noArg, "runs the text-conversion programs the configuration names"),
			flags("a|text|no-ext-diff|no-textconv|p|patch|stat|shortstat|numstat|name-only|name-status|oneline|graph"),
			opt("U|unified|M|find-renames|C|find-copies|B|break-rewrites|stat|dirstat|relative|abbrev|color|color-moved|word-diff|word-diff-regex|ignore-submodules|submodule|src-prefix|dst-prefix|line-prefix|format|pretty|date|decorate|notes|show-notes", optArg, ""),
		}, values("n|max-count O S G l output-indicator-new output-indicator-old output-indicator-context diff-filter diff-algorithm anchored find-object skip max-parents min-parents grep author committer since until after before since-as-filter branches tags remotes glob exclude encoding L"))
	})
	diffLike := &command{lazy: diffOpts}
	formatPatch := &command{lazy: func() []option {
		return join(diffOpts(), []option{
			opt("o|output-directory", reqArg, "writes the patches into another directory"),
		}, values("v|reroll-count subject-prefix in-reply-to to cc from add-header signature signature-file base interdiff range-diff creation-factor"))
	}}
	uploadPack := opt("upload-pack", reqArg, "runs a program as the remote's upload-pack (on this machine for a local or ssh remote)")
	fetchValues := values("depth deepen shallow-since shallow-exclude refmap o|server-option j|jobs negotiation-tip filter")
	fetch := &command{lazy: func() []option { return join([]option{uploadPack, opt("recurse-submodules", optArg, "")}, fetchValues) }}
	pull := &command{lazy: func() []option {
		return join([]option{uploadPack, opt("recurse-submodules|rebase", optArg, "")}, fetchValues, values("s|strategy X|strategy-option"))
	}}
	clone := &command{lazy: func() []option {
		return join([]option{
			opt("u|upload-pack", reqArg, "runs a program as the remote's upload-pack (on this machine for a local or ssh remote)"),
			opt("c|config", reqArg, "writes configuration into the new repository (core.fsmonitor, hooks… run programs)"),
			opt("template", reqArg, "copies hook programs from a directory into the new repository"),
			opt("separate-git-dir", reqArg, "puts the repository in another directory"),
			opt("recurse-submodules", optArg, ""),
		}, values("o|origin b|branch depth reference reference-if-able j|jobs filter shallow-since shallow-exclude server-option bundle-uri revision"))
	}}
	push := &command{lazy: func() []option {
		return join([]option{
			opt("receive-pack|exec", reqArg, "runs a program as the remote's receive-pack (on this machine for a local or ssh remote)"),
			opt("force-with-lease|recurse-submodules|signed", optArg, ""),
		}, values("o|push-option repo"))
	}}
	archive := &command{lazy: func() []option {
		return join([]option{
			opt("o|output", reqArg, "writes the archive to a file anywhere"),
			opt("exec", reqArg, "runs a program as the remote's upload-archive"),
		}, values("prefix format remote add-file add-virtual-file"))
	}}
	grep := &command{lazy: func() []option {
		return join([]option{
			opt("O|open-files-in-pager", optArg, "opens the matching files with a pager program (any command)"),
			opt("textconv", noArg, "runs the text-conversion programs the configuration names"),
			flags("no-textconv"),
		}, values("e f A|after-context B|before-context C|context m|max-count max-depth threads"))
	}}
	branch := &command{lazy: func() []option {
		return join([]option{
			opt("d|delete", noArg, "deletes branches"),
			opt("D", noArg, "deletes branches, even unmerged ones"),
			opt("m|move", noArg, "renames a branch"),
			opt("M", noArg, "renames a branch, overwriting another"),
			opt("c|copy", noArg, "copies a branch"),
			opt("C", noArg, "copies a branch, overwriting another"),
			opt("f|force", noArg, "overwrites an existing branch"),
			opt("u|set-upstream-to", reqArg, "changes a branch's upstream"),
			opt("unset-upstream", noArg, "changes a branch's upstream"),
			opt("edit-description", noArg, "opens an editor program"),
			opt("contains|no-contains|merged|no-merged|t|track|abbrev|color|column", optArg, ""),
		}, values("points-at format sort"))
	}}
	tag := &command{lazy: func() []option {
		return join([]option{
			opt("d|delete", noArg, "deletes tags"),
			opt("f|force", noArg, "overwrites an existing tag"),
			opt("n|contains|no-contains|merged|no-merged|column|color", optArg, ""),
		}, values("m|message F|file u|local-user points-at format sort cleanup"))
	}}
	rebase := &command{lazy: func() []option {
		return join([]option{
			opt("x|exec", reqArg, "runs a shell command after each commit"),
		}, values("onto s|strategy X|strategy-option C"))
	}}
	difftool := &command{lazy: func() []option {
		return join([]option{
			opt("x|extcmd", reqArg, "runs a command to show each diff"),
		}, values("t|tool"))
	}}
	apply := &command{lazy: func() []option {
		return join([]option{
			opt("unsafe-paths", noArg, "writes files outside the working tree"),
		}, values("directory p C exclude include whitespace"))
	}}
	worktree := &command{check: operandIn(0, "creates, moves or removes a working tree in another directory", "add", "move", "remove")}
	remote := &command{check: operandIn(0, "changes the repository's remotes (a remote URL can name a program to run)", "add", "set-url", "rename", "remove", "rm")}

	subs := map[string]*command{
		"format-patch": formatPatch,
		"fetch":        fetch, "pull": pull, "ls-remote": {lazy: func() []option { return []option{opt("u|upload-pack", reqArg, uploadPack.why)} }},
		"clone": clone, "push": push, "archive": archive, "grep": grep,
		"branch": branch, "tag": tag, "rebase": rebase, "difftool": difftool, "apply": apply,
		"worktree": worktree, "remote": remote,
		"config": {check: gitConfigCheck, lazy: func() []option {
			return join([]option{
				opt("e|edit|add|replace-all|unset|unset-all|rename-section|remove-section", noArg, gitConfigWhy),
				flags("l|list|get|get-all|get-regexp|get-urlmatch|get-color|get-colorbool|show-origin|show-scope|name-only|includes|no-includes|z|null|global|system|local|worktree|fixed-value|bool|int|bool-or-int|path|expiry-date"),
			}, values("f|file blob type default comment value"))
		}},
		"bisect":        {check: operandIn(0, "runs a command on every commit it tests", "run")},
		"submodule":     {check: operandIn(0, "runs a shell command in every submodule", "foreach")},
		"hook":          {check: operandIn(0, "runs one of the repository's hook programs", "run")},
		"send-email":    {check: wholeSub("sends email through a program its options or configuration name")},
		"filter-branch": {check: wholeSub("runs the shell commands given in its filter options")},
		"instaweb":      {check: wholeSub("starts a web server and a browser its options or configuration name")},
		"*":             {},
	}
	for _, name := range []string{"diff", "log", "show", "whatchanged", "diff-tree", "diff-index", "diff-files", "range-diff", "stash", "reflog", "blame", "annotate", "cherry-pick", "revert"} {
		subs[name] = diffLike
	}
	return &program{launcher: runsOptions, cmd: &command{subs: subs, opts: join([]option{
		opt("c|config-env", reqArg, "sets a git configuration value for this command (core.pager, alias.x=!cmd… run programs)"),
		opt("C", reqArg, "runs git in another directory"),
		opt("git-dir", reqArg, "uses another repository"),
		opt("work-tree", reqArg, "works on another directory"),
		{longs: []string{"exec-path"}, arg: optArg, why: "runs git's subcommands from another directory", when: hasValue},
		opt("bare", noArg, "treats the working directory as the repository"),
		opt("list-cmds", optArg, ""),
		flags("p|P|h|paginate|no-pager|no-replace-objects|literal-pathspecs|glob-pathspecs|noglob-pathspecs|icase-pathspecs|no-optional-locks|no-lazy-fetch|no-advice|help|version|html-path|man-path|info-path"),
	}, values("namespace super-prefix attr-source"))}}
}

// gitConfigWhy is why changing git's configuration is dangerous.
const gitConfigWhy = "changes git's configuration (core.pager, alias.x=!cmd… run programs)"

// gitConfigCheck reports a git config command that changes configuration
// by its operands: git config set/unset/edit/rename-section/remove-section,
// and the old form with a value (`git config core.pager less`). The
// options that change it (--add, --unset, --edit…) are catalog options;
// with an option that reads (--get…, --list) nothing is reported.
func gitConfigCheck(g *guardRun, pc *parsedCmd) {
	if len(pc.operands) == 0 || pc.has("l", "list", "get", "get-all", "get-regexp", "get-urlmatch", "get-color", "get-colorbool") {
		return
	}
	for _, o := range pc.opts {
		if o.opt != nil && o.opt.why != "" {
			return // already reported
		}
	}
	switch first := pc.argv[pc.operands[0]]; first {
	case "get", "list", "get-color", "get-colorbool":
		return
	case "set", "unset", "edit", "rename-section", "remove-section":
		g.add(pc.operands[0], -1, gitConfigWhy)
		return
	}
	if len(pc.operands) >= 2 {
		g.add(pc.operands[0], -1, gitConfigWhy)
	}
}
