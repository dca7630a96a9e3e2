//go:build linux

package exec

import (
	"net"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentgate/agentgate/unixpg/asuser"
	"github.com/agentgate/agentgate/unixpg/shimbuild"
)

// Write confinement, tried from inside allowed commands as an
// agent would. Every test here also runs as an unprivileged user
// (TestConfinementAsUnprivilegedUser).

// confineWorld is a home with agentgate's settings and an agent's, a
// project (a git repository with .claude/ and hooks), another project, and
// an executor that confines its runs with the built shim.
type confineWorld struct {
	e                             *Executor
	home, root, other, cfg, cache string
}

// newConfineWorld builds the world with settings s (writable paths are
// taken as given). It skips where Landlock or the shim is missing.
func newConfineWorld(t *testing.T, s ConfineSettings) *confineWorld {
	t.Helper()
	if abi, err := ll.LandlockGetABIVersion(); err != nil || abi < 1 {
		t.Skipf("the kernel has no Landlock (%v)", err)
	}
	shim, err := shimbuild.Path()
	if err != nil {
		t.Skip("no confinement shim:", err)
	}
	home, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	w := &confineWorld{home: home, root: filepath.Join(home, "project"), other: filepath.Join(home, "other"),
		cfg: filepath.Join(home, ".config", "agentgate"), cache: filepath.Join(home, ".cache")}
	state := filepath.Join(home, ".local", "state", "agentgate")
	for _, d := range []string{w.root, w.other, w.cfg, w.cache, state, filepath.Join(home, ".claude"),
		filepath.Join(w.root, ".claude")} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(w.cfg, "allow.list"), []byte("true\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(w.other, "victim"), []byte("untouched\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(w.root, "moveme"), []byte("x"), 0o644))
	git(t, w.root, "init", "-q")
	e, _ := testExecutor(t, Config{Env: append(os.Environ(), "HOME="+home, "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@b",
		"GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@b"),
		Confine: ConfineConfig{Shim: shim, Home: home, CacheDir: w.cache,
			Settings: func() ConfineSettings { return s },
			Protect:  UserProtectedPaths(home, w.cfg, state)}})
	w.e = e
	return w
}

// git runs git in dir.
func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	out, err := osexec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
}

// run runs sh -c script in the project with H, P, O, C and CFG naming the
// home, project, other project, cache and agentgate's config directory,
// and returns the record and the output.
func (w *confineWorld) run(t *testing.T, meta Meta, script string) (Record, string) {
	t.Helper()
	pre := "export H=" + w.home + " P=" + w.root + " O=" + w.other + " C=" + w.cache + " CFG=" + w.cfg + "\n" +
		`try() { n=$1; shift; if "$@" 2>/dev/null; then echo "ok $n"; else echo "denied $n"; fi; }` + "\n"
	cmd, err := Validate(Proposal{Argv: []string{"sh", "-c", pre + script}, ProjectRoot: w.root}, PathFromEnv(w.e.cfg.Env))
	require.NoError(t, err)
	r, err := w.e.Start(cmd, meta)
	require.NoError(t, err)
	rec := waitRun(t, r)
	return rec, string(readStream(t, r, Stdout)) + string(readStream(t, r, Stderr))
}

// outcomes parses "ok NAME" / "denied NAME" lines.
func outcomes(out string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if verdict, name, ok := strings.Cut(line, " "); ok && (verdict == "ok" || verdict == "denied") {
			m[name] = verdict
		}
	}
	return m
}

// TestConfinedRunWritesOnlyWhereAllowed is the write half of the
// adversarial suite: touch, rename in and out, a symlink out, a hard link
// in, a setsid grandchild, the allow-list and the agents' settings — all
// denied; the project, TMPDIR, the cache and /dev/null work.
func TestConfinedRunWritesOnlyWhereAllowed(t *testing.T) {
	w := newConfineWorld(t, DefaultConfineSettings())
	rec, out := w.run(t, Meta{}, `
try project touch "$P/inproject"
try tmpdir sh -c 'echo x > "$TMPDIR/t"'
try cache touch "$C/cachefile"
try devnull sh -c 'echo x > /dev/null'
try home touch "$H/escaped"
try allowlist sh -c 'echo "rm -rf /" >> "$CFG/allow.list"'
try agentsettings touch "$H/.claude/settings.json"
try otherproject touch "$O/x"
try renameout mv "$P/moveme" "$H/moved"
try renamein mv "$O/victim" "$P/stolen"
try symlinkout sh -c 'ln -s "$H/viasymlink" "$P/link" && echo x > "$P/link"'
try hardlink ln "$O/victim" "$P/hardlink"
try tmp touch /tmp/agentgate-escape-$$
try projectclaude sh -c 'echo {} > "$P/.claude/settings.json"'
try hooks touch "$P/.git/hooks/pre-commit"
try gitconfig sh -c 'echo "[core]" >> "$P/.git/config"'
setsid sh -c 'echo x > "$H/setsid" 2>/dev/null; echo $? > "$P/setsid.rc"' &
wait
`)
	require.Equal(t, StateExited, rec.State, out)
	got := outcomes(out)
	for _, name := range []string{"project", "tmpdir", "cache", "devnull"} {
		assert.Equal(t, "ok", got[name], "%s must be writable (output %q)", name, out)
	}
	for _, name := range []string{"home", "allowlist", "agentsettings", "otherproject", "renameout", "renamein",
		"symlinkout", "hardlink", "tmp", "projectclaude", "hooks", "gitconfig"} {
		assert.Equal(t, "denied", got[name], "%s must be denied (output %q)", name, out)
	}
	for _, p := range []string{"escaped", "moved", "viasymlink", "setsid", ".claude/settings.json"} {
		assert.NoFileExists(t, filepath.Join(w.home, p))
	}
	rc, _ := os.ReadFile(filepath.Join(w.root, "setsid.rc"))
	assert.NotEqual(t, "0\n", string(rc), "the setsid grandchild wrote outside")
	allow, _ := os.ReadFile(filepath.Join(w.cfg, "allow.list"))
	assert.Equal(t, "true\n", string(allow))
	victim, _ := os.ReadFile(filepath.Join(w.other, "victim"))
	assert.Equal(t, "untouched\n", string(victim))
	require.NotNil(t, rec.Confinement)
	assert.Empty(t, rec.Confinement.Unconfined)
	assert.True(t, strings.HasPrefix(rec.Confinement.Summary(), "writes: project, temp, cache"), rec.Confinement.Summary())
	if rec.Confinement.Protected == "read-only" {
		assert.Empty(t, rec.ProtectedChanged)
	}
}

// TestConfinedRunEverydayWork: what a build does keeps working — writing in
// the project, a private TMPDIR (removed after the run), the cache, a
// toolchain cache among writable_paths, and git committing.
func TestConfinedRunEverydayWork(t *testing.T) {
	s := DefaultConfineSettings()
	s.WritablePaths = []string{"~/.npm", "~/.cargo/registry"}
	w := newConfineWorld(t, s)
	require.NoError(t, os.MkdirAll(filepath.Join(w.home, ".npm"), 0o755))
	rec, out := w.run(t, Meta{}, `
echo "$TMPDIR"
try mktemp mktemp
try npm sh -c 'mkdir -p "$H/.npm/_cacache" && echo x > "$H/.npm/_cacache/blob"'
try build sh -c 'mkdir -p "$P/build" && echo obj > "$P/build/a.o"'
try gobuildcache sh -c 'mkdir -p "$C/go-build" && echo x > "$C/go-build/entry"'
try commit sh -c 'git add -A && git commit -q -m build'
`)
	require.Equal(t, StateExited, rec.State, out)
	got := outcomes(out)
	for _, name := range []string{"mktemp", "npm", "build", "gobuildcache", "commit"} {
		assert.Equal(t, "ok", got[name], "%s (output %q)", name, out)
	}
	tmp := strings.SplitN(out, "\n", 2)[0]
	assert.True(t, strings.HasPrefix(tmp, os.TempDir()), "TMPDIR %q", tmp)
	w.e.Flush()
	assert.NoDirExists(t, tmp, "the run's TMPDIR is removed after the run")
	assert.Contains(t, rec.Confinement.Writes, "~/.npm")
}

// TestConfinedRunReportsNewProtectedFiles: a protected file that did not
// exist (here .mcp.json) may be created, since the project is writable;
// it is reported.
func TestConfinedRunReportsNewProtectedFiles(t *testing.T) {
	w := newConfineWorld(t, DefaultConfineSettings())
	rec, out := w.run(t, Meta{}, `echo '{"mcpServers":{}}' > "$P/.mcp.json"`)
	require.Equal(t, StateExited, rec.State, out)
	assert.Equal(t, []string{"created .mcp.json"}, rec.ProtectedChanged)
}

// TestConfinedRunCannotReachItsSupervisor is the lifetime half of the
// adversarial suite under confinement: SIGSTOP and SIGKILL of the run's
// parent — its supervisor, or for a direct run (per-run cgroups: as root
// here) the host itself — and a ptrace attach to it are refused by
// Landlock's scoping, for root too. As the unprivileged user
// (TestConfinementAsUnprivilegedUser) the parent is a supervisor.
func TestConfinedRunCannotReachItsSupervisor(t *testing.T) {
	if abi, _ := ll.LandlockGetABIVersion(); abi < 6 {
		t.Skipf("Landlock ABI %d: signal scoping needs 6", abi)
	}
	w := newConfineWorld(t, DefaultConfineSettings())
	self, err := os.Executable()
	require.NoError(t, err)
	rec, out := w.run(t, Meta{}, `
try stop kill -STOP $PPID
try kill kill -KILL $PPID
"`+self+`" `+testHelperArg+` ptrace $PPID
`)
	require.Equal(t, StateExited, rec.State, out)
	got := outcomes(out)
	assert.Equal(t, "denied", got["stop"], out)
	assert.Equal(t, "denied", got["kill"], out)
	assert.Contains(t, out, "denied: operation not permitted")
	assert.True(t, rec.Confinement.Scoped)
}

// TestNetworkNone: with network none a run cannot connect to a TCP
// listener of the host (loopback included); with any it can.
func TestNetworkNone(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	script := `try connect bash -c 'exec 3<>/dev/tcp/127.0.0.1/` + strconv.Itoa(port) + `'`
	for _, network := range []string{NetworkAny, NetworkNone} {
		s := DefaultConfineSettings()
		s.Network = network
		w := newConfineWorld(t, s)
		rec, out := w.run(t, Meta{}, script)
		require.Equal(t, StateExited, rec.State, out)
		want := map[string]string{NetworkAny: "ok", NetworkNone: "denied"}[network]
		assert.Equal(t, want, outcomes(out)["connect"], "network %s: %s", network, out)
		assert.Equal(t, network, rec.Confinement.Network)
	}
}

// TestWithoutWriteConfinement: a person's one-time approval without write
// confinement lets the run write outside, says so in the record, and keeps
// the scoping.
func TestWithoutWriteConfinement(t *testing.T) {
	w := newConfineWorld(t, DefaultConfineSettings())
	rec, out := w.run(t, Meta{WithoutWriteConfinement: true}, `
try home touch "$H/allowed-once"
try stop kill -STOP $PPID
`)
	require.Equal(t, StateExited, rec.State, out)
	got := outcomes(out)
	assert.Equal(t, "ok", got["home"], out)
	assert.FileExists(t, filepath.Join(w.home, "allowed-once"))
	assert.Equal(t, "approved without write confinement", rec.Confinement.Unconfined)
	if abi, _ := ll.LandlockGetABIVersion(); abi >= 6 {
		assert.Equal(t, "denied", got["stop"], out)
	}
}

// TestUnconfinedWhenNoShimUnlessRequired: without the shim a run starts
// unconfined and says why, and what it changes among the files that steer
// agents and tools is still reported; with require_confinement it is
// refused and nothing runs.
func TestUnconfinedWhenNoShimUnlessRequired(t *testing.T) {
	for _, require_ := range []bool{false, true} {
		e, root := testExecutor(t, Config{Confine: ConfineConfig{Shim: "/nonexistent/agentgate-shim",
			Settings: func() ConfineSettings { s := DefaultConfineSettings(); s.Require = require_; return s }}})
		cmd, err := Validate(Proposal{Argv: []string{"sh", "-c", "echo '{}' > .mcp.json"}, ProjectRoot: root}, PathFromEnv(e.cfg.Env))
		require.NoError(t, err)
		r, err := e.Start(cmd, Meta{})
		rec := waitRun(t, r)
		if require_ {
			var ref *Refusal
			require.ErrorAs(t, err, &ref)
			assert.Equal(t, CodeConfinementUnavailable, ref.Code)
			assert.Zero(t, rec.PID)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, StateExited, rec.State)
		assert.Contains(t, rec.Confinement.Unconfined, "/nonexistent/agentgate-shim")
		assert.Equal(t, "checked", rec.Confinement.Protected)
		assert.Equal(t, []string{"created .mcp.json"}, rec.ProtectedChanged)
	}
}

// TestHomeAsWritablePathKeepsSettingsReadOnly: a writable path that holds
// agentgate's configuration and the agents' settings (here the whole home)
// stays writable with those bound read-only where a mount namespace can be
// made, and is dropped (said so) where not.
func TestHomeAsWritablePathKeepsSettingsReadOnly(t *testing.T) {
	s := DefaultConfineSettings()
	s.WritablePaths = append(s.WritablePaths, "~/")
	w := newConfineWorld(t, s)
	rec, out := w.run(t, Meta{}, `
try homefile touch "$H/notes"
try allowlist sh -c 'echo "rm -rf /" >> "$CFG/allow.list"'
try agentsettings touch "$H/.claude/settings.json"
`)
	require.Equal(t, StateExited, rec.State, out)
	got := outcomes(out)
	assert.Equal(t, "denied", got["allowlist"], out)
	assert.Equal(t, "denied", got["agentsettings"], out)
	if rec.Confinement.Protected == "read-only" {
		assert.Equal(t, "ok", got["homefile"], out)
	} else {
		assert.Equal(t, "denied", got["homefile"], out)
		assert.True(t, slices.ContainsFunc(rec.Confinement.Dropped, func(d string) bool { return strings.HasPrefix(d, "~/") }))
	}
}

// TestConfinementAsUnprivilegedUser runs this file's tests again as a
// fresh unprivileged user: root may do what a user may not.
func TestConfinementAsUnprivilegedUser(t *testing.T) {
	asuser.Run(t, "^(TestConfinedRun|TestNetworkNone|TestWithoutWriteConfinement|TestHomeAsWritablePath)")
}

// TestConfinementPreviewIsWhatRunsGet: what the card and the terminal
// prompt show before anyone decides (Executor.Confinement) is the
// confinement the run then gets, with and without the one-time approval
// without write confinement; a preview makes nothing (no temporary
// directory).
func TestConfinementPreviewIsWhatRunsGet(t *testing.T) {
	w := newConfineWorld(t, DefaultConfineSettings())
	cmd, err := Validate(Proposal{Argv: []string{"true"}, ProjectRoot: w.root}, PathFromEnv(w.e.cfg.Env))
	require.NoError(t, err)
	for _, meta := range []Meta{{}, {WithoutWriteConfinement: true}} {
		shown := w.e.Confinement(cmd, meta)
		w.e.tmps.mu.Lock()
		spare, making := w.e.tmps.spare, w.e.tmps.making
		w.e.tmps.mu.Unlock()
		if !meta.WithoutWriteConfinement {
			assert.Equal(t, []string{"project", "temp", "cache"}, shown.Writes[:3])
			assert.Equal(t, "writes: project, temp, cache", shown.Summary()[:len("writes: project, temp, cache")])
		}
		r, err := w.e.Start(cmd, meta)
		require.NoError(t, err)
		rec := waitRun(t, r)
		require.NotNil(t, rec.Confinement)
		assert.Equal(t, shown, *rec.Confinement, "shown before the run vs applied to it (%+v)", meta)
		if meta == (Meta{}) {
			assert.True(t, spare.path == "" && !making, "a preview before any run made a temporary directory")
		}
	}
}

// TestRunTmpDirReusedOnlyEmptyAndPrivate: a run that leaves its TMPDIR
// empty hands it to a later run; one that leaves a file in it, or makes it
// reachable by others, gets it removed, and the next run a fresh one.
func TestRunTmpDirReusedOnlyEmptyAndPrivate(t *testing.T) {
	w := newConfineWorld(t, DefaultConfineSettings())
	tmpOf := func(script string) string {
		t.Helper()
		rec, out := w.run(t, Meta{}, `echo "T=$TMPDIR"; `+script)
		require.Equal(t, StateExited, rec.State, out)
		w.e.tmps.pending.Wait() // the directory is taken back in the background
		for _, line := range strings.Split(out, "\n") {
			if v, ok := strings.CutPrefix(line, "T="); ok {
				return v
			}
		}
		t.Fatalf("no TMPDIR in %q", out)
		return ""
	}
	first := tmpOf("true")
	assert.Equal(t, first, tmpOf("touch \"$TMPDIR/left\""), "an empty TMPDIR is used again")
	assert.NoDirExists(t, first, "a TMPDIR left with a file in it is removed")
	second := tmpOf("chmod 0777 \"$TMPDIR\"")
	assert.NotEqual(t, first, second)
	assert.NoDirExists(t, second, "a TMPDIR made reachable by others is removed")
	third := tmpOf("true")
	assert.NotEqual(t, second, third)
	fi, err := os.Lstat(third)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
}

// TestProtectedHashCacheSeesEveryChange: a cached hash is used only for
// the identity it was taken at; a rewrite that keeps the size and the
// modification time still moves the change time, and is hashed again.
func TestProtectedHashCacheSeesEveryChange(t *testing.T) {
	old, oldFine := racyWindow, fineRacyWindow
	racyWindow, fineRacyWindow = 0, 0
	t.Cleanup(func() { racyWindow, fineRacyWindow = old, oldFine })
	p := filepath.Join(t.TempDir(), "config")
	require.NoError(t, os.WriteFile(p, []byte("aaaa"), 0o644))
	before, err := os.Stat(p)
	require.NoError(t, err)
	var c hashCache
	sum := func() (string, bool) {
		fi, err := os.Lstat(p)
		require.NoError(t, err)
		return c.sum(p, fi)
	}
	a, ok := sum()
	require.True(t, ok)
	again, _ := sum()
	assert.Equal(t, a, again)
	time.Sleep(10 * time.Millisecond) // a later change time on coarse clocks
	require.NoError(t, os.WriteFile(p, []byte("bbbb"), 0o644))
	require.NoError(t, os.Chtimes(p, before.ModTime(), before.ModTime()))
	b, ok := sum()
	require.True(t, ok)
	assert.NotEqual(t, a, b, "same size and modification time, other content")
}

// TestTrustedHash: a hash is trusted once the change time is racyWindow in
// the past, or fineRacyWindow for a change time with a fraction.
func TestTrustedHash(t *testing.T) {
	now := time.Now()
	whole := now.Truncate(time.Second)
	assert.False(t, trustedHash(whole.UnixNano()), "a change time on a whole second, just now")
	assert.True(t, trustedHash(whole.Add(-racyWindow).UnixNano()))
	assert.False(t, trustedHash(now.Add(-fineRacyWindow/2).UnixNano()|1))
	assert.True(t, trustedHash(now.Add(-2*fineRacyWindow).UnixNano()|1))
}

// TestSealedProtectedPathReplacedIsReported: where .git/hooks and
// .git/config are bound read-only (and so checked by identity alone), a run
// that moves .git away and puts a new hook in its place cannot hide it:
// the change is reported, and writing through the bind itself is denied.
func TestSealedProtectedPathReplacedIsReported(t *testing.T) {
	w := newConfineWorld(t, DefaultConfineSettings())
	if !w.e.confineCaps().namespaces {
		t.Skip("no mount namespaces here: the protected paths are hashed, not sealed")
	}
	rec, out := w.run(t, Meta{}, `
try hook sh -c 'echo evil > "$P/.git/hooks/pre-commit"'
try moved mv "$P/.git" "$P/.git-old"
try newgit sh -c 'mkdir -p "$P/.git/hooks" && echo evil > "$P/.git/hooks/pre-commit" && echo "[core]" > "$P/.git/config"'
`)
	require.Equal(t, StateExited, rec.State, out)
	got := outcomes(out)
	assert.Equal(t, "denied", got["hook"], out)
	require.Equal(t, "ok", got["moved"], out)
	require.Equal(t, "ok", got["newgit"], out)
	assert.Contains(t, rec.ProtectedChanged, "changed .git/hooks")
	assert.Contains(t, rec.ProtectedChanged, "changed .git/config")
}
