package prefs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/agentgate/agentgate/exec/display"
)

// Programs that read their instructions from the repository: a
// run can write .git/config, and a later rule-allowed `git status` then
// runs core.fsmonitor. So a git command is auto-allowed only when the
// configuration of the repository it works on — .git/config, the worktree's
// config.worktree, and every file they include — holds no entry that runs
// a program, and the repository has no hook program the command would run.
// The person's own configuration (~/.gitconfig, /etc/gitconfig) is theirs
// and is not read.

// gitConfigMaxBytes caps a configuration file the guard reads; a larger one
// is reported as unreadable.
const gitConfigMaxBytes = 1 << 20

// gitIncludeDepth is how deep includes are followed, as git does.
const gitIncludeDepth = 10

// gitRepoFindings returns what in the repository a git command run in dir
// (with subcommand sub, "" for none) would use to run a program: each
// configuration entry that runs one (core.fsmonitor, core.pager,
// diff.external, filter.*.clean, ! aliases, include.path…, see
// gitKeyDanger) with its value and file, and each hook program the
// subcommand may run. A dir outside any repository gives nil (git refuses
// to work there); "" gives one finding, since the repository is unknown.
// A configuration file that cannot be read, or that the guard cannot
// parse, is a finding too.
func gitRepoFindings(dir, sub string) []Finding {
	if dir == "" {
		return []Finding{{Arg: -1, Text: "git", Why: "agentgate does not know the working directory, so it cannot check the repository's configuration for programs it runs"}}
	}
	gitDir, ok := findGitDir(dir)
	if !ok {
		return nil
	}
	return gitRepoFindingsAt(gitDir, sub)
}

// gitRepoFindingsAt is gitRepoFindings for the repository gitDir.
func gitRepoFindingsAt(gitDir, sub string) []Finding {
	common := gitDir
	if b, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		c := strings.TrimSpace(string(b))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		common = c
	}
	r := gitConfigReader{}
	r.read(filepath.Join(common, "config"), 0)
	if r.worktreeConfig {
		r.read(filepath.Join(gitDir, "config.worktree"), 0)
	}
	if !r.hooksPath {
		r.hooks(filepath.Join(common, "hooks"), sub)
	}
	return r.findings
}

// findGitDir finds the repository a git command run in dir uses, as git
// discovers it: walking up from dir, a .git directory, a .git file naming
// one ("gitdir: …"), or the directory itself being a repository (a bare
// one: HEAD, objects/ and refs/).
func findGitDir(dir string) (string, bool) {
	dir = filepath.Clean(dir)
	for {
		dotGit := filepath.Join(dir, ".git")
		if fi, err := os.Stat(dotGit); err == nil {
			if fi.IsDir() {
				return dotGit, true
			}
			if b, err := os.ReadFile(dotGit); err == nil {
				if target, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:"); ok {
					target = strings.TrimSpace(target)
					if !filepath.IsAbs(target) {
						target = filepath.Join(dir, target)
					}
					return target, true
				}
			}
		}
		if isBareRepo(dir) {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// isBareRepo reports whether dir looks like a repository itself.
func isBareRepo(dir string) bool {
	if fi, err := os.Stat(filepath.Join(dir, "HEAD")); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	for _, d := range []string{"objects", "refs"} {
		if fi, err := os.Stat(filepath.Join(dir, d)); err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}

// gitConfigReader collects findings from configuration files.
type gitConfigReader struct {
	// findings are the entries and hooks found.
	findings []Finding
	// worktreeConfig is set when extensions.worktreeConfig is true.
	worktreeConfig bool
	// hooksPath is set when core.hooksPath is set (its finding names the
	// directory; .git/hooks is then not used).
	hooksPath bool
}

// read reads one configuration file and, at depth below gitIncludeDepth,
// the files it includes. A missing file is nothing (git ignores a missing
// include); an unreadable or unparsable one is a finding.
func (r *gitConfigReader) read(path string, depth int) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	var content []byte
	if err == nil {
		content, err = io.ReadAll(io.LimitReader(f, gitConfigMaxBytes+1))
		f.Close()
		if err == nil && len(content) > gitConfigMaxBytes {
			err = fmt.Errorf("larger than %d bytes", gitConfigMaxBytes)
		}
	}
	if err != nil {
		r.findings = append(r.findings, Finding{Arg: -1, Text: display.Word(path), Why: "agentgate cannot read this git configuration file (" + err.Error() + "), so it cannot tell whether it runs programs"})
		return
	}
	entries, perr := parseGitConfig(string(content))
	for _, e := range entries {
		switch {
		case e.section == "extensions" && e.sub == "" && e.name == "worktreeconfig":
			r.worktreeConfig = gitBool(e.value)
		case e.section == "core" && e.sub == "" && e.name == "hookspath":
			r.hooksPath = true
		}
		why := gitKeyDanger(e)
		if why == "" {
			continue
		}
		r.findings = append(r.findings, Finding{Arg: -1, Text: e.key() + " = " + display.Word(e.value),
			Why: why + " (set in " + display.Word(path) + ")"})
		if e.name == "path" && (e.section == "include" || e.section == "includeif") && depth < gitIncludeDepth && e.value != "" {
			r.read(includePath(path, e.value), depth+1)
		}
	}
	if perr != nil {
		r.findings = append(r.findings, Finding{Arg: -1, Text: display.Word(path), Why: "agentgate cannot parse this git configuration (" + perr.Error() + "), so it cannot tell whether it runs programs"})
	}
}

// includePath resolves an include.path value as git does: ~/ is the home
// directory, a relative path is relative to the including file.
func includePath(from, p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	if !filepath.IsAbs(p) {
		return filepath.Join(filepath.Dir(from), p)
	}
	return p
}

// hooks reports the hook programs in dir that a git subcommand sub may
// run: an executable file (on Windows any file) that is not a *.sample.
func (r *gitConfigReader) hooks(dir, sub string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasSuffix(name, ".sample") || !hookRunsFor(name, sub) {
			continue
		}
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || fi.IsDir() || (runtime.GOOS != "windows" && fi.Mode().Perm()&0o111 == 0) {
			continue
		}
		r.findings = append(r.findings, Finding{Arg: -1, Text: display.Word(filepath.Join(dir, name)),
			Why: "is a hook program of the repository, which git runs for this command"})
	}
}

// narrowHooks maps the hooks git runs only for some commands to those
// commands; any other hook (post-index-change, reference-transaction,
// pre-auto-gc, names git may add) counts for every command.
var narrowHooks = map[string][]string{
	"pre-push":           {"push"},
	"pre-commit":         {"commit", "merge", "pull", "cherry-pick", "revert", "rebase", "am"},
	"pre-merge-commit":   {"commit", "merge", "pull"},
	"prepare-commit-msg": {"commit", "merge", "pull", "cherry-pick", "revert", "rebase", "am"},
	"commit-msg":         {"commit", "merge", "pull", "cherry-pick", "revert", "rebase", "am"},
	"post-commit":        {"commit", "merge", "pull", "cherry-pick", "revert", "rebase", "am"},
	"applypatch-msg":     {"am", "rebase"},
	"pre-applypatch":     {"am", "rebase"},
	"post-applypatch":    {"am", "rebase"},
	"pre-rebase":         {"rebase", "pull"},
	"post-merge":         {"merge", "pull"},
	"post-rewrite":       {"commit", "rebase", "pull", "am"},
	"sendemail-validate": {"send-email"},
	"pre-receive":        {"receive-pack"},
	"update":             {"receive-pack"},
	"proc-receive":       {"receive-pack"},
	"post-receive":       {"receive-pack"},
	"post-update":        {"receive-pack"},
	"push-to-checkout":   {"receive-pack"},
}

// gitReadOnly are git subcommands that run none of the narrow hooks; a
// subcommand not listed here and not named in narrowHooks (an alias, say)
// counts as one that may run any hook.
var gitReadOnly = map[string]bool{
	"": true, "status": true, "diff": true, "log": true, "show": true, "branch": true, "tag": true, "fetch": true,
	"ls-files": true, "ls-tree": true, "ls-remote": true, "rev-parse": true, "rev-list": true, "describe": true,
	"blame": true, "grep": true, "shortlog": true, "reflog": true, "remote": true, "config": true, "cat-file": true,
	"show-ref": true, "for-each-ref": true, "diff-tree": true, "diff-index": true, "diff-files": true, "whatchanged": true,
	"stash": true, "add": true, "restore": true, "checkout": true, "switch": true, "reset": true, "clean": true,
	"mv": true, "rm": true, "worktree": true, "version": true, "help": true, "range-diff": true, "format-patch": true,
	"archive": true, "count-objects": true, "fsck": true, "gc": true, "maintenance": true, "name-rev": true,
	"merge-base": true, "check-ignore": true, "check-attr": true, "var": true, "submodule": true, "clone": true, "init": true,
}

// hookRunsFor reports whether git may run the hook named name for the
// subcommand sub.
func hookRunsFor(name, sub string) bool {
	cmds, narrow := narrowHooks[name]
	if !narrow {
		return true
	}
	if gitReadOnly[sub] {
		return false
	}
	for _, c := range cmds {
		if c == sub {
			return true
		}
	}
	// An unknown subcommand (an alias…) may be any of them.
	_, known := gitKnownNarrow[sub]
	return !known
}

// gitKnownNarrow are the subcommands narrowHooks names.
var gitKnownNarrow = func() map[string]bool {
	m := map[string]bool{}
	for _, cmds := range narrowHooks {
		for _, c := range cmds {
			m[c] = true
		}
	}
	return m
}()

// gitEntry is one configuration entry.
type gitEntry struct {
	// section and name are lower case; sub keeps its case ("" for none).
	section, sub, name string
	// value is the entry's value; a name without = is "" and valueless.
	value string
	// valueless is set for a name without =, which means true.
	valueless bool
}

// key returns the entry's name as git config prints it.
func (e gitEntry) key() string {
	if e.sub == "" {
		return e.section + "." + e.name
	}
	return e.section + "." + e.sub + "." + e.name
}

// gitBool reports whether a value means true (git's spelling).
func gitBool(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "true", "yes", "on", "1":
		return true
	}
	return false
}

// isGitBoolean reports whether a value is one of git's boolean spellings.
func isGitBoolean(e gitEntry) bool {
	if e.valueless {
		return true
	}
	switch strings.ToLower(strings.TrimSpace(e.value)) {
	case "true", "yes", "on", "1", "false", "no", "off", "0", "":
		return true
	}
	return false
}

// gitKeyDanger returns what a configuration entry makes git do that runs a
// program (or reads configuration from elsewhere, or works on another
// directory), "" for an entry that does not.
func gitKeyDanger(e gitEntry) string {
	s, sub, n := e.section, e.sub, e.name
	switch s {
	case "core":
		switch n {
		case "fsmonitor":
			if !isGitBoolean(e) {
				return "runs the program as the file-system monitor on nearly every git command"
			}
		case "pager", "editor", "sshcommand", "askpass", "gitproxy", "alternaterefscommand":
			return "runs the program when git needs a " + map[string]string{"pager": "pager", "editor": "text editor",
				"sshcommand": "connection over ssh", "askpass": "password", "gitproxy": "proxy", "alternaterefscommand": "list of alternate refs"}[n]
		case "hookspath":
			return "runs hook programs from this directory"
		case "worktree":
			return "works on another directory as the working tree"
		}
	case "sequence":
		if n == "editor" {
			return "runs the program as the rebase editor"
		}
	case "diff":
		if (sub == "" && n == "external") || (sub != "" && (n == "command" || n == "textconv")) {
			return "runs the program to show or convert diffs"
		}
	case "difftool", "mergetool":
		if sub != "" && (n == "cmd" || n == "path") {
			return "runs the program as a diff or merge tool"
		}
	case "merge":
		if sub != "" && n == "driver" {
			return "runs the program as a merge driver"
		}
	case "filter":
		if sub != "" && (n == "clean" || n == "smudge" || n == "process") {
			return "runs the program on files as they are read or written"
		}
	case "alias":
		if strings.HasPrefix(strings.TrimSpace(e.value), "!") {
			return "runs a shell command as a git alias"
		}
	case "pager":
		if !isGitBoolean(e) {
			return "runs the program as the pager of git " + n
		}
	case "credential":
		if n == "helper" {
			return "runs the program to get credentials"
		}
	case "gpg":
		if n == "program" || (sub == "ssh" && n == "defaultkeycommand") {
			return "runs the program to sign or verify"
		}
	case "web", "browser", "man":
		if n == "browser" || n == "cmd" || n == "path" || n == "viewer" {
			return "runs the program as a browser or manual viewer"
		}
	case "sendemail":
		if n == "sendmailcmd" || n == "tocmd" || n == "cccmd" || n == "headercmd" || (n == "smtpserver" && strings.HasPrefix(e.value, "/")) {
			return "runs the program to send email"
		}
	case "interactive":
		if n == "difffilter" {
			return "runs the program to filter interactive diffs"
		}
	case "remote":
		switch {
		case sub != "" && (n == "uploadpack" || n == "receivepack"):
			return "runs the program as the remote's " + strings.TrimSuffix(n, "pack") + "-pack"
		case sub != "" && n == "vcs":
			return "runs the remote helper git-remote-" + e.value
		case sub != "" && (n == "url" || n == "pushurl") && strings.HasPrefix(strings.ToLower(e.value), "ext::"):
			return "runs a program as the transport (ext::)"
		}
	case "url":
		if strings.HasPrefix(strings.ToLower(sub), "ext::") {
			return "rewrites remote URLs to a transport that runs a program (ext::)"
		}
	case "protocol":
		if n == "allow" && strings.ToLower(strings.TrimSpace(e.value)) != "never" {
			return "allows transports that run programs (ext::)"
		}
	case "submodule":
		if sub != "" && n == "update" && strings.HasPrefix(strings.TrimSpace(e.value), "!") {
			return "runs a shell command to update the submodule"
		}
	case "trailer":
		if sub != "" && (n == "command" || n == "cmd") {
			return "runs the program to make commit trailers"
		}
	case "hook":
		if sub != "" && n == "command" {
			return "runs the program as a hook"
		}
	case "uploadpack":
		if n == "packobjectshook" {
			return "runs the program when serving a fetch"
		}
	case "instaweb":
		if n == "httpd" || n == "browser" {
			return "runs the program as a web server or browser"
		}
	case "include", "includeif":
		if n == "path" {
			return "reads more configuration from another file"
		}
	}
	return ""
}

// parseGitConfig parses a git configuration file (git-config(1)): section
// headers [section], [section "sub"] and the old [section.sub]; entries
// name = value or a bare name (true); values with "…" quoting, the escapes
// \" \\ \n \t \b, a backslash-newline continuation, and # or ; comments
// outside quotes. It returns the entries up to the first line it cannot
// parse, with an error naming that line.
func parseGitConfig(text string) ([]gitEntry, error) {
	var out []gitEntry
	section, sub := "", ""
	line := 1
	i := 0
	skipBlank := func() {
		for i < len(text) && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\f' || text[i] == '\v') {
			i++
		}
	}
	bad := func(why string) ([]gitEntry, error) { return out, fmt.Errorf("line %d: %s", line, why) }
	for i < len(text) {
		skipBlank()
		if i >= len(text) {
			break
		}
		switch c := text[i]; {
		case c == '\n':
			i++
			line++
			continue
		case c == '#' || c == ';':
			for i < len(text) && text[i] != '\n' {
				i++
			}
			continue
		case c == '[':
			i++
			start := i
			for i < len(text) && (isAlnum(text[i]) || text[i] == '-' || text[i] == '.') {
				i++
			}
			section, sub = strings.ToLower(text[start:i]), ""
			if section == "" {
				return bad("a section header without a name")
			}
			if i < len(text) && (text[i] == ' ' || text[i] == '\t') {
				skipBlank()
				if i >= len(text) || text[i] != '"' {
					return bad("a bad section header")
				}
				i++
				var b strings.Builder
				for ; i < len(text) && text[i] != '"'; i++ {
					if text[i] == '\n' {
						return bad("a subsection name that does not end")
					}
					if text[i] == '\\' && i+1 < len(text) {
						i++
					}
					b.WriteByte(text[i])
				}
				if i >= len(text) {
					return bad("a subsection name that does not end")
				}
				i++
				sub = b.String()
			} else if dot := strings.IndexByte(section, '.'); dot >= 0 {
				section, sub = section[:dot], section[dot+1:]
			}
			if i >= len(text) || text[i] != ']' {
				return bad("a section header that does not end with ]")
			}
			i++
			continue
		case isAlpha(c):
			if section == "" {
				return bad("an entry before any section")
			}
			start := i
			for i < len(text) && (isAlnum(text[i]) || text[i] == '-') {
				i++
			}
			e := gitEntry{section: section, sub: sub, name: strings.ToLower(text[start:i])}
			skipBlank()
			if i >= len(text) || text[i] == '\n' || text[i] == '#' || text[i] == ';' {
				e.valueless = true
				out = append(out, e)
				continue
			}
			if text[i] != '=' {
				return bad("an entry without =")
			}
			i++
			v, next, lines, err := gitValue(text, i)
			if err != nil {
				return bad(err.Error())
			}
			e.value, i = v, next
			out = append(out, e)
			line += lines
			continue
		default:
			return bad(fmt.Sprintf("an unexpected character %q", c))
		}
	}
	return out, nil
}

// gitValue reads a value starting at text[i] (after the =) up to the end
// of its line; it returns the value, where reading stopped (the newline),
// and how many continuation newlines it crossed.
func gitValue(text string, i int) (string, int, int, error) {
	var b strings.Builder
	quoted := false
	lines := 0
	pendingSpace := 0 // unquoted blank space seen but not yet written
	started := false
	for i < len(text) {
		c := text[i]
		switch {
		case c == '\n':
			if quoted {
				return "", i, lines, errors.New("a quoted value that does not end on its line")
			}
			return b.String(), i, lines, nil
		case !quoted && (c == '#' || c == ';'):
			for i < len(text) && text[i] != '\n' {
				i++
			}
			return b.String(), i, lines, nil
		case !quoted && (c == ' ' || c == '\t' || c == '\r'):
			if started {
				pendingSpace++
			}
			i++
			continue
		case c == '"':
			quoted = !quoted
			i++
			started = true
			b.WriteString(strings.Repeat(" ", pendingSpace))
			pendingSpace = 0
			continue
		case c == '\\':
			if i+1 >= len(text) {
				return "", i, lines, errors.New("a value ending in a backslash")
			}
			b.WriteString(strings.Repeat(" ", pendingSpace))
			pendingSpace = 0
			i++
			switch text[i] {
			case '\n':
				lines++
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'b':
				b.WriteByte('\b')
			case '\\', '"':
				b.WriteByte(text[i])
			default:
				return "", i, lines, fmt.Errorf("an unknown escape \\%c in a value", text[i])
			}
			i++
			started = true
			continue
		}
		b.WriteString(strings.Repeat(" ", pendingSpace))
		pendingSpace = 0
		b.WriteByte(c)
		started = true
		i++
	}
	if quoted {
		return "", i, lines, errors.New("a quoted value that does not end")
	}
	return b.String(), i, lines, nil
}

// isAlpha and isAlnum classify ASCII bytes for configuration names.
func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// isAlnum reports whether c is an ASCII letter or digit.
func isAlnum(c byte) bool { return isAlpha(c) || c >= '0' && c <= '9' }
