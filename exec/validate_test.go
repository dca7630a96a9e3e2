package exec

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// operatorCases lists tokens and whether IsShellOperatorToken refuses them.
var operatorCases = []struct {
	token   string
	refused bool
}{
	// Every operator of SPEC §2, whole.
	{"<", true}, {">", true}, {">>", true}, {"<<", true}, {"<<<", true}, {"2>", true},
	{"2>>", true}, {"&>", true}, {"&>>", true}, {">&", true}, {"<&", true}, {"|", true},
	{"|&", true}, {"||", true}, {"&", true}, {"&&", true}, {";", true}, {";;", true},
	// More bash operators.
	{"<<-", true}, {"<>", true}, {">|", true}, {";&", true}, {";;&", true},
	// Leading fd numbers and glued targets.
	{"2>&1", true}, {"1>file", true}, {">file", true}, {">>log", true}, {"<input", true},
	{"<&3", true}, {">&2", true}, {"&>out", true}, {"&>>out", true}, {"10>x", true},
	{"0<in", true}, {"2>/dev/null", true}, {"{fd}>x", true}, {"{v_1}<&0", true},
	{"<(cmd)", true}, {">(cmd)", true}, {"3<4", true},
	// Ordinary arguments with operator characters inside or at the end.
	{"a>b", false}, {"foo|bar", false}, {"x|y", false}, {"--match=a<b", false},
	{"foo&bar", false}, {"5&", false}, {"a;b", false}, {"http://x/?a=1&b=2", false},
	{"<b>bold", true}, {"2", false}, {"12", false}, {"{fd}", false}, {"{}", false},
	{"{}>x", false}, {"{1a}>x", false}, {"", false}, {"-", false}, {"&&x", false},
	{"|grep", false}, {"'>'", false}, {"\\>", false}, {"->", false}, {"=>", false},
}

func TestIsShellOperatorToken(t *testing.T) {
	for _, tc := range operatorCases {
		assert.Equal(t, tc.refused, IsShellOperatorToken(tc.token), "token %q", tc.token)
	}
	// Every operator of the one table is refused, alone and with a target.
	for _, op := range shellOperators {
		assert.True(t, IsShellOperatorToken(op.Op), op.Op)
		if op.Redirect {
			assert.True(t, IsShellOperatorToken("2"+op.Op+"x"), "2%sx", op.Op)
		}
	}
}

// project is a temporary project for validation tests.
type project struct {
	root    string // resolved project root
	outside string // resolved directory outside the project
	pathEnv string // PATH holding bin with an executable "tool"
}

// newProject builds root/{sub,link→outside,file.txt,bin/tool,run.sh}.
func newProject(t *testing.T) project {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	p := project{root: filepath.Join(base, "proj"), outside: filepath.Join(base, "outside")}
	for _, d := range []string{p.root, p.outside, filepath.Join(p.root, "sub"), filepath.Join(base, "bin")} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(base, "bin", "tool"), []byte("#!/bin/sh\n"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(p.root, "run.sh"), []byte("#!/bin/sh\necho run\n"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(p.root, "file.txt"), nil, 0o644))
	require.NoError(t, os.Symlink(p.outside, filepath.Join(p.root, "link")))
	p.pathEnv = "relative/bin" + string(filepath.ListSeparator) + filepath.Join(base, "bin")
	return p
}

func TestValidateRefusals(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("uses Unix executables and symlinks")
	}
	p := newProject(t)
	cases := []struct {
		name     string
		prop     Proposal
		code     string
		contains []string
	}{
		{"empty argv", Proposal{}, CodeEmptyArgv, []string{"empty"}},
		{"empty argv0", Proposal{Argv: []string{""}}, CodeEmptyProgram, []string{"argv[0]"}},
		{"nul in argv0", Proposal{Argv: []string{"to\x00ol"}}, CodeNulByte, []string{`argv[0] "to\x00ol"`}},
		{"nul in arg", Proposal{Argv: []string{"tool", "ok", "a\x00b"}}, CodeNulByte, []string{`argv[2] "a\x00b"`}},
		{"nul in cwd", Proposal{Argv: []string{"tool"}, Cwd: "s\x00"}, CodeNulByte, []string{"cwd"}},
		{"redirect 2>&1", Proposal{Argv: []string{"tool", "x", "2>&1"}}, CodeRedirectionToken, []string{`argv[2] "2>&1"`}},
		{"redirect >file", Proposal{Argv: []string{"tool", ">file"}}, CodeRedirectionToken, []string{`argv[1] ">file"`}},
		{"redirect 1>file", Proposal{Argv: []string{"tool", "1>file"}}, CodeRedirectionToken, []string{`argv[1] "1>file"`}},
		{"redirect <&", Proposal{Argv: []string{"tool", "<&"}}, CodeRedirectionToken, []string{`argv[1] "<&"`}},
		{"redirect &>>", Proposal{Argv: []string{"tool", "&>>"}}, CodeRedirectionToken, []string{`argv[1] "&>>"`}},
		{"pipe", Proposal{Argv: []string{"tool", "a", "|", "wc"}}, CodeRedirectionToken, []string{`argv[2] "|"`}},
		{"background", Proposal{Argv: []string{"tool", "&"}}, CodeRedirectionToken, []string{`argv[1] "&"`}},
		{"list", Proposal{Argv: []string{"tool", "&&", "tool"}}, CodeRedirectionToken, []string{`argv[1] "&&"`}},
		{"program is operator", Proposal{Argv: []string{";"}}, CodeRedirectionToken, []string{`argv[0] ";"`}},
		{"stdin too large", Proposal{Argv: []string{"tool"}, Stdin: make([]byte, MaxStdin+1)}, CodeStdinTooLarge, []string{"524289"}},
		{"timeout negative", Proposal{Argv: []string{"tool"}, Timeout: -time.Second}, CodeTimeoutOutOfRange, []string{"1 ms", "10m0s", "600000 ms"}},
		{"timeout too large", Proposal{Argv: []string{"tool"}, Timeout: MaxTimeout + time.Millisecond}, CodeTimeoutOutOfRange, []string{"between 1 ms and 10m0s"}},
		{"timeout below 1ms", Proposal{Argv: []string{"tool"}, Timeout: time.Microsecond}, CodeTimeoutOutOfRange, []string{"1 ms"}},
		{"root relative", Proposal{Argv: []string{"tool"}, ProjectRoot: "proj"}, CodeProjectRootInvalid, []string{`"proj"`}},
		{"root missing", Proposal{Argv: []string{"tool"}, ProjectRoot: p.root + "/nope"}, CodeProjectRootInvalid, []string{"nope"}},
		{"root is file", Proposal{Argv: []string{"tool"}, ProjectRoot: p.root + "/file.txt"}, CodeProjectRootInvalid, []string{"not a directory"}},
		{"cwd dotdot", Proposal{Argv: []string{"tool"}, Cwd: "../outside"}, CodeCwdOutsideProject, []string{"resolves to " + p.outside}},
		{"cwd deep dotdot", Proposal{Argv: []string{"tool"}, Cwd: "sub/../../outside"}, CodeCwdOutsideProject, []string{p.outside}},
		{"cwd absolute outside", Proposal{Argv: []string{"tool"}, Cwd: p.outside}, CodeCwdOutsideProject, []string{p.outside}},
		{"cwd absolute root", Proposal{Argv: []string{"tool"}, Cwd: "/"}, CodeCwdOutsideProject, []string{"resolves to /,"}},
		{"cwd symlink escape", Proposal{Argv: []string{"tool"}, Cwd: "link"}, CodeCwdOutsideProject, []string{"resolves to " + p.outside}},
		{"cwd symlink dotdot", Proposal{Argv: []string{"tool"}, Cwd: "link/.."}, CodeCwdOutsideProject, []string{filepath.Dir(p.outside)}},
		{"cwd missing", Proposal{Argv: []string{"tool"}, Cwd: "nope"}, CodeCwdNotFound, []string{"nope"}},
		{"cwd is file", Proposal{Argv: []string{"tool"}, Cwd: "file.txt"}, CodeCwdNotFound, []string{"not a directory"}},
		{"exe not found", Proposal{Argv: []string{"no-such-tool-xyz"}}, CodeExecutableNotFound, []string{`"no-such-tool-xyz"`, "PATH"}},
		{"exe relative PATH entry ignored", Proposal{Argv: []string{"run.sh"}}, CodeExecutableNotFound, []string{`"run.sh"`}},
		{"exe path not executable", Proposal{Argv: []string{"./file.txt"}}, CodeExecutableNotFound, []string{"file.txt"}},
		{"exe path is dir", Proposal{Argv: []string{"./sub"}}, CodeExecutableNotFound, []string{"sub"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			prop := tc.prop
			if prop.ProjectRoot == "" {
				prop.ProjectRoot = p.root
			}
			_, err := Validate(prop, p.pathEnv)
			var ref *Refusal
			require.True(t, errors.As(err, &ref), "want *Refusal, got %v", err)
			assert.Equal(t, tc.code, ref.Code)
			for _, want := range tc.contains {
				assert.Contains(t, ref.Message, want)
			}
		})
	}
}

func TestValidateAccepts(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("uses Unix executables and symlinks")
	}
	p := newProject(t)
	tool := filepath.Join(filepath.Dir(p.outside), "bin", "tool")
	cases := []struct {
		name    string
		prop    Proposal
		exe     string
		dir     string
		rel     string
		timeout time.Duration
	}{
		{"defaults", Proposal{Argv: []string{"tool", "a>b", "x|y"}}, tool, p.root, ".", DefaultTimeout},
		{"relative cwd", Proposal{Argv: []string{"tool"}, Cwd: "sub", Timeout: time.Millisecond}, tool, filepath.Join(p.root, "sub"), "sub", time.Millisecond},
		{"dotdot inside", Proposal{Argv: []string{"tool"}, Cwd: "sub/..", Timeout: MaxTimeout}, tool, p.root, ".", MaxTimeout},
		{"absolute inside", Proposal{Argv: []string{"tool"}, Cwd: filepath.Join(p.root, "sub")}, tool, filepath.Join(p.root, "sub"), "sub", DefaultTimeout},
		{"path argv0 relative to cwd", Proposal{Argv: []string{"../run.sh"}, Cwd: "sub"}, filepath.Join(p.root, "run.sh"), filepath.Join(p.root, "sub"), "sub", DefaultTimeout},
		{"absolute argv0", Proposal{Argv: []string{tool}}, tool, p.root, ".", DefaultTimeout},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.prop.ProjectRoot = p.root
			tc.prop.Stdin = []byte("in")
			cmd, err := Validate(tc.prop, p.pathEnv)
			require.NoError(t, err)
			assert.Equal(t, tc.prop.Argv, cmd.Argv)
			assert.Equal(t, tc.exe, cmd.Executable)
			assert.Equal(t, tc.dir, cmd.Dir)
			assert.Equal(t, tc.rel, cmd.DirRel)
			assert.Equal(t, p.root, cmd.ProjectRoot)
			assert.Equal(t, tc.timeout, cmd.Timeout)
			assert.Equal(t, "in", string(cmd.Stdin))
			assert.Equal(t, "582967534d0f909d196b97f9e6921342777aea87b46fa52df165389db1fb8ccf", cmd.StdinSHA256) // sha256sum of "in"
		})
	}
}

func TestValidateProjectRootThroughSymlink(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks")
	}
	p := newProject(t)
	alias := filepath.Join(t.TempDir(), "alias")
	require.NoError(t, os.Symlink(p.root, alias))
	cmd, err := Validate(Proposal{Argv: []string{"tool"}, ProjectRoot: alias, Cwd: filepath.Join(alias, "sub")}, p.pathEnv)
	require.NoError(t, err)
	assert.Equal(t, p.root, cmd.ProjectRoot)
	assert.Equal(t, filepath.Join(p.root, "sub"), cmd.Dir)
}

func TestWithin(t *testing.T) {
	sep := string(filepath.Separator)
	root := sep + filepath.Join("a", "b")
	cases := []struct {
		path string
		rel  string
		ok   bool
	}{
		{root, ".", true},
		{filepath.Join(root, "c"), "c", true},
		{filepath.Join(root, "..c"), "..c", true},
		{sep + "a", "", false},
		{sep + filepath.Join("a", "bc"), "", false},
		{sep + filepath.Join("x", "b"), "", false},
	}
	for _, tc := range cases {
		rel, ok := within(root, tc.path)
		assert.Equal(t, tc.ok, ok, tc.path)
		assert.Equal(t, tc.rel, rel, tc.path)
	}
}

// FuzzValidate checks that Validate never panics, that an accepted command
// holds no refused token, and that its Dir is inside the project root.
func FuzzValidate(f *testing.F) {
	base, err := filepath.EvalSymlinks(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	root := filepath.Join(base, "proj")
	os.MkdirAll(filepath.Join(root, "sub"), 0o755)
	os.MkdirAll(filepath.Join(base, "out"), 0o755)
	os.Symlink(filepath.Join(base, "out"), filepath.Join(root, "link"))
	pathEnv := os.Getenv("PATH")
	f.Add("true", "a>b", "", "sub", int64(0))
	f.Add("true", "2>&1", "x", "..", int64(5))
	f.Add("ls", "|", "&&", "link", int64(-1))
	f.Add("echo", "1>file", ";", "sub/../..", int64(700_000))
	f.Add("", "\x00", "", "/", int64(1))
	f.Fuzz(func(t *testing.T, a0, a1, a2, cwd string, timeoutMS int64) {
		cmd, err := Validate(Proposal{Argv: []string{a0, a1, a2}, Cwd: cwd, ProjectRoot: root, Timeout: time.Duration(timeoutMS) * time.Millisecond}, pathEnv)
		if err != nil {
			var ref *Refusal
			if !errors.As(err, &ref) || ref.Code == "" || ref.Message == "" {
				t.Fatalf("error is not a complete *Refusal: %#v", err)
			}
			return
		}
		for i, tok := range cmd.Argv {
			if IsShellOperatorToken(tok) || strings.IndexByte(tok, 0) >= 0 {
				t.Fatalf("accepted refused token argv[%d] %q", i, tok)
			}
		}
		if _, ok := within(root, cmd.Dir); !ok {
			t.Fatalf("accepted Dir %s outside %s", cmd.Dir, root)
		}
		if resolved, err := filepath.EvalSymlinks(cmd.Dir); err != nil || resolved != cmd.Dir {
			t.Fatalf("Dir %s is not resolved (%s, %v)", cmd.Dir, resolved, err)
		}
		if cmd.Timeout < time.Millisecond || cmd.Timeout > MaxTimeout || !filepath.IsAbs(cmd.Executable) {
			t.Fatalf("accepted bad command %+v", cmd)
		}
	})
}
