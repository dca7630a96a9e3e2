package prefs

import (
	"bufio"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgate/agentgate/exec/platformtest"
	"github.com/agentgate/agentgate/exec/procspec"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// testGrants returns grants under a fresh state directory on a fake clock.
func testGrants(t *testing.T) (*Grants, *fakeClock) {
	t.Helper()
	clock := &fakeClock{now: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)}
	g := OpenGrants(testPaths(t))
	g.Now = clock.Now
	return g, clock
}

// give gives a grant or fails the test.
func give(t *testing.T, g *Grants, req GrantRequest) Grant {
	t.Helper()
	gr, err := g.Give(req)
	if err != nil {
		t.Fatal(err)
	}
	return gr
}

// match asks for a grant for argv run as exe by provider in project.
func match(t *testing.T, g *Grants, argv []string, exe, provider, project string) (GrantMatch, bool) {
	t.Helper()
	m, ok, err := g.Match(GrantQuery{Argv: argv, Executable: exe, Provider: provider, Project: project})
	if err != nil {
		t.Fatal(err)
	}
	return m, ok
}

var (
	testProject = platformtest.NativePath("/home/me/src/app")
	testGit     = platformtest.NativePath("/usr/bin/git")
)

func TestGrantExpiresOnTheClock(t *testing.T) {
	g, clock := testGrants(t)
	gr := give(t, g, GrantRequest{Kind: GrantExact, Argv: []string{"git", "status"}, Executable: testGit, Project: testProject,
		Provider: "claude-code", By: "card", For: 15 * time.Minute})
	if !strings.HasPrefix(gr.ID, "g-") || len(gr.ID) != 10 {
		t.Fatalf("grant id %q, want g- and 8 hex digits", gr.ID)
	}
	clock.Advance(3 * time.Minute)
	m, ok := match(t, g, []string{"git", "status"}, testGit, "claude-code", testProject)
	if !ok || m.Grant.ID != gr.ID || m.Left != 12*time.Minute {
		t.Fatalf("3 min in: match %+v ok=%v, want the grant with 12 min left", m, ok)
	}
	clock.Advance(12*time.Minute - time.Nanosecond)
	if _, ok := match(t, g, []string{"git", "status"}, testGit, "claude-code", testProject); !ok {
		t.Fatal("a grant must hold until its last instant")
	}
	clock.Advance(time.Nanosecond)
	if _, ok := match(t, g, []string{"git", "status"}, testGit, "claude-code", testProject); ok {
		t.Fatal("an expired grant was honoured")
	}
	// The read that found it expired removed it: nothing is left on disk.
	if _, err := os.Stat(g.file()); !os.IsNotExist(err) {
		t.Fatalf("grants.json after the only grant expired: %v, want it removed", err)
	}
}

func TestGrantReplacesNotStacks(t *testing.T) {
	g, clock := testGrants(t)
	req := GrantRequest{Kind: GrantProgram, Argv: []string{"rg", "-n", "TODO"}, Executable: platformtest.NativePath("/usr/bin/rg"), Project: testProject,
		AllProviders: true, By: "terminal", For: time.Hour}
	first := give(t, g, req)
	clock.Advance(10 * time.Minute)
	req.Argv = []string{"rg", "FIXME"} // same program grant: the same thing
	req.For = 15 * time.Minute
	second := give(t, g, req)
	list, err := g.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != second.ID || list[0].ID == first.ID {
		t.Fatalf("grants after a second grant for the same thing: %+v, want only the second", list)
	}
	// The new grant's end holds, even though it is earlier than the old one's.
	clock.Advance(15 * time.Minute)
	if _, ok := match(t, g, []string{"rg", "x"}, platformtest.NativePath("/usr/bin/rg"), "gemini", testProject); ok {
		t.Fatal("the replaced grant's longer end still applied: grants stacked")
	}
	// Different things do not replace each other.
	give(t, g, GrantRequest{Kind: GrantExact, Argv: []string{"rg", "FIXME"}, Executable: platformtest.NativePath("/usr/bin/rg"), Project: testProject, AllProviders: true, By: "terminal", For: time.Hour})
	give(t, g, GrantRequest{Kind: GrantProgram, Argv: []string{"rg"}, Executable: platformtest.NativePath("/usr/bin/rg"), Project: testProject, AllProviders: true, By: "terminal", For: time.Hour})
	give(t, g, GrantRequest{Kind: GrantProgram, Argv: []string{"rg"}, Executable: platformtest.NativePath("/usr/bin/rg"), Project: testProject, Provider: "codex", By: "card", For: time.Hour})
	give(t, g, GrantRequest{Kind: GrantProgram, Argv: []string{"rg"}, Executable: platformtest.NativePath("/usr/bin/rg"), Project: platformtest.NativePath("/other"), AllProviders: true, By: "terminal", For: time.Hour})
	if list, _ := g.List(); len(list) != 4 {
		t.Fatalf("%d grants for four different things, want 4: %+v", len(list), list)
	}
}

func TestGrantBinding(t *testing.T) {
	g, _ := testGrants(t)
	give(t, g, GrantRequest{Kind: GrantExact, Argv: []string{"git", "status"}, Executable: testGit, Project: testProject, Provider: "claude-code", By: "card", For: time.Hour})
	give(t, g, GrantRequest{Kind: GrantProgram, Argv: []string{"ls", "-l"}, Executable: platformtest.NativePath("/bin/ls"), Project: testProject, AllProviders: true, By: "terminal", For: time.Hour})
	give(t, g, GrantRequest{Kind: GrantExact, Argv: []string{"make", "test"}, Executable: platformtest.NativePath("/usr/bin/make"), Project: testProject, By: "card", For: time.Hour})
	for _, c := range []struct {
		name     string
		argv     []string
		exe      string
		provider string
		project  string
		want     bool
	}{
		{"exact command, its provider", []string{"git", "status"}, testGit, "claude-code", testProject, true},
		{"exact command with one more argument", []string{"git", "status", "--porcelain"}, testGit, "claude-code", testProject, false},
		{"exact command with one fewer", []string{"git"}, testGit, "claude-code", testProject, false},
		{"exact command, another provider", []string{"git", "status"}, testGit, "codex", testProject, false},
		{"exact command, no provider", []string{"git", "status"}, testGit, "", testProject, false},
		{"exact command, another project", []string{"git", "status"}, testGit, "claude-code", platformtest.NativePath("/home/me/src/other"), false},
		{"exact command, a subdirectory is not the project", []string{"git", "status"}, testGit, "claude-code", filepath.Join(testProject, "sub"), false},
		{"exact command resolved to another file", []string{"git", "status"}, platformtest.NativePath("/tmp/evil/git"), "claude-code", testProject, false},
		{"exact command named by its path", []string{platformtest.NativePath("/usr/bin/git"), "status"}, testGit, "claude-code", testProject, false},
		{"program grant, any arguments", []string{"ls", "-la", "/"}, platformtest.NativePath("/bin/ls"), "gemini", testProject, true},
		{"program grant, no provider", []string{"ls"}, platformtest.NativePath("/bin/ls"), "", testProject, true},
		{"program grant resolved elsewhere", []string{"ls"}, platformtest.NativePath("/usr/local/bin/ls"), "gemini", testProject, false},
		{"card grant without provider, no provider", []string{"make", "test"}, platformtest.NativePath("/usr/bin/make"), "", testProject, true},
		{"card grant without provider, a provider", []string{"make", "test"}, platformtest.NativePath("/usr/bin/make"), "codex", testProject, false},
		{"empty argv", nil, testGit, "claude-code", testProject, false},
		{"relative project", []string{"git", "status"}, testGit, "claude-code", "src/app", false},
	} {
		if _, ok := match(t, g, c.argv, c.exe, c.provider, c.project); ok != c.want {
			t.Errorf("%s: allowed=%v, want %v", c.name, ok, c.want)
		}
	}
}

func TestGrantBoundToTheProgramsIdentity(t *testing.T) {
	g, _ := testGrants(t)
	id := procspec.FileID{Dev: 2049, Ino: 77, Size: 123456, MtimeNS: 1, CtimeNS: 2}
	gr := give(t, g, GrantRequest{Kind: GrantProgram, Argv: []string{"rg"}, Executable: platformtest.NativePath("/usr/bin/rg"), ProgramID: id, Project: testProject,
		AllProviders: true, By: "terminal", For: time.Hour})
	if gr.ProgramID == nil || *gr.ProgramID != id {
		t.Fatalf("grant program id %+v, want %+v", gr.ProgramID, id)
	}
	ask := func(qid procspec.FileID) bool {
		_, ok, err := g.Match(GrantQuery{Argv: []string{"rg", "x"}, Executable: platformtest.NativePath("/usr/bin/rg"), ProgramID: qid, Project: testProject})
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !ask(id) {
		t.Fatal("the same file was not allowed")
	}
	for name, change := range map[string]func(*procspec.FileID){
		"another inode":          func(f *procspec.FileID) { f.Ino++ },
		"another device":         func(f *procspec.FileID) { f.Dev++ },
		"rewritten (size)":       func(f *procspec.FileID) { f.Size++ },
		"rewritten (mtime)":      func(f *procspec.FileID) { f.MtimeNS++ },
		"changed status (ctime)": func(f *procspec.FileID) { f.CtimeNS++ },
		"unknown":                func(f *procspec.FileID) { *f = procspec.FileID{} },
	} {
		other := id
		change(&other)
		if ask(other) {
			t.Errorf("%s: allowed by a grant for another file", name)
		}
	}
}

func TestGrantRefusals(t *testing.T) {
	g, _ := testGrants(t)
	ok := GrantRequest{Kind: GrantExact, Argv: []string{"git", "status"}, Executable: testGit, Project: testProject, By: "card", For: time.Hour}
	for _, c := range []struct {
		name   string
		change func(*GrantRequest)
		want   string
	}{
		{"program grant for a launcher", func(r *GrantRequest) {
			r.Kind, r.Argv, r.Executable = GrantProgram, []string{"bash", "-c", "x"}, platformtest.NativePath("/bin/bash")
		}, "exact command"},
		{"program grant for a versioned interpreter", func(r *GrantRequest) { r.Kind, r.Argv = GrantProgram, []string{"python3.12", "x.py"} }, "exact command"},
		{"empty argv", func(r *GrantRequest) { r.Argv = nil }, "at least one token"},
		{"NUL byte", func(r *GrantRequest) { r.Argv = []string{"git", "a\x00b"} }, "NUL"},
		{"relative executable", func(r *GrantRequest) { r.Executable = "git" }, "absolute"},
		{"relative project", func(r *GrantRequest) { r.Project = "app" }, "absolute"},
		{"bad provider", func(r *GrantRequest) { r.Provider = "../x" }, "provider"},
		{"zero duration", func(r *GrantRequest) { r.For = 0 }, "at most"},
		{"too long", func(r *GrantRequest) { r.For = MaxGrantDuration + time.Second }, "at most"},
		{"unknown kind", func(r *GrantRequest) { r.Kind = "forever" }, "unknown grant kind"},
		{"instance not running", func(r *GrantRequest) { r.Instance = "0123456789abcdef" }, "not running"},
	} {
		req := ok
		c.change(&req)
		if _, err := g.Give(req); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one mentioning %q", c.name, err, c.want)
		}
	}
	if list, _ := g.List(); len(list) != 0 {
		t.Fatalf("refused grants were stored: %+v", list)
	}
	// An exact grant for a launcher is fine.
	give(t, g, GrantRequest{Kind: GrantExact, Argv: []string{"bash", "scripts/check.sh"}, Executable: platformtest.NativePath("/bin/bash"), Project: testProject, By: "card", For: time.Hour})
}

// writeGrants writes grants.json as a hand (or an agent) would.
func writeGrants(t *testing.T, g *Grants, grants ...Grant) {
	t.Helper()
	var b strings.Builder
	b.WriteString(`{"version":1,"grants":[`)
	for i, gr := range grants {
		if i > 0 {
			b.WriteString(",")
		}
		exp := ""
		if !gr.Expires.IsZero() {
			exp = fmt.Sprintf(`,"expires":%q`, gr.Expires.Format(time.RFC3339Nano))
		}
		inst := ""
		if gr.Instance != "" {
			inst = fmt.Sprintf(`,"instance":%q`, gr.Instance)
		}
		fmt.Fprintf(&b, `{"id":%q,"kind":%q,"tokens":[%q],"executable":%q,"project":%q,"all_providers":true,"by":"terminal","given":%q%s%s}`,
			gr.ID, gr.Kind, gr.Tokens[0], gr.Executable, gr.Project, gr.Given.Format(time.RFC3339Nano), exp, inst)
	}
	b.WriteString("]}\n")
	writeFile(t, g.file(), b.String())
}

func TestGrantsFileCannotWidenAGrant(t *testing.T) {
	g, clock := testGrants(t)
	now := clock.Now()
	writeGrants(t, g,
		// spans more than MaxGrantDuration: never honoured
		Grant{ID: "g-00000001", Kind: GrantProgram, Tokens: []string{"rm"}, Executable: platformtest.NativePath("/bin/rm"), Project: testProject, Given: now.Add(-time.Minute), Expires: now.Add(365 * 24 * time.Hour)},
		// a program grant for a launcher: never honoured
		Grant{ID: "g-00000002", Kind: GrantProgram, Tokens: []string{"sh"}, Executable: platformtest.NativePath("/bin/sh"), Project: testProject, Given: now.Add(-time.Minute), Expires: now.Add(time.Hour)},
		// given in the future (the clock was set back): not honoured
		Grant{ID: "g-00000003", Kind: GrantProgram, Tokens: []string{"ls"}, Executable: platformtest.NativePath("/bin/ls"), Project: testProject, Given: now.Add(time.Hour), Expires: now.Add(2 * time.Hour)},
		// an instance id that is a path: not honoured
		Grant{ID: "g-00000004", Kind: GrantProgram, Tokens: []string{"cat"}, Executable: platformtest.NativePath("/bin/cat"), Project: testProject, Given: now.Add(-time.Minute), Instance: "../../../etc"},
	)
	for _, argv := range [][]string{{"rm", "-rf", "x"}, {"sh", "-c", "x"}, {"ls"}, {"cat", "x"}} {
		if _, ok := match(t, g, argv, platformtest.NativePath("/bin/")+argv[0], "", testProject); ok {
			t.Errorf("%v allowed by a hand-written grant", argv)
		}
	}
	if list, _ := g.List(); len(list) != 1 || list[0].ID != "g-00000002" {
		// The launcher grant is in force as a file entry (it may be revoked)
		// but matches nothing; the others ended and are removed.
		t.Fatalf("grants left: %+v", list)
	}
	writeFile(t, g.file(), "{not json")
	if _, ok, err := g.Match(GrantQuery{Argv: []string{"ls"}, Executable: platformtest.NativePath("/bin/ls"), Project: testProject}); ok || err == nil {
		t.Fatalf("a damaged grants file: ok=%v err=%v, want not allowed and an error", ok, err)
	}
}

func TestGrantRevoke(t *testing.T) {
	g, _ := testGrants(t)
	a := give(t, g, GrantRequest{Kind: GrantExact, Argv: []string{"git", "status"}, Executable: testGit, Project: testProject, AllProviders: true, By: "terminal", For: time.Hour})
	give(t, g, GrantRequest{Kind: GrantExact, Argv: []string{"git", "diff"}, Executable: testGit, Project: testProject, AllProviders: true, By: "terminal", For: time.Hour})
	give(t, g, GrantRequest{Kind: GrantExact, Argv: []string{"git", "log"}, Executable: testGit, Project: testProject, AllProviders: true, By: "terminal", For: time.Hour})
	if err := g.Revoke(a.ID); err != nil {
		t.Fatal(err)
	}
	if _, ok := match(t, g, []string{"git", "status"}, testGit, "", testProject); ok {
		t.Fatal("a revoked grant was honoured")
	}
	if _, ok := match(t, g, []string{"git", "diff"}, testGit, "", testProject); !ok {
		t.Fatal("revoking one grant ended another")
	}
	if err := g.Revoke(a.ID); err == nil || !strings.Contains(err.Error(), "agentgate allow grants") {
		t.Fatalf("revoking it again: %v, want an error that says how to list grants", err)
	}
	n, err := g.RevokeAll()
	if err != nil || n != 2 {
		t.Fatalf("RevokeAll = %d, %v; want 2", n, err)
	}
	if list, _ := g.List(); len(list) != 0 {
		t.Fatalf("grants after RevokeAll: %+v", list)
	}
}

func TestGrantResolvesOnlyWhenAGrantCouldMatch(t *testing.T) {
	g, _ := testGrants(t)
	calls := 0
	resolve := func(argv0 string) (string, procspec.FileID, bool) {
		calls++
		return platformtest.NativePath("/usr/bin/") + argv0, procspec.FileID{}, true
	}
	q := GrantQuery{Argv: []string{"git", "status"}, Project: testProject, Resolve: resolve}
	if _, ok, err := g.Match(q); ok || err != nil || calls != 0 {
		t.Fatalf("no grants: ok=%v err=%v, %d resolutions; want none", ok, err, calls)
	}
	give(t, g, GrantRequest{Kind: GrantExact, Argv: []string{"git", "status"}, Executable: testGit, Project: platformtest.NativePath("/elsewhere"), AllProviders: true, By: "terminal", For: time.Hour})
	if _, ok, _ := g.Match(q); ok || calls != 0 {
		t.Fatalf("a grant in another project only: ok=%v, %d resolutions; want none", ok, calls)
	}
	give(t, g, GrantRequest{Kind: GrantExact, Argv: []string{"git", "status"}, Executable: testGit, Project: testProject, AllProviders: true, By: "terminal", For: time.Hour})
	give(t, g, GrantRequest{Kind: GrantExact, Argv: []string{"git", "diff"}, Executable: testGit, Project: testProject, AllProviders: true, By: "terminal", For: time.Hour})
	if _, ok, _ := g.Match(q); !ok || calls != 1 {
		t.Fatalf("ok=%v after %d resolutions; want allowed after one", ok, calls)
	}
	if _, ok, _ := g.Match(GrantQuery{Argv: []string{"git", "status"}, Project: testProject, Resolve: func(string) (string, procspec.FileID, bool) { return "", procspec.FileID{}, false }}); ok {
		t.Fatal("allowed although the program resolves to nothing")
	}
}

func TestGrantUntilQuit(t *testing.T) {
	g, clock := testGrants(t)
	in, err := HoldInstance(g.paths)
	if err != nil {
		t.Fatal(err)
	}
	req := GrantRequest{Kind: GrantExact, Argv: []string{"git", "status"}, Executable: testGit, Project: testProject, Provider: "claude-code", By: "card", Instance: in.ID()}
	gr := give(t, g, req)
	if !gr.UntilQuit() || !gr.Expires.IsZero() {
		t.Fatalf("grant %+v, want until quit without expiry", gr)
	}
	clock.Advance(30 * 24 * time.Hour) // it has no time limit
	if m, ok := match(t, g, []string{"git", "status"}, testGit, "claude-code", testProject); !ok || m.Left != 0 {
		t.Fatalf("until-quit grant while its instance runs: %+v %v", m, ok)
	}
	if err := in.Close(g); err != nil {
		t.Fatal(err)
	}
	if _, ok := match(t, g, []string{"git", "status"}, testGit, "claude-code", testProject); ok {
		t.Fatal("an until-quit grant outlived its instance")
	}
	if _, err := os.Stat(instanceLockFile(g.paths, in.ID())); !os.IsNotExist(err) {
		t.Fatalf("the instance's lock file after Close: %v", err)
	}
	if _, err := g.Give(req); err == nil {
		t.Fatal("a grant until a quit instance quits was given")
	}
}

// TestGrantOrphanedByCrash kills (SIGKILL) a process that holds an app
// instance and gave an until-quit grant: the grant is never honoured again
// and the next read removes it and the instance's lock file.
func TestGrantOrphanedByCrash(t *testing.T) {
	g, _ := testGrants(t)
	cmd := osexec.Command(os.Args[0], "-test.run=^TestHelperHoldInstance$")
	cmd.Env = append(os.Environ(), "AGENTGATE_TEST_INSTANCE_STATE="+g.paths.StateDir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	id, found := strings.CutPrefix(strings.TrimSpace(line), "instance ")
	if err != nil || !found {
		t.Fatalf("helper said %q, %v", line, err)
	}
	g.Now = nil // the helper used the real clock
	if _, ok := match(t, g, []string{"git", "status"}, testGit, "", testProject); !ok {
		t.Fatal("the grant of a running instance was not honoured")
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if _, ok := match(t, g, []string{"git", "status"}, testGit, "", testProject); ok {
		t.Fatal("the grant of a killed instance was honoured")
	}
	if _, err := os.Stat(g.file()); !os.IsNotExist(err) {
		t.Fatalf("grants.json after its only grant was orphaned: %v, want removed", err)
	}
	if _, err := os.Stat(instanceLockFile(g.paths, id)); !os.IsNotExist(err) {
		t.Fatalf("the killed instance's lock file: %v, want removed", err)
	}
}

// TestHelperHoldInstance is the process TestGrantOrphanedByCrash kills.
func TestHelperHoldInstance(t *testing.T) {
	state := os.Getenv("AGENTGATE_TEST_INSTANCE_STATE")
	if state == "" {
		t.Skip("helper process for TestGrantOrphanedByCrash")
	}
	p := Paths{ConfigDir: filepath.Join(state, "config"), StateDir: state}
	in, err := HoldInstance(p)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	if _, err := OpenGrants(p).Give(GrantRequest{Kind: GrantExact, Argv: []string{"git", "status"}, Executable: testGit, Project: testProject,
		AllProviders: true, By: "card", Instance: in.ID()}); err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println("instance", in.ID())
	select {} // until killed
}

func TestGrantsConcurrentGives(t *testing.T) {
	g, _ := testGrants(t)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			if _, err := g.Give(GrantRequest{Kind: GrantExact, Argv: []string{"echo", fmt.Sprint(i)}, Executable: platformtest.NativePath("/bin/echo"), Project: testProject, AllProviders: true, By: "terminal", For: time.Hour}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if list, _ := g.List(); len(list) != 20 {
		t.Fatalf("%d grants after 20 concurrent gives, want 20", len(list))
	}
}
