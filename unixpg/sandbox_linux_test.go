//go:build linux

package unixpg_test

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"

	"github.com/agentgate/agentgate/exec/procspec"
	"github.com/agentgate/agentgate/unixpg"
	"github.com/agentgate/agentgate/unixpg/shimbuild"
)

// openShim returns the built confinement shim, open, or skips the test.
func openShim(t *testing.T) *os.File {
	t.Helper()
	path, err := shimbuild.Path()
	if err != nil {
		t.Skip("no confinement shim:", err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// runSandboxed runs sh -c script in dir under sb and returns its exit
// status and output (stdout and stderr together).
func runSandboxed(t *testing.T, sb *procspec.Sandbox, dir, script string, env ...string) (procspec.ExitStatus, string) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p, err := unixpg.Start(procspec.Spec{Path: "/bin/sh", Args: []string{"sh", "-c", script}, Dir: dir,
		Env: append([]string{"PATH=/usr/bin:/bin"}, env...), Stdout: w, Stderr: w, Sandbox: sb})
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(r)
	st := waitWithin(t, p)
	return st, string(out)
}

// TestSandboxReadOnlyBindAndNetwork: a read-only bind holds against a
// write, the rest of the directory stays writable, the network namespace
// has only loopback, and the program's name is its own (executed through
// its descriptor, not /proc/self/fd/N).
func TestSandboxReadOnlyBindAndNetwork(t *testing.T) { bothModes(t, testSandboxReadOnlyBindAndNetwork) }

func testSandboxReadOnlyBindAndNetwork(t *testing.T) {
	shim := openShim(t)
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	sb := &procspec.Sandbox{Shim: shim, UserNS: os.Geteuid() != 0, MountNS: true, NetNS: true,
		ReadOnly: []string{filepath.Join(dir, ".claude"), filepath.Join(dir, "missing")}}
	st, out := runSandboxed(t, sb, dir, `touch .claude/settings.json 2>/dev/null && echo wrote-protected
touch ok && echo wrote-project
cat /proc/self/comm
grep -c : /proc/net/dev`)
	if !st.Exited || st.Code != 0 {
		t.Fatalf("status %+v, output %q", st, out)
	}
	want := "wrote-project\ncat\n1\n" // one device: lo
	if out != want {
		t.Errorf("output %q, want %q", out, want)
	}
}

// TestSandboxLandlock: a Landlock ruleset that grants writes only in one
// directory holds for the target and its descendants, and signal scoping
// keeps the run from signalling its supervisor.
func TestSandboxLandlock(t *testing.T) { bothModes(t, testSandboxLandlock) }

func testSandboxLandlock(t *testing.T) {
	abi, err := ll.LandlockGetABIVersion()
	if err != nil || abi < 6 {
		t.Skipf("Landlock ABI %d (%v): need 6 for signal scoping", abi, err)
	}
	shim := openShim(t)
	dir, outside := t.TempDir(), t.TempDir()
	writes := landlock.AccessFSSet(ll.AccessFSWriteFile | ll.AccessFSRemoveFile | ll.AccessFSMakeReg | ll.AccessFSTruncate)
	cfg := landlock.Config{HandledAccessFS: writes, Scoped: landlock.ScopedSet(ll.ScopeSignal | ll.ScopeAbstractUnixSocket)}
	fd, flags, err := cfg.NewRulesetFD(landlock.PathAccess(writes, dir), landlock.PathAccess(ll.AccessFSWriteFile, "/dev/null"))
	if err != nil || fd < 0 {
		t.Fatalf("ruleset: %d %v", fd, err)
	}
	ruleset := os.NewFile(uintptr(fd), "ruleset")
	defer ruleset.Close()
	sb := &procspec.Sandbox{Shim: shim, Ruleset: ruleset, RulesetFlags: flags}
	_, out := runSandboxed(t, sb, dir, `echo x > inside && echo wrote-inside
echo x > "$OUT" 2>/dev/null && echo wrote-outside
sh -c 'echo x > "$OUT"' 2>/dev/null && echo child-wrote-outside
echo x > /dev/null && echo devnull
kill -0 $PPID 2>/dev/null && echo signalled-supervisor
true`, "OUT="+filepath.Join(outside, "f"))
	if !strings.Contains(out, "wrote-inside\n") || !strings.Contains(out, "devnull\n") {
		t.Errorf("allowed writes failed: %q", out)
	}
	for _, bad := range []string{"wrote-outside", "child-wrote-outside", "signalled-supervisor"} {
		if strings.Contains(out, bad) {
			t.Errorf("the run could: %s (output %q)", bad, out)
		}
	}
}

// TestDirectRunHoldsItsMountNamespace: a direct run's host holds the
// leader's mount namespace open while the run lives, so that the leader's
// exit does not tear it down before its parent hears of the exit, and
// lets go of it once the run's end is published.
func TestDirectRunHoldsItsMountNamespace(t *testing.T) {
	if base, why := unixpg.CgroupBase(); base == "" {
		t.Skipf("no per-run cgroups here (%s), so no direct runs", why)
	}
	unixpg.UseSupervisors(false)
	t.Setenv(directEnv, "1")
	t.Cleanup(func() { unixpg.UseSupervisors(true) })
	shim := openShim(t)
	own, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		t.Skip("no /proc/self/ns/mnt:", err)
	}
	sb := &procspec.Sandbox{Shim: shim, UserNS: os.Geteuid() != 0, MountNS: true}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p, err := unixpg.Start(procspec.Spec{Path: "/bin/sh", Args: []string{"sh", "-c", "readlink /proc/self/ns/mnt; exec sleep 30"},
		Env: []string{"PATH=/usr/bin:/bin"}, Stdout: w, Stderr: w, Sandbox: sb})
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the run's namespace: %v (%q)", err, line)
	}
	runNS := strings.TrimSpace(line)
	if runNS == "" || runNS == own {
		t.Fatalf("the run's mount namespace %q, the test's %q: want a namespace of its own", runNS, own)
	}
	if !holdsFD(t, runNS) {
		t.Errorf("while the run lives, the host holds no descriptor of its mount namespace %s", runNS)
	}
	p.Terminate()
	waitWithin(t, p)
	for i := 0; holdsFD(t, runNS); i++ {
		if i == 200 {
			t.Fatalf("2 s after the run's end the host still holds its mount namespace %s", runNS)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// holdsFD reports whether one of this process's descriptors is link (as
// /proc/self/fd shows it, e.g. "mnt:[4026532285]").
func holdsFD(t *testing.T, link string) bool {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if l, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && l == link {
			return true
		}
	}
	return false
}
