package prefs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/exec/shellword"
)

// catalogCase is one catalog entry's examples: under the rule, every ask
// line must go to a person and every allow line must still run by rule.
type catalogCase struct {
	// rule is the rule written as shell words.
	rule string
	// ask are command lines the guard must stop.
	ask []string
	// allow are everyday command lines that must still be auto-allowed.
	allow []string
}

// catalogCases hold, for every program and wrapper of the catalog, the
// dangerous arguments (each catalog option appears in some ask line, see
// TestCatalogCasesCoverEveryOption) and everyday uses that stay allowed.
var catalogCases = []catalogCase{
	{rule: "git diff",
		ask: []string{"git diff --output=/tmp/x", "git diff --output /tmp/x", "git diff --outp=/tmp/x", "git diff HEAD --output=x", "git diff --ext-diff",
			`git diff --ext\-diff`, "git diff --textconv", "git diff --text --textconv HEAD"},
		allow: []string{"git diff --stat", "git diff", "git diff 'HEAD~1' -- src", "git diff --text", "git diff --no-ext-diff --no-textconv", "git diff --output-indicator-new=+ HEAD",
			"git diff -- --output=x", "git diff --name-only main...HEAD"}},
	{rule: "git log",
		ask:   []string{"git log --output=/tmp/x", "git log -p --ext-diff", "git log --outpu=x"},
		allow: []string{"git log -n 3 --oneline", "git log --format=%H -1", "git log --grep fix --author=me", "git log -p -- README.md"}},
	{rule: "git show", ask: []string{"git show --textconv HEAD:x"}, allow: []string{"git show HEAD --stat"}},
	{rule: "git format-patch", ask: []string{"git format-patch -o /tmp/out 'HEAD~3'", "git format-patch --output-directory=../x -1"}, allow: []string{"git format-patch -1 --stdout"}},
	{rule: "git grep",
		ask:   []string{"git grep --open-files-in-pager=vim TODO", "git grep -Ovim TODO", "git grep -O TODO", "git grep --open-files TODO"},
		allow: []string{"git grep -n TODO", "git grep -e -O -- src"}},
	{rule: "git fetch",
		ask:   []string{"git fetch origin --upload-pack=touch /tmp/x", "git fetch --upload-pack 'sh -c id' origin"},
		allow: []string{"git fetch origin main", "git fetch --all --prune", "git fetch -u origin"}},
	{rule: "git pull", ask: []string{"git pull --upload-pack=x origin"}, allow: []string{"git pull --rebase origin main"}},
	{rule: "git ls-remote", ask: []string{"git ls-remote -u x origin", "git ls-remote --upload-pack=x origin"}, allow: []string{"git ls-remote --heads origin"}},
	{rule: "git clone",
		ask: []string{"git clone -u x url", "git clone --upload-pack=x url", "git clone -c core.fsmonitor=x url", "git clone --config=core.pager=x url",
			"git clone --template=/tmp/t url", "git clone --separate-git-dir=/tmp/g url"},
		allow: []string{"git clone https://github.com/a/b", "git clone --depth 1 -b main https://x/y dir"}},
	{rule: "git push", ask: []string{"git push --receive-pack=x origin", "git push --exec=x origin"}, allow: []string{"git push origin HEAD", "git push -u origin feature"}},
	{rule: "git archive", ask: []string{"git archive -o /tmp/a.tar HEAD", "git archive --output=x HEAD", "git archive --exec=x --remote=r HEAD"}, allow: []string{"git archive --format=tar HEAD"}},
	{rule: "git branch",
		ask: []string{"git branch -v -D x", "git branch -d x", "git branch --delete x", "git branch -m a b", "git branch -M a b", "git branch -c a b",
			"git branch -C a b", "git branch -f main HEAD", "git branch -u origin/x", "git branch --set-upstream-to=origin/x", "git branch --unset-upstream",
			"git branch --edit-description", "git branch -vD x", "git branch --del x"},
		allow: []string{"git branch -v", "git branch", "git branch -a --contains HEAD", "git branch --list 'feat*'", "git branch new-feature"}},
	{rule: "git tag", ask: []string{"git tag -d v1", "git tag -f v1"}, allow: []string{"git tag", "git tag -l 'v*'", "git tag -n v1"}},
	{rule: "git rebase", ask: []string{"git rebase -x 'make test' main", "git rebase --exec=x main"}, allow: []string{"git rebase main", "git rebase --onto main a b"}},
	{rule: "git difftool", ask: []string{"git difftool -x 'sh -c id'", "git difftool --extcmd=x"}, allow: []string{"git difftool -t meld HEAD"}},
	{rule: "git apply", ask: []string{"git apply --unsafe-paths p.diff"}, allow: []string{"git apply --check p.diff"}},
	{rule: "git worktree", ask: []string{"git worktree add ../x", "git worktree remove x"}, allow: []string{"git worktree list"}},
	{rule: "git remote", ask: []string{"git remote add evil ext::sh", "git remote set-url origin x"}, allow: []string{"git remote -v", "git remote show origin"}},
	{rule: "git config",
		ask: []string{"git config core.pager less", "git config set core.pager less", "git config --add alias.x '!sh'", "git config --unset x.y", "git config -e",
			"git config --edit", "git config --replace-all a.b c", "git config --unset-all a.b", "git config --rename-section a b", "git config --remove-section a",
			"git config unset a.b"},
		allow: []string{"git config --get user.name", "git config user.name", "git config --list", "git config -l", "git config get user.email", "git config --get-regexp alias"}},
	{rule: "git bisect", ask: []string{"git bisect run make test"}, allow: []string{"git bisect start", "git bisect good"}},
	{rule: "git submodule", ask: []string{"git submodule foreach 'rm -rf x'"}, allow: []string{"git submodule status", "git submodule update --init"}},
	{rule: "git hook", ask: []string{"git hook run pre-commit"}, allow: []string{"git hook list pre-commit"}},
	{rule: "git", ask: []string{"git send-email --to=a@b x.patch", "git filter-branch --tree-filter 'rm -rf x' HEAD", "git instaweb"}},
	{rule: "git",
		ask: []string{"git -C /elsewhere reset --hard", "git -c core.pager=x log", "git -ccore.pager=x log", "git --config-env=core.pager=X log", "git --git-dir=/x status",
			"git --work-tree /x status", "git --exec-path=/tmp status", "git --bare status", "git -C .. status", "git diff --output=x"},
		allow: []string{"git status", "git --no-pager log -1", "git --exec-path", "git -P diff --stat", "git --version", "git status --short --branch"}},

	{rule: "find",
		ask: []string{"find . -exec rm '{}' ';'", "find . -name x -execdir sh -c id '{}' +", "find . -ok rm '{}' \\;", "find . -okdir rm '{}' ';'", "find . -delete",
			"find . -fprint /tmp/x", "find . -fprint0 /tmp/x", "find . -fprintf /tmp/x %p", "find . -fls /tmp/x"},
		allow: []string{"find . -name '*.go' -type f", "find src -maxdepth 2 -newer go.mod -print", "find . -path ./vendor -prune -o -print0"}},
	{rule: "sed",
		ask: []string{"sed s/a/b/e f", "sed 's/a/b/w /tmp/x' f", "sed 'w /tmp/x' f", "sed -n '1W /tmp/x' f", "sed 1e\\ id f", "sed -i s/a/b/ f", "sed -ni p f",
			"sed --in-place=.bak s/a/b/ f", "sed -e p -e 's/x/y/e' f", "sed --expression='1e id' f", "sed -f script.sed f", "sed '/[/]/e id' f", "sed 'y/ab/ba/;e id' f",
			"sed ':a;e id' f", "sed '1{e id' f", "sed --in-pl s/a/b/ f", "sed -E 's/(a|b)/x/gw out' f", "sed 's/a/b/;%' f"},
		allow: []string{"sed -n 1,5p f", "sed 's/foo/bar/g' file", "sed -n '/start/,/end/p' f", "sed -E 's/(a|b)/x/2;s/c/d/I' f", "sed 's/a/b/w /dev/stdout' f",
			"sed --sandbox 's/a/b/e' f", "sed -e 'a\\' -e 'text; e id' f", "sed '$!N;s/\\n/ /' f", "sed -n 'l 20' f", "sed 's|/usr|/opt|g' f", "sed '1~3d;/x/I,+2{p;q}' f"}},
	{rule: "awk",
		ask: []string{"awk 'BEGIN{system(\"id\")}'", "awk '{print > \"out\"}' f", "awk '{print >> \"out\"}' f", "awk '{print | \"sh\"}' f",
			"awk 'BEGIN{\"date\" | getline d}'", "awk '{printf(\"%s\", $0) > \"x\"}' f", "awk -f prog.awk f", "awk --exec=prog.awk f", "awk -E prog.awk f",
			"awk -e 'BEGIN{system(\"id\")}'", "awk -i lib.awk 1 f", "awk -l ext 1 f", "awk -o/tmp/x 1 f", "awk --dump-variables=/tmp/x 1 f",
			"awk -p/tmp/x 1 f", "awk -W exec f", "awk '@load \"x\"'", "awk 'BEGIN{f=\"system\"; @f(\"id\")}'", "awk '{print $1,\n $2 > \"out\"}' f",
			"awk 'BEGIN{x=\"unterminated}'"},
		allow: []string{"awk '{print $1}' f", "awk -F: '$3 > 1000 {print $1}' /etc/passwd", "awk 'NR==1 || /x|y/' f", "awk '{print > \"/dev/stderr\"}' f",
			"awk '{ s += $2 } END { print s / NR }' f", "awk -v n=3 'NR <= n' f", "awk '$1 >= 2 && $2 != \"x|y\"' f", "awk --sandbox 'BEGIN{system(\"id\")}'",
			"awk '{print ($1 > $2 ? $1 : $2)}' f"}},
	{rule: "sort",
		ask:   []string{"sort -o /tmp/x f", "sort -uo/tmp/x f", "sort --output=x f", "sort --outp x f", "sort --compress-program=sh f", "sort f -o f"},
		allow: []string{"sort -u f", "sort -k2 -n f", "sort -t: -k3,3n f", "sort -T /tmp -S 1G f"}},
	{rule: "rg",
		ask:   []string{"rg --pre cat TODO", "rg --pre=./x TODO", "rg --hostname-bin=./x TODO"},
		allow: []string{"rg -n TODO src", "rg --pre-glob '*.gz' -z TODO", "rg -e --pre TODO"}},
	{rule: "tar",
		ask: []string{"tar --to-command=sh -xf a.tar", "tar -I sh -xf a.tar", "tar xIf sh a.tar", "tar --use-compress-program=x -cf a.tar .",
			"tar --checkpoint=1 --checkpoint-action=exec=id -cf a.tar .", "tar -F ./s -cf a.tar .", "tar --info-script=./s -cf a.tar .",
			"tar --rsh-command=./x -cf h:a.tar .", "tar -C /etc -xf a.tar", "tar xCf /etc a.tar", "tar -P -xf a.tar", "tar --index-file=/tmp/x -cvf a.tar .",
			"tar --remove-files -cf a.tar x", "tar -cf host:a.tar .", "tar cf host:/a.tar ."},
		allow: []string{"tar -tzf a.tgz", "tar -czf out.tgz src", "tar xzf a.tgz", "tar --checkpoint=100 --checkpoint-action=dot -cf a.tar .", "tar -cf ./a:b.tar .",
			"tar --force-local -cf c:a.tar ."}},
	{rule: "curl",
		ask: []string{"curl -o /tmp/x https://e.x", "curl -sSLo x https://e.x", "curl --output=x https://e.x", "curl -O https://e.x/a", "curl --remote-name-all https://e.x/a",
			"curl -OJ https://e.x/a", "curl --output-dir /tmp -O https://e.x/a", "curl -K cfg https://e.x", "curl -D /tmp/h https://e.x", "curl -c /tmp/j https://e.x",
			"curl --trace /tmp/t https://e.x", "curl --stderr /tmp/e https://e.x", "curl --libcurl x.c https://e.x", "curl --etag-save x https://e.x",
			"curl --hsts x https://e.x", "curl -w '%output{/tmp/x}%{http_code}' https://e.x"},
		allow: []string{"curl -s https://example.com", "curl -fsSL -H 'Accept: application/json' https://e.x", "curl -sI https://e.x", "curl -X POST -d @body.json https://e.x",
			"curl -sXPOST https://e.x", "curl -o - https://e.x", "curl -D - https://e.x", "curl -w '%{http_code}' https://e.x"}},
	{rule: "wget",
		ask: []string{"wget -O /tmp/x https://e.x", "wget --output-document=x https://e.x", "wget -o log https://e.x", "wget -a log https://e.x", "wget -P /tmp https://e.x",
			"wget -e robots=off https://e.x", "wget --config=x https://e.x", "wget --use-askpass=./x https://e.x"},
		allow: []string{"wget -q https://e.x/a.tgz", "wget --spider https://e.x", "wget -qO- https://e.x", "wget -O - https://e.x"}},
	{rule: "make",
		ask: []string{"make -C /elsewhere", "make -f other.mk", "make --eval='x:=$(shell id)'", "make -E x", "make -I /tmp/inc", "make SHELL=/tmp/x test",
			"make CC=./evil", "make 'X!=id'", "make MAKEFLAGS=-j1"},
		allow: []string{"make test", "make -j4 build", "make -n install", "make V=1 test", "make -k"}},
	{rule: "rsync",
		ask: []string{"rsync -e 'sh -c id' a b", "rsync --rsh=x a h:b", "rsync --rsync-path='sh -c id' a h:b", "rsync --log-file=/tmp/l a b", "rsync --write-batch=/tmp/b a b",
			"rsync --only-write-batch=x a b", "rsync --daemon", "rsync --config=x --daemon", "rsync --backup-dir=/tmp/b -b a b", "rsync -M --log-file=/x a h:b"},
		allow: []string{"rsync -av src/ dst/", "rsync -avn --delete a/ b/", "rsync -av --exclude .git a/ h:b/"}},
	{rule: "ssh",
		ask: []string{"ssh -o ProxyCommand=id h", "ssh -oProxyCommand=id h", "ssh -o 'proxycommand id' h", "ssh -o LocalCommand=id -o PermitLocalCommand=yes h",
			"ssh -o KnownHostsCommand=id h", "ssh -o PKCS11Provider=/x.so h", "ssh -F ./cfg h", "ssh -E /tmp/log h", "ssh -I /x.so h", "ssh -vo ProxyCommand=id h"},
		allow: []string{"ssh -o BatchMode=yes h true", "ssh -p 2222 -i key h uptime", "ssh -J jump h"}},
	{rule: "scp", ask: []string{"scp -S ./x a h:b", "scp -o ProxyCommand=id a h:b", "scp -F cfg a h:b"}, allow: []string{"scp -P 2222 a h:b", "scp -r dir h:"}},
	{rule: "sftp", ask: []string{"sftp -S ./x h", "sftp -D ./x h"}, allow: []string{"sftp -b batch h"}},
	{rule: "zip", ask: []string{"zip -T a.zip f", "zip -TT 'sh -c id' a.zip f", "zip --unzip-command=x -T a.zip f"}, allow: []string{"zip -r out.zip src", "zip -q a.zip f"}},
	{rule: "npm",
		ask: []string{"npm exec foo", "npm x foo", "npm explore x", "npm init foo", "npm create vite", "npm config set script-shell x", "npm set script-shell x",
			"npm --prefix /tmp install", "npm install --prefix=/tmp", "npm -C /tmp test", "npm test --userconfig=x", "npm run x --script-shell=/tmp/x",
			"npm test --node-options=--require=x", "npm exec -c id"},
		allow: []string{"npm test", "npm run lint", "npm ls", "npm ci", "npm config get registry", "npm init -y"}},
	{rule: "pnpm", ask: []string{"pnpm dlx x", "pnpm exec x", "pnpm -C /tmp test", "pnpm create x", "pnpm node x.js"}, allow: []string{"pnpm run build", "pnpm install"}},
	{rule: "yarn", ask: []string{"yarn dlx x", "yarn --cwd /tmp test"}, allow: []string{"yarn test", "yarn install --frozen-lockfile"}},
	{rule: "bun", ask: []string{"bun x cowsay", "bun --cwd=/tmp test"}, allow: []string{"bun test", "bun run build"}},
	{rule: "go",
		ask: []string{"go test -exec ./x ./...", "go test ./... -exec=./x", "go build -toolexec=./x ./...", "go vet -vettool=./x ./...", "go build -C /tmp .",
			"go build -o /usr/local/bin/x .", "go build -o ../x .", "go env -w GOFLAGS=-toolexec=x", "go env -u GOFLAGS"},
		allow: []string{"go test ./...", "go build ./...", "go vet ./...", "go build -o bin/x ./cmd/x", "go test -run TestX -count=1 ./pkg", "go env GOPATH"}},
	{rule: "cargo",
		ask:   []string{"cargo build --config 'target.x.runner=\"x\"'", "cargo test --manifest-path /tmp/Cargo.toml", "cargo install ripgrep", "cargo build --target-dir /tmp/t", "cargo -C /tmp build"},
		allow: []string{"cargo test", "cargo build --release", "cargo clippy -- -D warnings", "cargo build --target-dir target/x"}},
	{rule: "nc",
		ask:   []string{"nc -e /bin/sh h 1", "nc -c id h 1"},
		allow: []string{"nc -zv h 443", "nc -w 1 h 80"}},
	{rule: "ncat", ask: []string{"ncat --exec=/bin/sh h 1", "ncat --sh-exec=id h 1", "ncat --lua-exec=x.lua h 1"}, allow: []string{"ncat -l 8080"}},
	{rule: "fd", ask: []string{"fd . -x sh -c 'echo marker'", "fd -e go --exec-batch rm", "fd -X rm"}, allow: []string{"fd -e go", "fd -t f main src"}},
	{rule: "ag", ask: []string{"ag --pager=sh TODO", "ag --pager less TODO"}, allow: []string{"ag -l TODO src"}},
	{rule: "base64", ask: []string{"base64 -d -o /tmp/x payload", "base64 --output=x f"}, allow: []string{"base64 -d payload", "base64 -w 0 f"}},
	{rule: "tree", ask: []string{"tree -o /tmp/x .", "tree -ao x ."}, allow: []string{"tree -L 2 src", "tree -I node_modules"}},
	{rule: "javac", ask: []string{"javac -processorpath p.jar A.java", "javac --processor-path=p A.java", "javac -processor x.P A.java", "javac -Xplugin:X A.java", "javac -J-javaagent:x.jar A.java"},
		allow: []string{"javac -d out A.java", "javac -version"}},
	{rule: "socat", ask: []string{"socat TCP-LISTEN:1 EXEC:/bin/sh", "socat - SYSTEM:id", "socat - CREATE:/tmp/x"}, allow: []string{"socat - TCP:localhost:80"}},
	{rule: "crontab", ask: []string{"crontab -e", "crontab -r", "crontab file", "crontab -"}, allow: []string{"crontab -l"}},
	{rule: "man", ask: []string{"man -P 'sh -c id' ls", "man --pager=x ls", "man -Hfirefox ls", "man -C cfg ls"}, allow: []string{"man ls", "man 5 crontab"}},
	{rule: "hg", ask: []string{"hg --config hooks.x=id status", "hg --cwd /tmp status", "hg -R /tmp/r log"}, allow: []string{"hg status", "hg log -l 5"}},

	// Wrappers are decided as the command they run.
	{rule: "env",
		ask: []string{"env LD_PRELOAD=/x.so ls", "env GIT_SSH_COMMAND=id git fetch", "env NODE_OPTIONS=--require=x node", "env -C /tmp ls", "env -S 'sh -c id'",
			"env --split-string='sh -c id'", "env git diff --output=/tmp/x"},
		allow: []string{"env", "env FOO=1 BAR=2"}},
	{rule: "env git", ask: []string{"env git diff --output=x"}, allow: []string{"env git status"}},
	{rule: "env -i", ask: []string{"env -i PAGER=x git log", "env -i git log"}, allow: []string{"env -i"}},
	{rule: "env -i FOO=1 git", ask: []string{"env -i FOO=1 git -c a=b log"}, allow: []string{"env -i FOO=1 git status"}},
	{rule: "timeout 10 git", ask: []string{"timeout 10 git diff --ext-diff"}, allow: []string{"timeout 10 git status", "timeout 10 git log -1"}},
	{rule: "timeout 10", ask: []string{"timeout 10 sudo ls"}},
	{rule: "timeout", ask: []string{"timeout 10 rm -rf x", "timeout -s KILL 5 ls"}, allow: []string{"timeout --help"}},
	{rule: "nice", ask: []string{"nice -n 5 rm -rf x", "nice -5 ls"}, allow: []string{"nice"}},
	{rule: "nice -n 5 git", ask: []string{"nice -n 5 git diff --output=x"}, allow: []string{"nice -n 5 git status"}},
	{rule: "nohup", ask: []string{"nohup rm -rf x"}, allow: []string{"nohup"}},
	{rule: "stdbuf", ask: []string{"stdbuf -oL rm x"}},
	{rule: "stdbuf -oL sort", ask: []string{"stdbuf -oL sort -o /tmp/x f"}, allow: []string{"stdbuf -oL sort -u f"}},
	{rule: "/usr/bin/time", ask: []string{"/usr/bin/time ls", "/usr/bin/time -o /tmp/x ls"}},
	{rule: "/usr/bin/time ls", allow: []string{"/usr/bin/time ls -la"}},
	{rule: "/usr/bin/time -o t.txt ls", allow: []string{"/usr/bin/time -o t.txt ls -la"}},
	{rule: "setsid", ask: []string{"setsid -f ls"}},
	{rule: "flock", ask: []string{"flock /tmp/l ls", "flock /tmp/l -c 'rm -rf x'", "flock -c 'id' /tmp/l"}},
	{rule: "flock /tmp/l make", ask: []string{"flock /tmp/l make -C /x"}, allow: []string{"flock /tmp/l make test"}},
	{rule: "xargs", ask: []string{"xargs rm", "xargs -0 rm -rf"}},
	{rule: "xargs grep", allow: []string{"xargs grep -l TODO"}},
	{rule: "xargs -0 grep", allow: []string{"xargs -0 grep -n x"}},
	{rule: "xargs git log", ask: []string{"xargs git log"}},
	{rule: "command", ask: []string{"command rm -rf x"}, allow: []string{"command -v git", "command -V rm -rf x"}},
	{rule: "command git", ask: []string{"command git -c core.pager=x log"}, allow: []string{"command git status"}},
	{rule: "builtin", ask: []string{"builtin cd /tmp"}},
	{rule: "exec", ask: []string{"exec -a x rm -rf y"}},
	{rule: "ionice", ask: []string{"ionice -c3 rm -rf x"}, allow: []string{"ionice -p 1234"}},

	// Never without a person.
	{rule: "sudo", ask: []string{"sudo ls"}},
	{rule: "sudo apt update", ask: []string{"sudo apt update"}},
	{rule: "doas ls", ask: []string{"doas ls"}},
	{rule: "pkexec", ask: []string{"pkexec ls"}},
	{rule: "su", ask: []string{"su -c id root"}},
	{rule: "runuser", ask: []string{"runuser -u x id"}},
	{rule: "run0", ask: []string{"run0 id"}},
	{rule: "sudoedit", ask: []string{"sudoedit /etc/hosts"}},
	{rule: "env", ask: []string{"env sudo ls"}},
}

// words parses a test command line as shell words.
func words(t *testing.T, line string) []string {
	t.Helper()
	argv, err := shellword.Typed(line)
	if err != nil {
		t.Fatalf("test line %q: %v", line, err)
	}
	return argv
}

// cleanRepo returns a directory holding a git repository whose
// configuration runs no program, with only sample hooks.
func cleanRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{".git/objects", ".git/refs/heads", ".git/hooks"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(dir, ".git/HEAD"), "ref: refs/heads/main\n")
	writeFile(t, filepath.Join(dir, ".git/config"), "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n[remote \"origin\"]\n\turl = https://example.com/x.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n")
	writeFile(t, filepath.Join(dir, ".git/hooks/pre-commit.sample"), "#!/bin/sh\n")
	os.Chmod(filepath.Join(dir, ".git/hooks/pre-commit.sample"), 0o755)
	return dir
}

// TestCatalog: under each rule, every ask line has a finding and every
// allow line has none (it still runs by rule).
func TestCatalog(t *testing.T) {
	dir := cleanRepo(t)
	for _, c := range catalogCases {
		rule := words(t, c.rule)
		for _, line := range c.ask {
			argv := words(t, line)
			if !hasPrefix(argv, rule) {
				t.Errorf("rule %q: ask line %q does not start with the rule", c.rule, line)
				continue
			}
			if fs := Guard(argv, len(rule), dir); len(fs) == 0 {
				t.Errorf("rule %q: %q would be allowed; the guard found nothing", c.rule, line)
			}
		}
		for _, line := range c.allow {
			argv := words(t, line)
			if !hasPrefix(argv, rule) {
				t.Errorf("rule %q: allow line %q does not start with the rule", c.rule, line)
				continue
			}
			if fs := Guard(argv, len(rule), dir); len(fs) > 0 {
				t.Errorf("rule %q: everyday %q is stopped: %s", c.rule, line, FindingsText(fs))
			}
		}
	}
}

// hasPrefix reports whether argv starts with rule.
func hasPrefix(argv, rule []string) bool {
	if len(rule) > len(argv) {
		return false
	}
	for i := range rule {
		if argv[i] != rule[i] {
			return false
		}
	}
	return true
}

// TestCatalogCasesCoverEveryOption: every dangerous option of every
// catalog program is stopped by at least one ask line, and every program
// with arguments the guard reads has an everyday allow line (or is a
// wrapper or never allowed, which has none to give).
func TestCatalogCasesCoverEveryOption(t *testing.T) {
	dir := cleanRepo(t)
	seenWhy := map[string]bool{}
	allowed := map[*program]bool{}
	asked := map[*program]bool{}
	for _, c := range catalogCases {
		rule := words(t, c.rule)
		for _, line := range c.ask {
			argv := words(t, line)
			asked[programFor(argv[0], false)] = true
			for _, f := range Guard(argv, 0, dir) {
				seenWhy[f.Why] = true
				if _, rest, ok := strings.Cut(f.Why, ", which "); ok && strings.HasPrefix(f.Why, "abbreviates ") {
					seenWhy[rest] = true
				}
			}
		}
		if len(c.allow) > 0 {
			allowed[programFor(rule[0], false)] = true
		}
	}
	covered := map[*program]bool{}
	for name, entry := range catalog {
		p := entry()
		if covered[p] || (p.cmd == nil && p.never == "" && p.wrapper == nil) {
			continue
		}
		covered[p] = true
		if !asked[p] {
			t.Errorf("%s: no ask example", name)
		}
		if p.never == "" && p.wrapper == nil && !allowed[p] {
			t.Errorf("%s: no everyday example that stays allowed", name)
		}
		if p.cmd == nil {
			continue
		}
		var walk func(c *command)
		walk = func(c *command) {
			for _, o := range c.opts {
				if o.why != "" && !seenWhy[o.why] {
					t.Errorf("%s: option %s%v (%q) has no ask example", name, o.shorts, o.longs, o.why)
				}
			}
			for _, s := range c.subs {
				walk(s)
			}
		}
		walk(p.cmd)
	}
}

func TestGuardRuleCoverage(t *testing.T) {
	dir := cleanRepo(t)
	for _, tc := range []struct {
		argv    string
		ruleLen int
		want    int
	}{
		{"git diff --output=x", 3, 0}, // an exact rule allows exactly what it says
		{"git diff --output x", 3, 0}, // the option is the rule's, its value too
		{"git diff --output x", 2, 1}, // neither is
		{"git -c a=b log", 2, 0},      // the person wrote `git -c` into the rule
		{"sudo apt update", 3, 1},     // never, whatever the rule
		{"timeout 10 git push", 2, 1}, // the rule names only the wrapper
		{"timeout 10 git push", 3, 0}, // it names the program
		{"env LD_PRELOAD=x ls", 3, 0}, // the assignment is the rule's
		{"env LD_PRELOAD=x ls", 1, 2}, // not the rule's, and the rule is the wrapper's
		{"env", 1, 0},                 // env alone runs nothing
		{"command -v rm", 1, 0},       // describes, runs nothing
		{"xargs git status", 1, 2},    // xargs adds arguments to git, and the rule is the wrapper's
		{"xargs git status", 3, 1},    // no rule sees what xargs appends to git
		{"find . -delete", 3, 0},      //
		{"sed -i s/a/b/ f", 2, 0},     //
		{"sed -i s/a/b/e f", 2, 1},    // the script is beyond the rule
		{"git --git-dir=x status", 0, 1},
	} {
		argv := strings.Fields(tc.argv)
		if got := Guard(argv, tc.ruleLen, dir); len(got) != tc.want {
			t.Errorf("Guard(%q, %d) = %s; want %d findings", tc.argv, tc.ruleLen, FindingsText(got), tc.want)
		}
	}
}

func TestFindingText(t *testing.T) {
	dir := cleanRepo(t)
	fs := Guard([]string{"git", "diff", "--output", "/tmp/a\x1bb"}, 2, dir)
	if len(fs) != 1 {
		t.Fatalf("findings %v", fs)
	}
	if want := `--output $'/tmp/a\x1bb' (argument 2): writes the diff to a file anywhere`; fs[0].String() != want {
		t.Errorf("finding %q, want %q", fs[0].String(), want)
	}
}

func TestSedDanger(t *testing.T) {
	for _, tc := range []struct {
		script string
		danger bool
	}{
		{"p", false}, {"s/a/b/g", false}, {"s/a/b/e", true}, {"s/a/b/w x", true}, {"e", true}, {"e id", true}, {"w x", true}, {"W x", true},
		{"1,5p", false}, {"/x/,/y/d", false}, {`\,x,d`, false}, {`\,x,e`, true}, {"s/[/]/x/e", true}, {"s/[/]/x/", false}, {"y/abc/xyz/", false},
		{"a foo; e id", false}, {"a\\\ne id", false}, {"a foo\ne id", true}, {"{p;e id}", true}, {"$!N", false}, {"1~2d", false}, {"0,/re/d", false},
		{"b end; e id", true}, {":a\ne id", true}, {"s/a/b/3g", false}, {"s/a/b/gI", false}, {"s/a/b/M;s/c/d/m", false}, {"r /etc/passwd", false},
		{"s/a/b/x", true}, {"k", true}, {"s/a", true}, {"s/a/b", true}, {"#n\np", false}, {"# e id\np", false}, {"l;l 5;q;q 3", false},
		{"s/a/b/w /dev/stdout", false}, {"w /dev/stderr", false}, {"s/\\//x/e", true}, {"s/[[:alpha:]/]/x/", false}, {"s/[]/]/x/e", true},
	} {
		if got := sedDanger(tc.script) != ""; got != tc.danger {
			t.Errorf("sedDanger(%q) = %q, want danger %v", tc.script, sedDanger(tc.script), tc.danger)
		}
	}
}

func TestAwkDanger(t *testing.T) {
	for _, tc := range []struct {
		prog   string
		danger bool
	}{
		{"{print $1}", false}, {"BEGIN{system(\"id\")}", true}, {"{print > \"f\"}", true}, {"{print >> f}", true}, {"{print | \"sh\"}", true},
		{"\"cmd\" | getline", true}, {"a || b", false}, {"$1 > 3", false}, {"{x = a > b}", false}, {"{print (a > b)}", false}, {"{print a, b > \"f\"}", true},
		{"/a|b/ {print}", false}, {"{print \"a|b\" > \"/dev/stdout\"}", false}, {"{print > \"/dev/stderr\"}", false}, {"@load \"x\"", true},
		{"{ n = a / b / c }", false}, {"{ n = a / 2 } /x|y/", false}, {"# system(x)\n{print}", false}, {"{print \"system(\"}", false},
		{"{ if (x) print a > \"f\" }", true}, {"{ printf(\"%s\", a) > \"f\" }", true}, {"{print a,\n b > \"f\"}", true}, {"{print a\n x = b > c}", false},
		{"{print \"unterminated}", true}, {"{x = /unterminated}", true}, {"{print a >= b}", false}, {"{getline line < \"f\"}", false},
		{"{ i++ / 2 }", false}, {"{print $1 | \"sort\"}", true}, {"{print |& \"cmd\"}", true}, {"{x[$1]++} END {for (k in x) print k}", false},
	} {
		if got := awkDanger(tc.prog) != ""; got != tc.danger {
			t.Errorf("awkDanger(%q) = %q, want danger %v", tc.prog, awkDanger(tc.prog), tc.danger)
		}
	}
}

// TestCatalogFitsItsSize: the catalog is allocated for catalogSize names
// so that filling it at start never grows the map; a catalog that outgrew
// it still works but costs every hook call the growth.
func TestCatalogFitsItsSize(t *testing.T) {
	if len(catalog) > catalogSize {
		t.Errorf("the catalog holds %d names, more than catalogSize (%d): raise catalogSize", len(catalog), catalogSize)
	}
}
