package prefs

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// What agentgate decides comes from files in its own places: the allow-lists
// and settings in the configuration directory; project trust, grants, the
// audit log, agents.json and the login-environment cache in the state
// directory; the person's answers through the bridge socket. Those places
// come from environment variables, and an agent's environment can be set by
// files in a cloned repository (an MCP server's "env" in .mcp.json, a
// project .env that Gemini CLI loads, a project's agent settings). So a
// place that lies inside the project a process serves, or inside a place
// the commands agentgate lets run may write, is refused: whatever agentgate
// would read there could have been written by the repository or by an
// earlier command, and a rule in it would let commands run that no person
// allowed. docs/security.md states the rule.

// OwnPlace is one of agentgate's own places — the configuration directory,
// the state directory or the bridge socket — as a process resolved it.
type OwnPlace struct {
	// What names the place for a person ("state directory").
	What string
	// Path is where the place is (a directory; for the socket, the socket
	// file).
	Path string
	// Variable is the environment variable that chose Path, "" when no
	// variable did (a path given by a caller, or the default).
	Variable string
	// Stake says, for a person, what someone who chose Path could put
	// there ("allow-lists and settings agentgate would obey").
	Stake string
	// Default is true when Path is where agentgate puts the place for this
	// account when no variable says otherwise, derived from the account
	// database's home directory (not $HOME). Such a place is never refused:
	// no repository chose it, and runs never write it (docs/lifetime.md).
	Default bool
}

// DirError is CheckDirs' refusal: one of agentgate's own places lies where a
// repository or an earlier command could have written it.
type DirError struct {
	// Place is the refused place.
	Place OwnPlace
	// Within is the place it lies in: a project root, a directory runs may
	// write, or a run's temporary directory.
	Within string
	// Why says what Within is, as in "the project the agent works in".
	Why string
}

// Error says what was refused, why, and what to do.
func (e *DirError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "agentgate refuses its %s %s", e.Place.What, e.Place.Path)
	if e.Place.Variable != "" {
		fmt.Fprintf(&b, " (chosen by %s)", e.Place.Variable)
	}
	if e.Within == "" {
		fmt.Fprintf(&b, ": %s", e.Why)
	} else {
		fmt.Fprintf(&b, ": it lies inside %s, %s, so a repository or a command could put %s there", e.Within, e.Why, e.Place.Stake)
	}
	if e.Place.Variable != "" {
		fmt.Fprintf(&b, ". Unset %s or point it outside every project and every place commands may write (see where it is set: the agent's or MCP server's settings, a .env file, the repository's configuration), then start again", e.Place.Variable)
	} else {
		b.WriteString(". Use agentgate's default places (docs/security.md)")
	}
	return b.String()
}

// ConfigPlace and StatePlace return p's configuration and state directories
// as OwnPlaces: the variable that chose each (XDG_CONFIG_HOME,
// XDG_STATE_HOME, or HOME when it is not the account's home directory), and
// whether each is the account's default.
func (p Paths) ConfigPlace() OwnPlace {
	def, _ := defaultPaths()
	homeDef, _ := homeLayout(os.Getenv("HOME"))
	return OwnPlace{What: "configuration directory", Stake: "allow-lists and settings agentgate would obey", Path: p.ConfigDir, Default: p.ConfigDir != "" && p.ConfigDir == def.ConfigDir,
		Variable: chosenBy(p.ConfigDir, "XDG_CONFIG_HOME", homeDef.ConfigDir)}
}

// StatePlace: see ConfigPlace.
func (p Paths) StatePlace() OwnPlace {
	def, _ := defaultPaths()
	homeDef, _ := homeLayout(os.Getenv("HOME"))
	return OwnPlace{What: "state directory", Stake: "project trust, grants and a login environment agentgate would obey", Path: p.StateDir, Default: p.StateDir != "" && p.StateDir == def.StateDir,
		Variable: chosenBy(p.StateDir, "XDG_STATE_HOME", homeDef.StateDir)}
}

// chosenBy returns the environment variable that makes path: the XDG
// variable xdgVar when path is its value (expanded as github.com/adrg/xdg
// expands it: a leading ~ or $HOME is the home directory; relative values
// are ignored) joined with "agentgate"; else HOME when path is homeDefault
// (the place's layout under $HOME), $HOME is not the account's home and
// this is not Windows (whose places come from known folders); else "".
func chosenBy(path, xdgVar, homeDefault string) string {
	if path == "" {
		return ""
	}
	if v := xdgEnvDir(xdgVar); v != "" && filepath.Join(v, "agentgate") == path {
		return xdgVar
	}
	if home := os.Getenv("HOME"); runtime.GOOS != "windows" && homeDefault == path && filepath.Clean(home) != AccountHome() {
		return "HOME"
	}
	return ""
}

// xdgHome returns the home directory as github.com/adrg/xdg takes it
// outside Windows: $HOME, or / when it is unset or empty. On Windows it is
// $HOME as it is (xdg takes the profile's known folder there, which only
// knownFolderPlaces asks it for).
func xdgHome() string {
	home := os.Getenv("HOME")
	if home == "" && runtime.GOOS != "windows" {
		home = "/"
	}
	return home
}

// xdgEnvDir returns the value of the XDG variable name as github.com/adrg/xdg
// takes it (~ and $HOME expanded to xdgHome; "" when unset or not absolute).
func xdgEnvDir(name string) string {
	v := os.Getenv(name)
	if v == "" {
		return ""
	}
	if home := xdgHome(); home != "" {
		if rest, ok := strings.CutPrefix(v, "~"); ok {
			v = filepath.Join(home, rest)
		} else if rest, ok := strings.CutPrefix(v, "$HOME"); ok {
			v = filepath.Join(home, rest)
		}
	}
	if !filepath.IsAbs(v) {
		return ""
	}
	return v
}

// account caches AccountHome.
var account struct {
	once sync.Once
	home string
}

// AccountHome returns this user's home directory from the account database
// (os/user: getpwuid_r, or /etc/passwd where cgo is off), computed once
// per process, never from $HOME, which whoever started the process chose.
// Where the database does not know the user (a container's arbitrary uid;
// on Linux without cgo, an account only LDAP or another NSS source knows)
// os/user falls back to $HOME, and so does this. "" when none is known.
func AccountHome() string {
	account.once.Do(func() {
		if u, err := user.Current(); err == nil && filepath.IsAbs(u.HomeDir) {
			account.home = filepath.Clean(u.HomeDir)
		}
	})
	return account.home
}

// defaultPaths returns the configuration and state directories agentgate
// uses for this account when no variable says otherwise (the layout of
// DefaultPaths, homeLayout of AccountHome), and the cache directory of the
// same layout. On Windows the places are the known folders, which no
// variable changes: they are the xdg package's values while the XDG
// variables are unset, and unknown ("") otherwise.
func defaultPaths() (Paths, string) {
	if runtime.GOOS == "windows" {
		return knownFolderPlaces(), ""
	}
	return homeLayout(AccountHome())
}

// homeLayout returns where agentgate's configuration and state directories
// and the cache directory are under home when no XDG variable says
// otherwise, as github.com/adrg/xdg lays them out (macOS: Library; other
// Unix: .config, .local/state, .cache); nothing for "" or a relative home,
// and on Windows.
func homeLayout(home string) (Paths, string) {
	switch {
	case runtime.GOOS == "windows" || home == "" || !filepath.IsAbs(home):
		return Paths{}, ""
	case runtime.GOOS == "darwin":
		support := filepath.Join(home, "Library", "Application Support", "agentgate")
		return Paths{ConfigDir: support, StateDir: support}, filepath.Join(home, "Library", "Caches")
	default:
		return Paths{ConfigDir: filepath.Join(home, ".config", "agentgate"), StateDir: filepath.Join(home, ".local", "state", "agentgate")},
			filepath.Join(home, ".cache")
	}
}

// runTempPrefix begins the name of every run's private temporary directory,
// made directly in the system's temporary directory (package exec).
const runTempPrefix = "agentgate-run-"

// CheckDirs refuses agentgate's own places when a repository or an earlier
// command could have chosen what is in them. It checks p.ConfigDir,
// p.StateDir and socket (the bridge socket, as wire.SocketPlace describes
// it; a zero OwnPlace is skipped) for a process that serves projects (the
// project roots and working directories it acts for: an agent's hook, an
// MCP server, `agentgate run`; none for the desktop app), given as real
// paths, as ProjectRoot returns them. A place is refused, with a
// *DirError, when its path
//
//   - is not absolute (it would be taken relative to wherever the process
//     happens to run);
//   - lies inside one of projects;
//   - lies inside a place the commands agentgate lets run may write: the
//     user's cache directory ($XDG_CACHE_HOME or its default, and the
//     default of the account's home), each writable_paths entry (the
//     defaults, and those of the settings in p.ConfigDir and in the
//     account's default configuration directory; ~/ taken both as $HOME
//     and as the account's home);
//   - lies inside a run's private temporary directory (agentgate-run-*
//     directly in the system's temporary directory, $TMPDIR or /tmp).
//
// A place at its default (OwnPlace.Default) is never refused, nor is one
// no variable chose (a path the caller gave, as tests do): neither costs
// anything. A project that is the account's home directory or contains it
// (an agent started in ~ or /) is no boundary: every place of the person's
// own would lie in it, and runs are kept out of agentgate's places there
// by their confinement (exec.UserProtectedPaths). "Inside" includes the place itself and is decided on paths,
// each taken both as written (cleaned) and as the real path of its longest
// existing part (symbolic links resolved, the rest appended): so a
// symbolic link on the way that a command could later swap counts, and so
// does a symbolic link from elsewhere into a project or writable place.
// The projects are real paths already; the cache directories and the
// writable_paths entries are taken as written (a writable place spelled
// through a symbolic link of the person's own — ~/.cache leading to
// another disk — is matched only as written; docs/security.md). On macOS and Windows,
// whose file systems ignore case by default, paths compare without regard
// to case. On Linux a real path costs three system calls (open with
// O_PATH, readlink of /proc/self/fd/N, close), so the whole check costs a
// few dozen microseconds.
func CheckDirs(p Paths, socket OwnPlace, projects ...string) error {
	var check []OwnPlace
	for _, pl := range []OwnPlace{p.ConfigPlace(), p.StatePlace(), socket} {
		if pl.Path == "" || pl.Default || pl.Variable == "" {
			continue
		}
		if !filepath.IsAbs(pl.Path) {
			return &DirError{Place: pl, Why: "it is not an absolute path, so it would be taken relative to whatever directory agentgate was started in"}
		}
		pl.Path = filepath.Clean(pl.Path)
		check = append(check, pl)
	}
	if len(check) == 0 {
		return nil
	}
	r := resolver{}
	// Each place as written and as its real path.
	spellings := make([][]string, len(check))
	for i, pl := range check {
		spellings[i] = r.both(pl.Path)
	}
	// inside refuses the first place that lies in base joined with rest
	// (base "" for an absolute rest), without joining them unless it does.
	inside := func(base, rest, why string) error {
		for i, pl := range check {
			for _, sp := range spellings[i] {
				if withinJoined(base, rest, sp) {
					within := rest
					if base != "" {
						within = filepath.Join(base, rest)
					}
					return &DirError{Place: pl, Within: within, Why: why}
				}
			}
		}
		return nil
	}
	home := AccountHome()
	for _, proj := range projects {
		if proj != "" && filepath.IsAbs(proj) && !(home != "" && withinPath(filepath.Clean(proj), home)) {
			if err := inside("", filepath.Clean(proj), "the project agentgate serves here"); err != nil {
				return err
			}
		}
	}
	if err := runWritable(p, func(base, rest string) error {
		return inside(base, rest, "where the commands agentgate lets run may write")
	}); err != nil {
		return err
	}
	for i, pl := range check {
		for _, sp := range spellings[i] {
			if dir := r.runTemp(sp); dir != "" {
				return &DirError{Place: pl, Within: dir, Why: "a command's private temporary directory"}
			}
		}
	}
	return nil
}

// resolver finds real paths, each once per check.
type resolver struct {
	// seen maps a path as written to its real path.
	seen map[string]string
}

// real returns the real path of path (absolute, clean): its longest
// existing part with symbolic links resolved (realPath), the rest
// appended.
func (r *resolver) real(path string) string {
	if got, ok := r.seen[path]; ok {
		return got
	}
	got := realPath(path)
	if r.seen == nil {
		r.seen = map[string]string{}
	}
	r.seen[path] = got
	return got
}

// both returns path as written, and its real path when that differs.
func (r *resolver) both(path string) []string {
	if real := r.real(path); real != path {
		return []string{path, real}
	}
	return []string{path}
}

// runTemp returns the run's temporary directory path lies in — a
// component beginning agentgate-run- whose parent is $TMPDIR or /tmp, as
// written or resolved — or "".
func (r *resolver) runTemp(path string) string {
	for dir := path; ; {
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		if strings.HasPrefix(filepath.Base(dir), runTempPrefix) {
			for _, root := range tempRoots() {
				if samePath(parent, root) || samePath(parent, r.real(root)) {
					return dir
				}
			}
		}
		dir = parent
	}
}

// tempRoots returns where runs' temporary directories are made: $TMPDIR
// (os.TempDir) and, on Unix, /tmp.
func tempRoots() []string {
	roots := []string{filepath.Clean(os.TempDir())}
	if runtime.GOOS != "windows" && roots[0] != "/tmp" {
		roots = append(roots, "/tmp")
	}
	return roots
}

// runWritable calls visit for each place outside any project that the
// commands agentgate runs may write (docs/lifetime.md), as written, until
// visit returns an error, which it returns: the cache directories ($XDG_CACHE_HOME or
// its default, and the account's default), then each writable_paths entry
// (DefaultWritablePaths and the entries of the settings in p.ConfigDir
// and in the account's default configuration directory). An absolute
// entry is visited as ("", entry); one that starts with ~/ as (home,
// rest) for the account's home and for $HOME.
func runWritable(p Paths, visit func(base, rest string) error) error {
	def, defCache := defaultPaths()
	if cache, err := os.UserCacheDir(); err == nil && filepath.IsAbs(cache) {
		if err := visit("", filepath.Clean(cache)); err != nil {
			return err
		}
	}
	if defCache != "" {
		if err := visit("", defCache); err != nil {
			return err
		}
	}
	homes := make([]string, 0, 2)
	for _, h := range []string{AccountHome(), os.Getenv("HOME")} {
		if h != "" && filepath.IsAbs(h) && !slices.Contains(homes, filepath.Clean(h)) {
			homes = append(homes, filepath.Clean(h))
		}
	}
	each := func(entries []string) error {
		for _, e := range entries {
			rest, tilde := strings.CutPrefix(e, "~/")
			if !tilde {
				if filepath.IsAbs(e) {
					if err := visit("", filepath.Clean(e)); err != nil {
						return err
					}
				}
				continue
			}
			rest = filepath.Clean(rest)
			if rest == ".." || strings.HasPrefix(rest, ".."+string(filepath.Separator)) || filepath.IsAbs(rest) {
				continue // not below the home directory: not an entry exec takes either
			}
			for _, h := range homes {
				if err := visit(h, rest); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := each(DefaultWritablePaths); err != nil {
		return err
	}
	for i, dir := range []string{p.ConfigDir, def.ConfigDir} {
		if dir == "" || (i == 1 && dir == p.ConfigDir) {
			continue
		}
		// A settings file that cannot be read adds nothing: the app
		// refuses to start with it, and the defaults are checked anyway.
		if s, err := LoadSettings(Paths{ConfigDir: dir}); err == nil {
			if err := each(s.WritablePaths); err != nil {
				return err
			}
		}
	}
	return nil
}

// foldCase is true where file systems ignore case by default.
const foldCase = runtime.GOOS == "darwin" || runtime.GOOS == "windows"

// withinJoined reports whether path lies in base joined with rest (base ""
// for an absolute rest): withinPath without building the joined path.
func withinJoined(base, rest, path string) bool {
	if base == "" {
		return withinPath(rest, path)
	}
	if base == string(filepath.Separator) {
		return withinPath(base+rest, path)
	}
	n := len(base)
	if len(path) <= n || !samePath(path[:n], base) || path[n] != filepath.Separator {
		return false
	}
	return withinPath(rest, path[n+1:])
}

// withinPath reports whether path is dir or lies below it, comparing
// cleaned paths as written (on macOS and Windows without regard to case);
// false for an empty dir.
func withinPath(dir, path string) bool {
	if dir == "" || len(path) < len(dir) || !samePath(path[:len(dir)], dir) {
		return false
	}
	return len(path) == len(dir) || path[len(dir)] == filepath.Separator || strings.HasSuffix(dir, string(filepath.Separator))
}

// samePath compares two paths as the file system would (see withinPath).
func samePath(a, b string) bool {
	if foldCase {
		return strings.EqualFold(a, b)
	}
	return a == b
}

// evalExisting returns path with the symbolic links of its longest
// existing prefix resolved (filepath.EvalSymlinks) and the rest appended;
// path itself when nothing of it resolves.
func evalExisting(path string) string {
	p, tail := path, ""
	for {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(real, tail)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return path
		}
		tail = filepath.Join(filepath.Base(p), tail)
		p = parent
	}
}
