package prefs

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ownDirsWorld is a private home with a project, and the environment
// pointing at it: HOME, XDG_CACHE_HOME and TMPDIR.
type ownDirsWorld struct {
	// root holds everything; home is $HOME; project is a git work tree.
	root, home, project string
	// cache is $XDG_CACHE_HOME; tmp is $TMPDIR.
	cache, tmp string
}

func newOwnDirsWorld(t *testing.T) ownDirsWorld {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	w := ownDirsWorld{root: root, home: filepath.Join(root, "home"), project: filepath.Join(root, "home", "src", "app"),
		cache: filepath.Join(root, "cache"), tmp: filepath.Join(root, "tmp")}
	for _, d := range []string{filepath.Join(w.project, ".git"), w.cache, w.tmp} {
		require.NoError(t, os.MkdirAll(d, 0o700))
	}
	t.Setenv("HOME", w.home)
	t.Setenv("XDG_CACHE_HOME", w.cache)
	t.Setenv("TMPDIR", w.tmp)
	for _, v := range []string{"XDG_CONFIG_HOME", "XDG_STATE_HOME"} {
		t.Setenv(v, "")
	}
	return w
}

// configAt returns Paths whose configuration directory XDG_CONFIG_HOME=dir
// chooses (set in the environment), with a state directory beside the
// project.
func (w ownDirsWorld) configAt(t *testing.T, dir string) Paths {
	t.Setenv("XDG_CONFIG_HOME", dir)
	t.Setenv("XDG_STATE_HOME", filepath.Join(w.root, "state"))
	return Paths{ConfigDir: filepath.Join(dir, "agentgate"), StateDir: filepath.Join(w.root, "state", "agentgate")}
}

// refused asserts that err is a *DirError naming variable and within.
func refused(t *testing.T, err error, variable, within string) {
	t.Helper()
	var de *DirError
	require.True(t, errors.As(err, &de), "refused: %v", err)
	assert.Equal(t, variable, de.Place.Variable)
	assert.Equal(t, within, de.Within)
	if variable != "" {
		assert.Contains(t, err.Error(), "Unset "+variable, "the message says what to do")
	}
}

func TestCheckDirsProjectAndBeside(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links and HOME: Unix")
	}
	w := newOwnDirsWorld(t)
	// A repository's configuration directory, inside itself.
	refused(t, CheckDirs(w.configAt(t, filepath.Join(w.project, ".cfg")), OwnPlace{}, w.project), "XDG_CONFIG_HOME", w.project)
	// The project root itself, and a directory not made yet.
	refused(t, CheckDirs(w.configAt(t, w.project), OwnPlace{}, w.project), "XDG_CONFIG_HOME", w.project)
	refused(t, CheckDirs(w.configAt(t, filepath.Join(w.project, "not", "yet")), OwnPlace{}, w.project), "XDG_CONFIG_HOME", w.project)
	// A state directory inside the project.
	t.Setenv("XDG_STATE_HOME", filepath.Join(w.project, "st"))
	err := CheckDirs(Paths{ConfigDir: filepath.Join(w.root, "config", "agentgate"), StateDir: filepath.Join(w.project, "st", "agentgate")}, OwnPlace{}, w.project)
	refused(t, err, "XDG_STATE_HOME", w.project)
	assert.Contains(t, err.Error(), "state directory "+filepath.Join(w.project, "st", "agentgate"))

	// Private directories beside the project (the tests' sandboxes): fine.
	require.NoError(t, CheckDirs(w.configAt(t, filepath.Join(w.root, "config")), OwnPlace{}, w.project))
	// A sibling whose name starts like the project is not inside it.
	require.NoError(t, CheckDirs(w.configAt(t, w.project+"-config"), OwnPlace{}, w.project))
	// With no project (the desktop app), the project is not a boundary.
	require.NoError(t, CheckDirs(w.configAt(t, filepath.Join(w.project, ".cfg")), OwnPlace{}))
}

func TestCheckDirsSymlinks(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links: Unix")
	}
	w := newOwnDirsWorld(t)
	// A link outside the project that leads into it.
	link := filepath.Join(w.root, "innocent")
	require.NoError(t, os.Symlink(filepath.Join(w.project, "sub"), link))
	require.NoError(t, os.MkdirAll(filepath.Join(w.project, "sub"), 0o700))
	refused(t, CheckDirs(w.configAt(t, link), OwnPlace{}, w.project), "XDG_CONFIG_HOME", w.project)
	// Below the link, not made yet.
	refused(t, CheckDirs(w.configAt(t, filepath.Join(link, "x", "y")), OwnPlace{}, w.project), "XDG_CONFIG_HOME", w.project)
	// A link to the project's parent: the project is not an ancestor, so it
	// is beside the project.
	up := filepath.Join(w.root, "up")
	require.NoError(t, os.Symlink(filepath.Dir(w.project), up))
	require.NoError(t, CheckDirs(w.configAt(t, filepath.Join(up, "config")), OwnPlace{}, w.project))
	// The project named through a link (the agent's cwd spelled another
	// way): ProjectRoot gives its real path, which callers pass.
	projLink := filepath.Join(w.root, "proj-link")
	require.NoError(t, os.Symlink(w.project, projLink))
	root, err := ProjectRoot(projLink)
	require.NoError(t, err)
	refused(t, CheckDirs(w.configAt(t, filepath.Join(projLink, ".cfg")), OwnPlace{}, root), "XDG_CONFIG_HOME", w.project)
	// A path through a link inside a writable place, pointing outside it:
	// the link could be swapped later, so it counts as inside.
	require.NoError(t, os.MkdirAll(filepath.Join(w.root, "safe"), 0o700))
	swap := filepath.Join(w.cache, "swap")
	require.NoError(t, os.Symlink(filepath.Join(w.root, "safe"), swap))
	refused(t, CheckDirs(w.configAt(t, swap), OwnPlace{}, w.project), "XDG_CONFIG_HOME", w.cache)
}

func TestCheckDirsRunWritablePlaces(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("HOME and writable paths: Unix")
	}
	w := newOwnDirsWorld(t)
	// The cache directory.
	refused(t, CheckDirs(w.configAt(t, filepath.Join(w.cache, "evil")), OwnPlace{}, w.project), "XDG_CONFIG_HOME", w.cache)
	// A default writable_paths entry, in $HOME (not the account's home).
	npm := filepath.Join(w.home, ".npm")
	require.NoError(t, os.MkdirAll(npm, 0o700))
	refused(t, CheckDirs(w.configAt(t, filepath.Join(npm, "evil")), OwnPlace{}, w.project), "XDG_CONFIG_HOME", npm)
	// One that does not exist yet (compared as written).
	refused(t, CheckDirs(w.configAt(t, filepath.Join(w.home, "go", "pkg", "mod", "x")), OwnPlace{}, w.project),
		"XDG_CONFIG_HOME", filepath.Join(w.home, "go", "pkg", "mod"))
	// An entry of the settings in the configuration directory in use.
	scratch := filepath.Join(w.root, "scratch")
	require.NoError(t, os.MkdirAll(scratch, 0o700))
	cfg := filepath.Join(w.root, "config")
	paths := w.configAt(t, cfg)
	require.NoError(t, SaveSettings(paths, func() Settings { s := DefaultSettings(); s.WritablePaths = []string{scratch}; return s }()))
	t.Setenv("XDG_STATE_HOME", filepath.Join(scratch, "st"))
	refused(t, CheckDirs(Paths{ConfigDir: paths.ConfigDir, StateDir: filepath.Join(scratch, "st", "agentgate")}, OwnPlace{}, w.project), "XDG_STATE_HOME", scratch)
	// A run's private temporary directory.
	run := filepath.Join(w.tmp, runTempPrefix+"123")
	require.NoError(t, os.MkdirAll(run, 0o700))
	refused(t, CheckDirs(w.configAt(t, filepath.Join(run, "c")), OwnPlace{}, w.project), "XDG_CONFIG_HOME", run)
	// …also reached through a link.
	require.NoError(t, os.Symlink(run, filepath.Join(w.root, "to-run")))
	refused(t, CheckDirs(w.configAt(t, filepath.Join(w.root, "to-run", "c")), OwnPlace{}, w.project), "XDG_CONFIG_HOME", run)
	// Elsewhere in the temporary directory (the tests' sandboxes): fine.
	require.NoError(t, CheckDirs(w.configAt(t, filepath.Join(w.tmp, "TestSomething", "config")), OwnPlace{}, w.project))
}

func TestCheckDirsSocket(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Unix paths")
	}
	w := newOwnDirsWorld(t)
	paths := w.configAt(t, filepath.Join(w.root, "config"))
	sock := OwnPlace{What: "bridge socket", Path: filepath.Join(w.project, ".s", "bridge.sock"), Variable: "AGENTGATE_SOCKET"}
	err := CheckDirs(paths, sock, w.project)
	refused(t, err, "AGENTGATE_SOCKET", w.project)
	assert.Contains(t, err.Error(), "bridge socket")
	sock.Path = filepath.Join(w.root, "run", "bridge.sock")
	require.NoError(t, CheckDirs(paths, sock, w.project))
}

func TestCheckDirsDefaultsAndRelative(t *testing.T) {
	def, _ := defaultPaths()
	if def.ConfigDir == "" || def.StateDir == "" {
		t.Skip("the account database names no home directory here")
	}
	// The account's default places are never refused, not even when the
	// project is the home directory itself (an agent started in ~).
	require.NoError(t, CheckDirs(def, OwnPlace{}, AccountHome()))
	assert.True(t, def.ConfigPlace().Default)
	// A socket agentgate would take relative to its working directory.
	err := CheckDirs(def, OwnPlace{What: "bridge socket", Path: "s.sock", Variable: "AGENTGATE_SOCKET"})
	var de *DirError
	require.True(t, errors.As(err, &de))
	assert.Contains(t, err.Error(), "not an absolute path")
	assert.Contains(t, err.Error(), "Unset AGENTGATE_SOCKET")
}

func TestCheckDirsOnlyWhatAVariableChose(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Unix paths")
	}
	w := newOwnDirsWorld(t)
	// Paths a caller gave (tests' sandboxes), with no variable naming them,
	// are the caller's choice, even inside the project.
	p := Paths{ConfigDir: filepath.Join(w.project, ".cfg", "agentgate"), StateDir: filepath.Join(w.project, ".st", "agentgate")}
	require.NoError(t, CheckDirs(p, OwnPlace{What: "bridge socket", Path: filepath.Join(w.project, "s.sock")}, w.project))
	// The same paths chosen by the variables are refused.
	t.Setenv("XDG_STATE_HOME", filepath.Join(w.project, ".st"))
	refused(t, CheckDirs(p, OwnPlace{}, w.project), "XDG_STATE_HOME", w.project)
}

func TestCheckDirsHomeProjectIsNoBoundary(t *testing.T) {
	home := AccountHome()
	if runtime.GOOS == "windows" || home == "" || home == "/" {
		t.Skip("needs an account home directory below /")
	}
	outside := filepath.Join(t.TempDir(), "cfg")
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".other-config"))
	t.Setenv("XDG_CACHE_HOME", outside)
	p := Paths{ConfigDir: filepath.Join(home, ".other-config", "agentgate"), StateDir: filepath.Join(outside, "st")}
	// An agent started in the home directory, or in /: every place of the
	// person's own lies in that "project"; it is not a boundary.
	require.NoError(t, CheckDirs(p, OwnPlace{}, home))
	require.NoError(t, CheckDirs(p, OwnPlace{}, "/"))
	// A project below the home directory still is.
	refused(t, CheckDirs(p, OwnPlace{}, filepath.Join(home, ".other-config")), "XDG_CONFIG_HOME", filepath.Join(home, ".other-config"))
}

func TestWithinPath(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Unix paths")
	}
	tests := []struct {
		dir, path string
		want      bool
	}{
		{"/a/b", "/a/b", true},
		{"/a/b", "/a/b/c", true},
		{"/a/b", "/a/bc", false},
		{"/a/b", "/a", false},
		{"/", "/a", true},
		{"/a/b", "/A/b", foldCase},
		{"", "/a", false},
	}
	for _, tc := range tests {
		if got := withinPath(tc.dir, tc.path); got != tc.want {
			t.Errorf("withinPath(%q, %q) = %v, want %v", tc.dir, tc.path, got, tc.want)
		}
	}
}

func TestWithinJoined(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Unix paths")
	}
	tests := []struct {
		base, rest, path string
		want             bool
	}{
		{"", "/c/d", "/c/d/e", true},
		{"/h", ".npm", "/h/.npm", true},
		{"/h", ".npm", "/h/.npm/x", true},
		{"/h", ".npm", "/h/.npmrc", false},
		{"/h", ".npm", "/hh/.npm", false},
		{"/h", "go/pkg/mod", "/h/go/pkg/mod/m", true},
		{"/h", "go/pkg/mod", "/h/go/pkg", false},
		{"/", "x", "/x/y", true},
	}
	for _, tc := range tests {
		if got := withinJoined(tc.base, tc.rest, tc.path); got != tc.want {
			t.Errorf("withinJoined(%q, %q, %q) = %v, want %v", tc.base, tc.rest, tc.path, got, tc.want)
		}
	}
}

func TestChosenBy(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("HOME: Unix")
	}
	w := newOwnDirsWorld(t)
	tests := []struct {
		name          string
		xdg, home     string // $XDG_CONFIG_HOME and $HOME ("" unset)
		path, want    string
		skipIfAccount bool // w.home must not be the account's home
	}{
		{"the variable's value", "/x/cfg", w.home, "/x/cfg/agentgate", "XDG_CONFIG_HOME", false},
		{"~ expanded as xdg does", "~/cfg", w.home, filepath.Join(w.home, "cfg", "agentgate"), "XDG_CONFIG_HOME", false},
		{"$HOME expanded as xdg does", "$HOME/cfg", w.home, filepath.Join(w.home, "cfg", "agentgate"), "XDG_CONFIG_HOME", false},
		{"a relative value is ignored, as xdg ignores it", "cfg", "", "cfg/agentgate", "", false},
		{"another directory than the variable's", "/x/cfg", "", "/y/agentgate", "", false},
		{"HOME that is not the account's", "", w.home, filepath.Join(w.home, ".config", "agentgate"), "HOME", true},
		{"below HOME, not its layout", "", w.home, filepath.Join(w.home, "src", "app", ".cfg", "agentgate"), "", true},
		{"nothing", "", "", "", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.skipIfAccount && AccountHome() == w.home {
				t.Skip("the account's home is the test's")
			}
			t.Setenv("XDG_CONFIG_HOME", tc.xdg)
			t.Setenv("HOME", tc.home)
			homeDef, _ := homeLayout(tc.home)
			if got := chosenBy(tc.path, "XDG_CONFIG_HOME", homeDef.ConfigDir); got != tc.want {
				t.Errorf("chosenBy(%q) = %q, want %q", tc.path, got, tc.want)
			}
		})
	}
}

func TestDirErrorSaysWhatToDo(t *testing.T) {
	tests := []struct {
		err  DirError
		want []string
	}{
		{DirError{Place: OwnPlace{What: "state directory", Path: "/p/st/agentgate", Variable: "XDG_STATE_HOME", Stake: "grants"}, Within: "/p", Why: "the project agentgate serves here"},
			[]string{"state directory /p/st/agentgate (chosen by XDG_STATE_HOME)", "inside /p, the project agentgate serves here", "could put grants there", "Unset XDG_STATE_HOME or point it outside"}},
		{DirError{Place: OwnPlace{What: "bridge socket", Path: "s.sock", Variable: "AGENTGATE_SOCKET"}, Why: "it is not an absolute path"},
			[]string{"bridge socket s.sock (chosen by AGENTGATE_SOCKET): it is not an absolute path", "Unset AGENTGATE_SOCKET"}},
	}
	for _, tc := range tests {
		msg := tc.err.Error()
		for _, w := range tc.want {
			assert.Contains(t, msg, w)
		}
	}
}

func TestCheckDirsHomeNamed(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("HOME: Unix")
	}
	w := newOwnDirsWorld(t)
	if AccountHome() == w.home {
		t.Skip("the account's home is the test's")
	}
	// HOME inside the project, the XDG variables unset: the variable to
	// blame is HOME.
	fake := filepath.Join(w.project, "fakehome")
	t.Setenv("HOME", fake)
	err := CheckDirs(Paths{ConfigDir: filepath.Join(fake, ".config", "agentgate"), StateDir: filepath.Join(w.root, "state", "agentgate")}, OwnPlace{}, w.project)
	refused(t, err, "HOME", w.project)
	assert.True(t, strings.Contains(err.Error(), "Unset HOME"))
}

// BenchmarkCheckDirs is the check the hook makes before every shell
// command: "defaults" with every place where agentgate puts it for the
// account (nothing to stat), "overrides" with the configuration and state
// directories chosen by XDG variables beside the project (the tests'
// sandboxes; every place stat'ed).
func BenchmarkCheckDirs(b *testing.B) {
	b.Run("defaults", func(b *testing.B) {
		def, _ := defaultPaths()
		if def.ConfigDir == "" {
			b.Skip("no account home")
		}
		AccountHome()
		b.ResetTimer()
		for b.Loop() {
			if err := CheckDirs(def, OwnPlace{}, "/nonexistent/project"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("overrides", func(b *testing.B) {
		root := b.TempDir()
		project := filepath.Join(root, "project")
		if err := os.MkdirAll(filepath.Join(project, ".git"), 0o700); err != nil {
			b.Fatal(err)
		}
		b.Setenv("XDG_CONFIG_HOME", filepath.Join(root, "config"))
		b.Setenv("XDG_STATE_HOME", filepath.Join(root, "state"))
		p := Paths{ConfigDir: filepath.Join(root, "config", "agentgate"), StateDir: filepath.Join(root, "state", "agentgate")}
		sock := OwnPlace{What: "bridge socket", Path: filepath.Join(root, "no-app.sock"), Variable: "AGENTGATE_SOCKET"}
		AccountHome()
		b.ResetTimer()
		for b.Loop() {
			if err := CheckDirs(p, sock, project); err != nil {
				b.Fatal(err)
			}
		}
	})
}
