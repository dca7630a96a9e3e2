package prefs

import (
	"fmt"
	"math/rand/v2"
	"os"
	osexec "os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// repoWithConfig returns a clean repository (cleanRepo) whose
// .git/config has extra appended.
func repoWithConfig(t *testing.T, extra string) string {
	t.Helper()
	dir := cleanRepo(t)
	f, err := os.OpenFile(filepath.Join(dir, ".git/config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(extra); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestGitConfigThatRunsPrograms: every kind of entry that makes git run a
// program keeps `git status` (allowed by the rule git status) from running
// without a person, and the finding shows the key and its value.
func TestGitConfigThatRunsPrograms(t *testing.T) {
	for _, tc := range []struct{ config, key string }{
		{"[core]\n\tfsmonitor = ./evil.sh\n", "core.fsmonitor = ./evil.sh"},
		{"[core]\n\tpager = sh -c id\n", "core.pager = 'sh -c id'"},
		{"[core]\n\teditor = x\n", "core.editor = x"},
		{"[core]\n\tsshCommand = x\n", "core.sshcommand = x"},
		{"[core]\n\thooksPath = .githooks\n", "core.hookspath = .githooks"},
		{"[core]\n\taskPass = x\n", "core.askpass = x"},
		{"[core]\n\tgitProxy = x\n", "core.gitproxy = x"},
		{"[core]\n\tworktree = /elsewhere\n", "core.worktree = /elsewhere"},
		{"[core]\n\talternateRefsCommand = x\n", "core.alternaterefscommand = x"},
		{"[sequence]\n\teditor = x\n", "sequence.editor = x"},
		{"[diff]\n\texternal = x\n", "diff.external = x"},
		{"[diff \"bin\"]\n\ttextconv = x\n", "diff.bin.textconv = x"},
		{"[diff \"bin\"]\n\tcommand = x\n", "diff.bin.command = x"},
		{"[difftool \"t\"]\n\tcmd = x\n", "difftool.t.cmd = x"},
		{"[mergetool \"t\"]\n\tpath = x\n", "mergetool.t.path = x"},
		{"[merge \"m\"]\n\tdriver = x\n", "merge.m.driver = x"},
		{"[filter \"lfs\"]\n\tclean = x %f\n", "filter.lfs.clean = 'x %f'"},
		{"[filter \"lfs\"]\n\tsmudge = x\n", "filter.lfs.smudge = x"},
		{"[filter \"lfs\"]\n\tprocess = x\n", "filter.lfs.process = x"},
		{"[alias]\n\tst = !sh -c id\n", "alias.st = '!sh -c id'"},
		{"[alias]\n\tst = \" !x\"\n", "alias.st = ' !x'"},
		{"[pager]\n\tlog = x\n", "pager.log = x"},
		{"[credential]\n\thelper = x\n", "credential.helper = x"},
		{"[credential \"https://h\"]\n\thelper = x\n", "credential.https://h.helper = x"},
		{"[gpg]\n\tprogram = x\n", "gpg.program = x"},
		{"[gpg \"ssh\"]\n\tdefaultKeyCommand = x\n", "gpg.ssh.defaultkeycommand = x"},
		{"[web]\n\tbrowser = x\n", "web.browser = x"},
		{"[browser \"b\"]\n\tcmd = x\n", "browser.b.cmd = x"},
		{"[man \"m\"]\n\tcmd = x\n", "man.m.cmd = x"},
		{"[sendemail]\n\tsendmailCmd = x\n", "sendemail.sendmailcmd = x"},
		{"[sendemail]\n\tsmtpServer = /bin/x\n", "sendemail.smtpserver = /bin/x"},
		{"[interactive]\n\tdiffFilter = x\n", "interactive.difffilter = x"},
		{"[remote \"o\"]\n\tuploadpack = x\n", "remote.o.uploadpack = x"},
		{"[remote \"o\"]\n\treceivepack = x\n", "remote.o.receivepack = x"},
		{"[remote \"o\"]\n\turl = ext::sh -c id\n", "remote.o.url = 'ext::sh -c id'"},
		{"[remote \"o\"]\n\tvcs = x\n", "remote.o.vcs = x"},
		{"[url \"ext::sh -c id #\"]\n\tinsteadOf = https://\n", "url.ext::sh -c id #.insteadof = https://"},
		{"[protocol]\n\tallow = always\n", "protocol.allow = always"},
		{"[protocol \"ext\"]\n\tallow = user\n", "protocol.ext.allow = user"},
		{"[submodule \"s\"]\n\tupdate = !x\n", "submodule.s.update = '!x'"},
		{"[trailer \"t\"]\n\tcommand = x\n", "trailer.t.command = x"},
		{"[hook \"h\"]\n\tcommand = x\n", "hook.h.command = x"},
		{"[uploadpack]\n\tpackObjectsHook = x\n", "uploadpack.packobjectshook = x"},
		{"[include]\n\tpath = other.cfg\n", "include.path = other.cfg"},
		{"[includeIf \"gitdir:/x/\"]\n\tpath = other.cfg\n", "includeif.gitdir:/x/.path = other.cfg"},
		{"[CORE]\n\tPAGER = x\n", "core.pager = x"},
		{"[core] pager = x\n", "core.pager = x"},
		{"[core.x]\n[core]\n\tpager = \"a\\\"b\" # c\n", `core.pager = 'a"b'`},
		{"[core]\n\tpager = a\\\n b\n", "core.pager = 'a b'"},
		{"[core]\n\tpager = x ; comment\n", "core.pager = x"},
	} {
		dir := repoWithConfig(t, tc.config)
		fs := Guard([]string{"git", "status"}, 2, dir)
		found := false
		for _, f := range fs {
			if f.Arg == -1 && f.Text == tc.key {
				found = true
			}
		}
		if !found {
			t.Errorf("config %q: findings %q, want one for %s", tc.config, FindingsText(fs), tc.key)
		}
	}
}

func TestGitConfigThatRunsNothing(t *testing.T) {
	for _, config := range []string{
		"[core]\n\tfsmonitor = true\n", "[core]\n\tfsmonitor = false\n", "[pager]\n\tlog = false\n", "[alias]\n\tst = status -sb\n",
		"[user]\n\tname = A\n\temail = a@b\n", "[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n", "[protocol \"ext\"]\n\tallow = never\n",
		"[diff]\n\tcolorMoved = zebra\n\ttool = meld\n", "[pull]\n\trebase\n", "[submodule \"s\"]\n\tupdate = rebase\n\turl = https://x\n",
		"# [core] pager = x\n; also a comment\n", "[remote \"o\"]\n\turl = git@github.com:a/b.git\n",
	} {
		dir := repoWithConfig(t, config)
		if fs := Guard([]string{"git", "status"}, 2, dir); len(fs) > 0 {
			t.Errorf("config %q: %s", config, FindingsText(fs))
		}
	}
}

func TestGitRepoDiscovery(t *testing.T) {
	evil := "[core]\n\tpager = x\n"
	t.Run("subdirectory", func(t *testing.T) {
		dir := repoWithConfig(t, evil)
		sub := filepath.Join(dir, "a", "b")
		os.MkdirAll(sub, 0o700)
		if len(Guard([]string{"git", "log"}, 2, sub)) == 0 {
			t.Error("the repository above the working directory was not read")
		}
	})
	t.Run("worktree file with commondir and worktree config", func(t *testing.T) {
		main := cleanRepo(t)
		wtGit := filepath.Join(main, ".git", "worktrees", "w")
		os.MkdirAll(wtGit, 0o700)
		writeFile(t, filepath.Join(wtGit, "commondir"), "../..\n")
		wt := t.TempDir()
		writeFile(t, filepath.Join(wt, ".git"), "gitdir: "+wtGit+"\n")
		if fs := Guard([]string{"git", "status"}, 2, wt); len(fs) > 0 {
			t.Fatalf("clean worktree: %s", FindingsText(fs))
		}
		writeFile(t, filepath.Join(wtGit, "config.worktree"), evil)
		if fs := Guard([]string{"git", "status"}, 2, wt); len(fs) > 0 {
			t.Fatalf("config.worktree is read only with extensions.worktreeConfig: %s", FindingsText(fs))
		}
		f, _ := os.OpenFile(filepath.Join(main, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
		f.WriteString("[extensions]\n\tworktreeConfig = true\n")
		f.Close()
		if len(Guard([]string{"git", "status"}, 2, wt)) == 0 {
			t.Error("the worktree's config.worktree was not read")
		}
	})
	t.Run("bare repository as the working directory", func(t *testing.T) {
		dir := repoWithConfig(t, evil)
		bare := filepath.Join(dir, ".git")
		if len(Guard([]string{"git", "log"}, 2, bare)) == 0 {
			t.Error("a bare repository in the working directory was not read")
		}
	})
	t.Run("-C and --git-dir", func(t *testing.T) {
		clean := cleanRepo(t)
		evilRepo := repoWithConfig(t, evil)
		if len(Guard([]string{"git", "-C", evilRepo, "log"}, 4, clean)) == 0 {
			t.Error("git -C DIR: DIR's repository was not read")
		}
		if len(Guard([]string{"git", "--git-dir=" + filepath.Join(evilRepo, ".git"), "log"}, 3, clean)) == 0 {
			t.Error("git --git-dir: that repository was not read")
		}
	})
	t.Run("include followed", func(t *testing.T) {
		dir := repoWithConfig(t, "[include]\n\tpath = ../extra.cfg\n")
		writeFile(t, filepath.Join(dir, "extra.cfg"), "[core]\n\tfsmonitor = ./x\n")
		fs := Guard([]string{"git", "status"}, 2, dir)
		if !strings.Contains(FindingsText(fs), "core.fsmonitor = ./x") {
			t.Errorf("the included file was not read: %s", FindingsText(fs))
		}
	})
	t.Run("unparsable config", func(t *testing.T) {
		dir := repoWithConfig(t, "[core\n")
		if fs := Guard([]string{"git", "status"}, 2, dir); !strings.Contains(FindingsText(fs), "cannot parse") {
			t.Errorf("findings %s", FindingsText(fs))
		}
	})
	t.Run("no repository", func(t *testing.T) {
		if fs := Guard([]string{"git", "status"}, 2, t.TempDir()); len(fs) > 0 {
			t.Errorf("outside a repository: %s", FindingsText(fs))
		}
	})
	t.Run("unknown directory", func(t *testing.T) {
		if fs := Guard([]string{"git", "status"}, 2, ""); len(fs) != 1 {
			t.Errorf("no directory: %s", FindingsText(fs))
		}
	})
	t.Run("not git", func(t *testing.T) {
		dir := repoWithConfig(t, evil)
		if fs := Guard([]string{"ls"}, 1, dir); len(fs) > 0 {
			t.Errorf("ls in an evil repository: %s", FindingsText(fs))
		}
		if fs := Guard([]string{"timeout", "5", "git", "log"}, 3, dir); len(fs) == 0 {
			t.Error("git behind a wrapper: the repository was not read")
		}
	})
}

func TestGitHooks(t *testing.T) {
	hook := func(t *testing.T, name string, mode os.FileMode) string {
		dir := cleanRepo(t)
		p := filepath.Join(dir, ".git", "hooks", name)
		writeFile(t, p, "#!/bin/sh\ntouch /tmp/pwned\n")
		os.Chmod(p, mode)
		return dir
	}
	for _, tc := range []struct {
		hook, argv string
		mode       os.FileMode
		want       bool
	}{
		{"post-index-change", "git status", 0o755, true},
		{"reference-transaction", "git fetch origin", 0o755, true},
		{"pre-auto-gc", "git log", 0o755, true},
		{"some-future-hook", "git status", 0o755, true},
		{"pre-commit", "git commit -m x", 0o755, true},
		{"pre-commit", "git status", 0o755, false},
		{"pre-commit", "git ci -m x", 0o755, true}, // an alias may be commit
		{"pre-commit", "git push", 0o755, false},
		{"pre-push", "git push origin main", 0o755, true},
		{"pre-push", "git diff", 0o755, false},
		{"post-merge", "git pull", 0o755, true},
		// Not executable: git on Unix does not run it; Windows has no
		// executable bit, and Git for Windows runs it.
		{"post-index-change", "git status", 0o644, runtime.GOOS == "windows"},
		{"post-index-change.sample", "git status", 0o755, false},
	} {
		dir := hook(t, tc.hook, tc.mode)
		argv := strings.Fields(tc.argv)
		got := len(Guard(argv, len(argv), dir)) > 0
		if got != tc.want {
			t.Errorf("hook %s (%o), %q: stopped %v, want %v", tc.hook, tc.mode, tc.argv, got, tc.want)
		}
	}
}

// gitConfigFragments make random configuration files.
var gitConfigFragments = []string{
	"[core]", "[Core]", "[remote \"o\"]", "[remote \"a\\\"b\"]", "[a.B]", "[x-y]", "\n", "\n", "\n", "\t", " ", "key", "Name2", "a-b",
	" = ", "=", "value", "two words", "\"quoted ; #\"", "\\\"", "\\\\", "\\n", "\\t", "\\\n", "# comment", "; comment", "\"", "\\x", "[", "]",
}

// TestParseGitConfigAgreesWithGit: for random configuration files git
// accepts, parseGitConfig reads the same entries as `git config --list`.
func TestParseGitConfigAgreesWithGit(t *testing.T) {
	git, err := osexec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	rng := rand.New(rand.NewPCG(9, 10))
	dir := t.TempDir()
	agreed := 0
	for i := 0; i < 1500; i++ {
		var b strings.Builder
		b.WriteString("[s]\n")
		for n := 1 + rng.IntN(12); n > 0; n-- {
			b.WriteString(gitConfigFragments[rng.IntN(len(gitConfigFragments))])
		}
		text := b.String()
		path := filepath.Join(dir, fmt.Sprintf("c%d", i))
		writeFile(t, path, text)
		cmd := osexec.Command(git, "config", "--file", path, "--null", "--list")
		cmd.Env = []string{"HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1"}
		out, gitErr := cmd.Output()
		entries, ourErr := parseGitConfig(text)
		if gitErr != nil {
			continue // git refuses it, so git runs nothing with it
		}
		if ourErr != nil {
			t.Errorf("config %q: git reads it, parseGitConfig fails: %v", text, ourErr)
			continue
		}
		var want []string
		for _, rec := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
			if rec != "" {
				want = append(want, rec)
			}
		}
		var got []string
		for _, e := range entries {
			if e.valueless {
				got = append(got, e.key())
			} else {
				got = append(got, e.key()+"\n"+e.value)
			}
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("config %q:\n parseGitConfig %q\n git            %q", text, got, want)
			continue
		}
		agreed++
	}
	if agreed < 150 {
		t.Fatalf("only %d random configurations were compared", agreed)
	}
}
