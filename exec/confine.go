package exec

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/agentgate/agentgate/exec/procspec"
	"github.com/agentgate/agentgate/exec/runinfo"
)

// Write confinement (docs/lifetime.md): on Linux every run and
// all its descendants write only inside the project, a private per-run
// temporary directory, the user's cache directory, the usual devices and
// the writable_paths setting. This file decides what is writable,
// protected and hidden for a run; confine_linux.go turns that into a
// Landlock ruleset and namespaces applied by the confinement shim.

// Network settings.
const (
	// NetworkAny leaves the network alone (the default).
	NetworkAny = "any"
	// NetworkNone cuts a run off the network: an empty network namespace
	// where one can be made, else Landlock's TCP rules (TCP only).
	NetworkNone = "none"
)

// ConfineSettings are the person's settings that shape write confinement,
// read for every run.
type ConfineSettings struct {
	// WritablePaths are paths a run may write besides the project, its
	// temporary directory and the cache directory; "~/" at the start means
	// the home directory. A path missing when a run starts is not
	// writable in that run.
	WritablePaths []string
	// Network is NetworkAny or NetworkNone ("" is NetworkAny).
	Network string
	// Require refuses, rather than runs unconfined, a run whose writes
	// cannot be confined (no Landlock, no shim, not Linux).
	Require bool
}

// ProjectProtectedPaths are the files and directories inside a project
// that steer agents and tools, relative to the project root. Writes inside
// the project are allowed, so these are bound read-only in the run's mount
// namespace where one can be made, and checked before and after every run
// in any case (a missing one may be created).
var ProjectProtectedPaths = []string{".agentgate", ".claude", ".gemini", ".codex", ".git/config", ".git/hooks", ".mcp.json"}

// UserProtectedPaths returns what no run may write whatever is writable:
// the agents' user-level settings in home, and the directories in more
// (agentgate's configuration and state). A writable path that contains one
// of them is kept only where a mount namespace binds it read-only.
func UserProtectedPaths(home string, more ...string) []string {
	paths := []string{
		filepath.Join(home, ".claude"), filepath.Join(home, ".claude.json"),
		filepath.Join(home, ".gemini"), filepath.Join(home, ".codex"),
	}
	return append(paths, more...)
}

// HiddenFromRuns returns the sockets a run should not reach, where its
// mount namespace can cover them: the directory of agentgate's own bridge
// socket (socket), the D-Bus session bus of this environment and the
// systemd user manager's directory, through which a command could ask for
// processes outside its tree (`systemd-run --user`).
func HiddenFromRuns(socket string) []string {
	var hide []string
	if socket != "" {
		hide = append(hide, filepath.Dir(socket))
	}
	if addr := os.Getenv("DBUS_SESSION_BUS_ADDRESS"); addr != "" {
		for _, part := range strings.Split(strings.TrimPrefix(addr, "unix:"), ",") {
			if p, ok := strings.CutPrefix(part, "path="); ok && filepath.IsAbs(p) {
				hide = append(hide, p)
			}
		}
	}
	if rt := os.Getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(rt) {
		hide = append(hide, filepath.Join(rt, "bus"), filepath.Join(rt, "systemd"))
	}
	return hide
}

// ConfineConfig configures write confinement (Config.Confine).
type ConfineConfig struct {
	// Off starts runs without write confinement, scoping or the shim, as
	// before confinement existed; every record says so. For the
	// unconfined executor's benchmarks and tests.
	Off bool
	// Shim is the agentgate-shim executable; "" means agentgate-shim in
	// the running executable's directory.
	Shim string
	// Settings returns the settings in force, read for every run; nil
	// means DefaultConfineSettings.
	Settings func() ConfineSettings
	// Protect lists absolute paths no run may write however the writable
	// paths are set (UserProtectedPaths).
	Protect []string
	// Hide lists absolute paths covered in the run's mount namespace
	// (HiddenFromRuns).
	Hide []string
	// Home and CacheDir are the person's home and cache directories; ""
	// means os.UserHomeDir and os.UserCacheDir.
	Home, CacheDir string
}

// confinePlan is how one run is confined.
type confinePlan struct {
	// info is what the record, audit and UI show.
	info runinfo.Confinement
	// sandbox is what the shim applies; nil starts the run without it.
	sandbox *procspec.Sandbox
	// tmpDir is the run's private TMPDIR, removed after the run; "" when
	// the run has none.
	tmpDir string
	// checked are the protected paths fingerprinted before and after.
	checked []string
	// sealed are those of checked that the run's mount namespace binds
	// read-only (directories and files, not symlinks) while its writes are
	// confined (so it cannot unmount them): nothing beneath them can change
	// during the run, so only their own identity is compared — a rename or
	// removal of a parent is what could still replace them.
	sealed map[string]bool
	// before holds their fingerprints at the start.
	before map[string]string
}

// release closes what the plan holds open for the start (the ruleset);
// the supervisor has its own copies by then.
func (p *confinePlan) release() {
	if p.sandbox != nil && p.sandbox.Ruleset != nil {
		p.sandbox.Ruleset.Close()
	}
}

// finish ends the plan once the run's tree is gone (or it never started):
// it hands the run's TMPDIR to tmps for removal and returns what changed
// among the protected paths since the start (diffProtected, relative to
// root). A nil plan has nothing to finish.
func (p *confinePlan) finish(root string, tmps *tmpDirs) []string {
	if p == nil {
		return nil
	}
	var changed []string
	if p.before != nil {
		changed = diffProtected(root, p.before, fingerprintProtected(p.checked, p.sealed))
	}
	if p.tmpDir != "" {
		tmps.remove(p.tmpDir)
	}
	return changed
}

// tmpDirs hands out the runs' private temporary directories and takes them
// back after the runs. Making and removing a directory costs milliseconds
// on some file systems (ext4 with many recently deleted inodes, or mounted
// with discard), so a directory a run left empty, still private and still
// the very directory made, is kept for a later run (at most
// maxIdleTmpDirs); one left with anything in it is removed, in the
// background. When none is kept, one spare is made ahead, in the
// background. flush waits for the removals and removes the kept ones and
// the spare. Each directory is made by os.MkdirTemp: a fresh random name,
// mode 0700, so it is private and empty when a run gets it. A run gets a
// directory only once the run before it in that directory has ended, tree
// and all.
type tmpDirs struct {
	// mu guards spare, making and idle.
	mu sync.Mutex
	// spare is a directory made ahead, or "".
	spare tmpDir
	// making is true while the spare is being made.
	making bool
	// idle are the directories kept for later runs, empty and private.
	idle []tmpDir
	// made are the directories made and not removed, with their
	// identities; guarded by mu.
	made []tmpDir
	// pending counts removals, returns and spares in progress.
	pending sync.WaitGroup
}

// tmpDir is one of the runs' temporary directories and its identity.
type tmpDir struct {
	// path is the directory; "" for none.
	path string
	// id is its device and inode when it was made.
	id procspec.FileID
}

// tmpPattern names the runs' temporary directories in os.TempDir().
const tmpPattern = "agentgate-run-"

// maxIdleTmpDirs bounds how many emptied directories are kept.
const maxIdleTmpDirs = 8

// makeTmpDir makes a fresh private directory and notes its identity.
func makeTmpDir() (tmpDir, error) {
	dir, err := os.MkdirTemp("", tmpPattern)
	if err != nil {
		return tmpDir{}, err
	}
	id, err := procspec.StatFileID(dir)
	if err != nil {
		os.Remove(dir)
		return tmpDir{}, err
	}
	return tmpDir{path: dir, id: id}, nil
}

// take returns a private, empty directory for a run: a kept one, the
// spare, or a new one; it starts making the next spare when none is kept.
func (t *tmpDirs) take() (string, error) {
	t.mu.Lock()
	if n := len(t.idle); n > 0 {
		d := t.idle[n-1]
		t.idle = t.idle[:n-1]
		t.mu.Unlock()
		return d.path, nil
	}
	dir := t.spare
	t.spare = tmpDir{}
	if !t.making {
		t.making = true
		t.pending.Add(1)
		go t.makeSpare()
	}
	t.mu.Unlock()
	if dir.path != "" {
		return dir.path, nil
	}
	d, err := makeTmpDir()
	if err != nil {
		return "", err
	}
	t.mu.Lock()
	t.made = append(t.made, d)
	t.mu.Unlock()
	return d.path, nil
}

// makeSpare makes the spare directory (a failure leaves none: take makes
// one then, and reports the error).
func (t *tmpDirs) makeSpare() {
	defer t.pending.Done()
	d, err := makeTmpDir()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.making = false
	if err != nil {
		return
	}
	t.made = append(t.made, d)
	if t.spare.path != "" {
		os.Remove(d.path)
		return
	}
	t.spare = d
}

// remove takes a run's directory back once its run has ended ("" is
// none), in the background: kept for a later run when it is still the
// directory made (same device and inode, a directory, not a symlink),
// mode 0700 and empty; removed otherwise.
func (t *tmpDirs) remove(dir string) {
	if dir == "" {
		return
	}
	t.pending.Add(1)
	go func() {
		defer t.pending.Done()
		if d, ok := t.reusable(dir); ok {
			t.mu.Lock()
			if len(t.idle) < maxIdleTmpDirs {
				t.idle = append(t.idle, d)
				t.mu.Unlock()
				return
			}
			t.mu.Unlock()
		}
		t.forget(dir)
		removeTree(dir)
	}()
}

// reusable reports whether dir, handed back by a run, may serve another:
// it is one this tmpDirs made, still that directory, private and empty.
func (t *tmpDirs) reusable(dir string) (tmpDir, bool) {
	t.mu.Lock()
	i := slices.IndexFunc(t.made, func(d tmpDir) bool { return d.path == dir })
	var d tmpDir
	if i >= 0 {
		d = t.made[i]
	}
	t.mu.Unlock()
	if i < 0 {
		return tmpDir{}, false
	}
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		return tmpDir{}, false
	}
	if now, err := procspec.StatFileID(dir); err != nil || !now.SameFile(d.id) {
		return tmpDir{}, false
	}
	f, err := os.Open(dir)
	if err != nil {
		return tmpDir{}, false
	}
	defer f.Close()
	if names, _ := f.Readdirnames(1); len(names) > 0 {
		return tmpDir{}, false
	}
	return d, true
}

// forget drops dir from the directories made.
func (t *tmpDirs) forget(dir string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.made = slices.DeleteFunc(t.made, func(d tmpDir) bool { return d.path == dir })
}

// flush waits until every removal (and a spare being made) is done, and
// removes the kept directories and the spare: nothing of the runs'
// temporary directories remains.
func (t *tmpDirs) flush() {
	t.pending.Wait()
	t.mu.Lock()
	keep := append(t.idle, t.spare)
	t.idle, t.spare = nil, tmpDir{}
	t.mu.Unlock()
	for _, d := range keep {
		if d.path != "" {
			t.forget(d.path)
			os.Remove(d.path)
		}
	}
}

// removeTree removes dir and everything in it, making directories the run
// left unreadable or unwritable accessible first when a plain removal
// fails. Errors are dropped: a leftover temporary directory is harmless.
func removeTree(dir string) {
	if os.RemoveAll(dir) == nil {
		return
	}
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if d != nil && d.IsDir() {
			_ = os.Chmod(path, 0o700)
		}
		return nil
	})
	_ = os.RemoveAll(dir)
}

// writablePath is one path a run may write, with what a person calls it.
type writablePath struct {
	// label is "project", "temp", "cache" or the setting's entry.
	label string
	// path is absolute and clean.
	path string
}

// confineInputs is everything the plan is made from, so that the policy is
// a pure function (planWrites) tested on its own.
type confineInputs struct {
	// root is the project root.
	root string
	// tmp is the run's temporary directory.
	tmp string
	// cache and home are the person's directories.
	cache, home string
	// settings are the settings in force.
	settings ConfineSettings
	// protect are the user-level protected paths.
	protect []string
	// mountNS is true when the run gets a mount namespace.
	mountNS bool
}

// writePlan is the policy's answer.
type writePlan struct {
	// writable are the directories granted.
	writable []writablePath
	// readOnly are protected paths inside writable ones, to bind
	// read-only (only with a mount namespace).
	readOnly []string
	// checked are the project's protected paths, fingerprinted before and
	// after the run.
	checked []string
	// dropped says which writable paths were left out, and why.
	dropped []string
}

// planWrites decides what a run may write. The project, temp and cache
// come first, then the setting's entries ("~/" expanded; relative ones are
// dropped). A git worktree's or submodule's git directories outside the
// project are writable too (git writes its objects and index there), their
// config and hooks protected. A writable path inside a user-protected path
// is dropped; one that contains a user-protected path is kept with that
// path bound read-only when there is a mount namespace, else dropped.
func planWrites(in confineInputs) writePlan {
	var p writePlan
	// isWithin compares clean paths: the cache and home directories and
	// agentgate's own directories may come from the environment as given.
	in.cache, in.home = cleanAbs(in.cache), cleanAbs(in.home)
	protect := make([]string, len(in.protect))
	for i, prot := range in.protect {
		protect[i] = filepath.Clean(prot)
	}
	in.protect = protect
	candidates := []writablePath{{"project", in.root}, {"temp", in.tmp}, {"cache", in.cache}}
	gitDirs := gitDirsOutside(in.root)
	for _, gitDir := range gitDirs {
		candidates = append(candidates, writablePath{"git", gitDir})
	}
	projectProtected := protectedInProject(in.root, gitDirs)
	for _, entry := range in.settings.WritablePaths {
		path := entry
		if rest, ok := strings.CutPrefix(entry, "~/"); ok && in.home != "" {
			path = filepath.Join(in.home, rest)
		}
		if !filepath.IsAbs(path) {
			p.dropped = append(p.dropped, entry+" (not an absolute path)")
			continue
		}
		candidates = append(candidates, writablePath{entry, filepath.Clean(path)})
	}
	for _, w := range candidates {
		if w.path == "" {
			continue
		}
		why := protectedConflict(w.path, in.protect, in.mountNS)
		if why == "" && w.label == "cache" {
			why = cacheConflict(w.path, in.home)
		}
		if why != "" {
			p.dropped = append(p.dropped, w.label+" ("+why+")")
			continue
		}
		p.writable = append(p.writable, w)
		if in.mountNS {
			for _, prot := range in.protect {
				if isWithin(w.path, prot) && !slices.Contains(p.readOnly, prot) {
					p.readOnly = append(p.readOnly, prot)
				}
			}
		}
	}
	p.checked = projectProtected
	if in.mountNS {
		p.readOnly = append(p.readOnly, projectProtected...)
	}
	return p
}

// cleanAbs is filepath.Clean of an absolute path, and "" for anything else
// (an unset or relative cache or home directory names nothing).
func cleanAbs(path string) string {
	if !filepath.IsAbs(path) {
		return ""
	}
	return filepath.Clean(path)
}

// homeStartupPlaces are the places in the home directory, relative to
// it, from which programs are started or trusted later — the login
// shell's files are directly in home, autostart entries and user services
// in .config, launchers in .local/share, executables in .local/bin and
// bin, keys in .ssh and .gnupg. A run writing there would outlive its
// bounds at the next login or command.
var homeStartupPlaces = []string{".config", ".local/bin", ".local/share", ".local/state", "bin", ".ssh", ".gnupg"}

// cacheConflict says why cache, the host's cache directory, may not be
// writable for runs, or "". The cache directory comes from XDG_CACHE_HOME
// when that is set, which whoever started the host chose (for `agentgate
// run`, possibly the agent): it is granted only when it is no home
// directory, holds none, and holds none of homeStartupPlaces.
func cacheConflict(cache, home string) string {
	if home == "" {
		return ""
	}
	if isWithin(cache, home) {
		return "it is or contains the home directory, so it is not a cache directory"
	}
	for _, rel := range homeStartupPlaces {
		if place := filepath.Join(home, filepath.FromSlash(rel)); isWithin(cache, place) {
			return "it contains " + place + ", from which programs start later"
		}
	}
	return ""
}

// protectedConflict says why w may not be writable, or "": it lies inside
// a protected path, or contains one and no mount namespace can bind that
// read-only.
func protectedConflict(w string, protect []string, mountNS bool) string {
	for _, prot := range protect {
		switch {
		case isWithin(prot, w):
			return "inside " + prot + ", which runs never write"
		case isWithin(w, prot) && !mountNS:
			return "it contains " + prot + ", which runs never write, and no mount namespace can keep that read-only"
		}
	}
	return ""
}

// isWithin reports whether path is dir or below it. Both must be absolute
// and clean (filepath.Clean); they are compared byte for byte, element by
// element — not through filepath.Rel, whose two Cleans and allocations,
// for every writable path against every protected one, were most of a
// confined run's planning (about 120 µs of 340 µs with the default
// writable paths).
func isWithin(dir, path string) bool {
	rest, ok := strings.CutPrefix(path, dir)
	return ok && (rest == "" || rest[0] == filepath.Separator || strings.HasSuffix(dir, string(filepath.Separator)))
}

// protectedInProject returns the files that steer agents and tools in the
// project root (ProjectProtectedPaths) and, of its git directories outside
// it (gitDirsOutside), the config and hooks: what each run's start and end
// are compared on (ProtectedChanged).
func protectedInProject(root string, gitDirs []string) []string {
	paths := make([]string, 0, len(ProjectProtectedPaths)+3*len(gitDirs))
	for _, rel := range ProjectProtectedPaths {
		paths = append(paths, filepath.Join(root, rel))
	}
	for _, gitDir := range gitDirs {
		paths = append(paths, filepath.Join(gitDir, "config"), filepath.Join(gitDir, "hooks"), filepath.Join(gitDir, "config.worktree"))
	}
	return paths
}

// gitDirsOutside returns, for a project whose .git is a file (a git
// worktree or submodule), the git directory it names and its common
// directory, when they lie outside the project; nil otherwise.
func gitDirsOutside(root string) []string {
	// One stat tells the usual case, a directory, where reading would
	// cost an open, a stat, a failed read and a close on every run.
	dotGit := filepath.Join(root, ".git")
	if fi, err := os.Stat(dotGit); err != nil || fi.IsDir() {
		return nil // a directory (or no repository): inside the project
	}
	b, err := os.ReadFile(dotGit)
	if err != nil {
		return nil
	}
	rest, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return nil
	}
	gitDir := strings.TrimSpace(rest)
	if !filepath.IsAbs(gitDir) {
		gitDir = filepath.Join(root, gitDir)
	}
	gitDir = filepath.Clean(gitDir)
	dirs := []string{gitDir}
	if c, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		common := strings.TrimSpace(string(c))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitDir, common)
		}
		dirs = append(dirs, filepath.Clean(common))
	}
	var out []string
	for _, d := range dirs {
		if !isWithin(root, d) && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// maxProtectedEntries bounds the files fingerprinted under one protected
// directory.
const maxProtectedEntries = 2000

// maxProtectedHash bounds the bytes hashed of one protected file; past it
// size and modification time stand in.
const maxProtectedHash = 1 << 20

// fingerprintProtected returns a fingerprint of every file under paths
// (each a file, a directory walked without following symlinks, or missing),
// keyed by path; a missing path is "absent". A directory with more than
// maxProtectedEntries entries is cut short and says so under its own path.
// A path in sealed (bound read-only for the run) that is not a symlink is
// fingerprinted by its type and identity alone.
func fingerprintProtected(paths []string, sealed map[string]bool) map[string]string {
	fp := make(map[string]string)
	for _, root := range paths {
		fi, err := os.Lstat(root)
		if err != nil {
			fp[root] = "absent"
			continue
		}
		if sealed[root] && fi.Mode()&fs.ModeSymlink == 0 {
			if id, ok := procspec.FileIDFromInfo(fi); ok {
				fp[root] = fmt.Sprintf("sealed %v device %d inode %d", fi.Mode().Type(), id.Dev, id.Ino)
				continue
			}
		}
		if !fi.IsDir() {
			fp[root] = fingerprintEntry(root, fi)
			continue
		}
		n := 0
		_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if n++; n > maxProtectedEntries {
				fp[root] = "dir (more than 2000 entries: not all checked)"
				return filepath.SkipAll
			}
			if err != nil {
				fp[path] = "unreadable"
				return nil
			}
			if fi, err := d.Info(); err == nil {
				fp[path] = fingerprintEntry(path, fi)
			}
			return nil
		})
	}
	return fp
}

// fingerprintEntry describes one file system entry: its type and, for a
// symlink, its target; for a regular file, its content hash (or size and
// modification time past maxProtectedHash) and permission bits.
func fingerprintEntry(path string, fi fs.FileInfo) string {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		target, _ := os.Readlink(path)
		return "symlink " + target
	case fi.IsDir():
		return "dir"
	case !fi.Mode().IsRegular():
		return "special " + fi.Mode().String()
	case fi.Size() > maxProtectedHash:
		return fmt.Sprintf("file %v size %d mtime %d", fi.Mode().Perm(), fi.Size(), fi.ModTime().UnixNano())
	}
	sum, ok := protectedHashes.sum(path, fi)
	if !ok {
		return "unreadable"
	}
	return fmt.Sprintf("file %v %s", fi.Mode().Perm(), sum)
}

// hashCache remembers the content hash of protected files by their
// identity (device, inode, size, modification and change time), so that a
// file not changed since it was hashed is not read again before and after
// every run. The change time cannot be set by a user, so a file with the
// same identity has the same content — unless it was changed again within
// the file system's timestamp granularity of its last change (git's
// "racily clean" case): a hash taken less than racyWindow after the file's
// change time is not trusted. Sub-second timestamps (ext4, btrfs, xfs,
// APFS: the change time has a fraction) move in steps of a clock tick at
// most, so racyWindow is fineRacyWindow there; a change time on a whole
// second may come from a file system that keeps seconds (or two, FAT),
// and gets racyWindow.
type hashCache struct {
	// mu guards sums.
	mu sync.Mutex
	// sums maps a path to its last hash and the identity it had.
	sums map[string]cachedHash
}

// cachedHash is one file's hash with the identity it was taken at.
type cachedHash struct {
	// id is the file's identity when it was hashed.
	id procspec.FileID
	// trusted is set when the hash was taken racyWindow or more after the
	// file's change time.
	trusted bool
	// sum is the hex SHA-256 of the content.
	sum string
}

// racyWindow is how long after a file's change time its hash is trusted
// for a later identical identity, and fineRacyWindow the same for a change
// time with a fraction of a second (variables for tests).
var (
	racyWindow     = 2 * time.Second
	fineRacyWindow = 50 * time.Millisecond
)

// trustedHash reports whether a hash taken now of a file whose change time
// is ctimeNS may stand for the same identity later.
func trustedHash(ctimeNS int64) bool {
	window := racyWindow
	if ctimeNS%int64(time.Second) != 0 {
		window = fineRacyWindow
	}
	return time.Since(time.Unix(0, ctimeNS)) >= window
}

// hashBuffers are the copy buffers of hashCache.sum.
var hashBuffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// maxCachedHashes bounds the cache; it is cleared when full.
const maxCachedHashes = 4096

// protectedHashes is the process's cache of protected files' hashes.
var protectedHashes hashCache

// sum returns the hex SHA-256 of the regular file at path, whose Lstat is
// fi, from the cache when its identity (from fi) is the one hashed; ok is
// false when it cannot be read.
func (c *hashCache) sum(path string, fi fs.FileInfo) (string, bool) {
	id, idOK := procspec.FileIDFromInfo(fi)
	c.mu.Lock()
	e, hit := c.sums[path]
	c.mu.Unlock()
	if idOK && hit && e.trusted && e.id == id {
		return e.sum, true
	}
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	h := sha256.New()
	buf := hashBuffers.Get().(*[]byte)
	_, err = io.CopyBuffer(struct{ io.Writer }{h}, struct{ io.Reader }{f}, *buf)
	hashBuffers.Put(buf)
	if err != nil {
		return "", false
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if idOK {
		after, err := procspec.FileIDOf(f)
		if err == nil && after == id {
			c.mu.Lock()
			if c.sums == nil || len(c.sums) >= maxCachedHashes {
				c.sums = make(map[string]cachedHash)
			}
			c.sums[path] = cachedHash{id: id, sum: sum, trusted: trustedHash(id.CtimeNS)}
			c.mu.Unlock()
		}
	}
	return sum, true
}

// diffProtected lists what changed between two fingerprints, for a
// person: "created .claude/settings.json", "changed .git/config",
// "removed .mcp.json", with paths relative to root where they lie inside
// it. Sorted.
func diffProtected(root string, before, after map[string]string) []string {
	var out []string
	show := func(path string) string {
		if rel, ok := within(root, path); ok {
			return filepath.ToSlash(rel)
		}
		return path
	}
	for path, a := range after {
		b, had := before[path]
		switch {
		case (!had || b == "absent") && a != "absent":
			out = append(out, "created "+show(path))
		case had && a == "absent" && b != "absent":
			out = append(out, "removed "+show(path))
		case had && a != b:
			out = append(out, "changed "+show(path))
		}
	}
	for path, b := range before {
		if _, has := after[path]; !has && b != "absent" {
			out = append(out, "removed "+show(path))
		}
	}
	sort.Strings(out)
	return out
}

// withTMPDIR returns env with TMPDIR set to dir (replacing any).
func withTMPDIR(env []string, dir string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "TMPDIR=") {
			out = append(out, kv)
		}
	}
	return append(out, "TMPDIR="+dir)
}

// unconfinedPlan is the plan of a run whose writes are not confined, with
// why; the settings' network choice is recorded as it is (not applied).
func unconfinedPlan(why, network string) *confinePlan {
	if network == "" {
		network = NetworkAny
	}
	return &confinePlan{info: runinfo.Confinement{Unconfined: why, Network: network}}
}

// unconfinedCheckedPlan is unconfinedPlan for a run whose writes cannot be
// confined here: nothing stops it from writing the files that steer agents
// and tools in root, so they are compared before and after it, as for a
// confined run without a mount namespace (Record.ProtectedChanged).
func unconfinedCheckedPlan(root, why, network string) *confinePlan {
	p := unconfinedPlan(why, network)
	p.info.Protected = "checked"
	p.checked = protectedInProject(root, gitDirsOutside(root))
	return p
}

// confinementUnavailable is the refusal of a run that require_confinement
// keeps from running unconfined.
func confinementUnavailable(why string) *Refusal {
	return refusef(CodeConfinementUnavailable, "write confinement is required (require_confinement) but not available: %s; nothing ran. "+
		"The person must fix this (docs/lifetime.md) or turn require_confinement off", why)
}

// confineOS names the reason writes are unconfined off Linux.
var confineOS = "write confinement is Linux-only (" + runtime.GOOS + ")"

// DefaultConfineSettings are the settings when none are given: no writable
// paths besides the project, temp and cache, network any, not required.
// (The person's defaults, with the toolchains' caches, are prefs'.)
func DefaultConfineSettings() ConfineSettings {
	return ConfineSettings{Network: NetworkAny}
}

// settings returns the settings in force for a run: cc.Settings' answer,
// or DefaultConfineSettings when it is nil.
func (cc ConfineConfig) settings() ConfineSettings {
	if cc.Settings != nil {
		return cc.Settings()
	}
	return DefaultConfineSettings()
}

// confineCaps returns what this machine offers for confinement, probed on
// first use.
func (e *Executor) confineCaps() *confineCaps {
	e.capsOnce.Do(func() { e.caps = probeConfinement(e.cfg.Confine) })
	return e.caps
}

// Confinement returns how cmd would be confined if it started now, with
// meta's one-time approval without write confinement or without: what the
// card and the terminal prompt show before anyone decides. Nothing is made
// for it. When the run would be refused for want of confinement
// (require_confinement, or network none that cannot be applied), Unconfined
// says so. The run's record keeps what was applied.
func (e *Executor) Confinement(cmd Command, meta Meta) runinfo.Confinement {
	plan, ref := e.confine(cmd, meta, true)
	if ref != nil {
		return runinfo.Confinement{Unconfined: "it would be refused: " + ref.Message}
	}
	return plan.info
}
