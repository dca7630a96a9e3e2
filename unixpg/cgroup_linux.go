//go:build linux

package unixpg

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Per-run cgroups (cgroup v2): where the host may create cgroups — as root,
// or in a subtree delegated to the user (a systemd scope with Delegate=yes,
// see docs/lifetime.md) — each run's target is started straight into a
// cgroup of its own (clone3 CLONE_INTO_CGROUP: no moment outside it), so
// that everything it forks, however it detaches, stays in it; writing "1"
// to its cgroup.kill SIGKILLs all of it at once. The supervisor's sweep
// stays the everyday mechanism; the cgroup ends what escaped the sweep
// (a killed or tampered supervisor) and what a dead host left.

// cgroupPrefix names the run cgroups: agentgate-<host pid>-<random>.
const cgroupPrefix = "agentgate-"

// cgroupState is where run cgroups are made, decided once.
var cgroupState struct {
	// mu guards the other fields.
	mu sync.Mutex
	// decided is true once base and why are final.
	decided bool
	// base is the cgroup v2 directory run cgroups are made in; "" when
	// cgroups are not usable here.
	base string
	// why says why they are not.
	why string
	// xattrs is set when user extended attributes can be set on cgroups
	// in base (what direct runs need).
	xattrs bool
}

// UseCgroupBase makes dir (a cgroup v2 directory the host may create
// cgroups in, e.g. a delegated systemd scope's) the parent of every later
// run's cgroup, instead of the host's own cgroup; "" turns per-run cgroups
// off. A dir where no cgroup can be made turns them off too, and
// CgroupBase says why.
func UseCgroupBase(dir string) {
	cgroupState.mu.Lock()
	defer cgroupState.mu.Unlock()
	cgroupState.decided = true
	cgroupState.base, cgroupState.why, cgroupState.xattrs = dir, "", false
	if dir == "" {
		cgroupState.why = "turned off"
	} else if why := probeCgroupBase(dir); why != "" {
		cgroupState.base, cgroupState.why = "", why
	}
}

// cgroupXattrs reports whether run cgroups take user extended attributes
// (decided with the base).
func cgroupXattrs() bool {
	CgroupBase()
	cgroupState.mu.Lock()
	defer cgroupState.mu.Unlock()
	return cgroupState.xattrs
}

// CgroupBase returns the directory run cgroups are made in, or "" and why
// there is none. Unless UseCgroupBase chose it, the first call looks for
// it: the host's own cgroup v2 directory, if the host may create a cgroup
// there and the kernel has cgroup.kill (5.14).
func CgroupBase() (string, string) {
	cgroupState.mu.Lock()
	defer cgroupState.mu.Unlock()
	if !cgroupState.decided {
		cgroupState.decided = true
		dir, err := OwnCgroupDir()
		switch {
		case err != nil:
			cgroupState.why = err.Error()
		default:
			if why := probeCgroupBase(dir); why != "" {
				cgroupState.why = why
			} else {
				cgroupState.base = dir
			}
		}
	}
	return cgroupState.base, cgroupState.why
}

// OwnCgroupDir returns the cgroup v2 directory of this process: its path
// in /proc/self/cgroup under the cgroup2 mount.
func OwnCgroupDir() (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", fmt.Errorf("reading /proc/self/cgroup: %v", err)
	}
	path, ok := "", false
	for line := range strings.Lines(string(b)) {
		if p, found := strings.CutPrefix(strings.TrimSpace(line), "0::"); found {
			path, ok = p, true
		}
	}
	if !ok {
		return "", errors.New("no cgroup v2 membership in /proc/self/cgroup")
	}
	mount, err := cgroup2Mount()
	if err != nil {
		return "", err
	}
	return filepath.Join(mount, path), nil
}

// cgroup2Mount returns the mount point of the cgroup v2 hierarchy from
// /proc/self/mountinfo (the first cgroup2 mount of the hierarchy's root).
func cgroup2Mount() (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options... - fstype source superopts
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		fields := strings.Fields(pre)
		if !ok || len(fields) < 5 || !strings.HasPrefix(post, "cgroup2 ") || fields[3] != "/" {
			continue
		}
		return fields[4], nil
	}
	return "", errors.New("no cgroup2 file system is mounted")
}

// probeCgroupBase checks that a run cgroup can be made in dir and killed
// there; it returns why not, or "".
func probeCgroupBase(dir string) string {
	probe := filepath.Join(dir, fmt.Sprintf("%sprobe-%d", cgroupPrefix, os.Getpid()))
	if err := os.Mkdir(probe, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Sprintf("cannot create a cgroup in %s (%v): cgroup v2 is not delegated to this user", dir, err)
	}
	defer os.Remove(probe)
	if _, err := os.Stat(filepath.Join(probe, "cgroup.kill")); err != nil {
		return "the kernel has no cgroup.kill (Linux 5.14)"
	}
	// A direct run's warden reads its deadline off the cgroup
	// (warden_linux.go): without user extended attributes runs keep their
	// cgroups but have supervisors.
	cgroupState.xattrs = unix.Setxattr(probe, wardDeadline, []byte("0 0"), 0) == nil
	return ""
}

// runCgroup is one run's cgroup.
type runCgroup struct {
	// dir is its directory.
	dir string
	// events is its cgroup.events, opened with the cgroup (off the run's
	// path when the cgroup is the spare) and read with pread at offset 0,
	// which makes the kernel generate the file afresh: populated costs
	// about 2 µs instead of the 15–30 µs of a kernfs open, read and
	// close. nil for a cgroup this host did not make (a warden's, a stale
	// host's); closed once the cgroup is removed, after which populated
	// reads by path again.
	events *os.File
}

// newRunCgroup returns a fresh, empty cgroup for one run with a descriptor
// of its directory for CLONE_INTO_CGROUP (the caller closes it once the
// run started); nil and no error when per-run cgroups are not in use. It
// takes the spare made ahead when there is one (making a cgroup costs a
// mkdir on the run's path otherwise) and starts making the next.
func newRunCgroup() (*runCgroup, *os.File, error) {
	base, _ := CgroupBase()
	if base == "" {
		return nil, nil, nil
	}
	cgroupSpare.mu.Lock()
	cg, f, spareBase := cgroupSpare.cg, cgroupSpare.f, cgroupSpare.base
	cgroupSpare.cg, cgroupSpare.f = nil, nil
	if !cgroupSpare.making {
		cgroupSpare.making = true
		go makeSpareCgroup(base)
	}
	cgroupSpare.mu.Unlock()
	if cg != nil {
		if spareBase == base {
			return cg, f, nil
		}
		cg.discard(f)
	}
	return makeRunCgroup(base)
}

// cgroupSpare is one run cgroup made ahead, in the background. It is
// empty until a run is cloned into it: only processes that may write its
// cgroup.procs could enter it, and they could as well leave their own.
// A host that exits leaves it behind, empty, for CleanStaleCgroups.
var cgroupSpare struct {
	// mu guards the fields below.
	mu sync.Mutex
	// cg is the spare, nil when there is none; f is its opened directory.
	cg *runCgroup
	f  *os.File
	// base is the directory it was made in (a later UseCgroupBase may
	// have changed the base since).
	base string
	// making is true while a spare is being made.
	making bool
}

// makeSpareCgroup makes the spare cgroup in base (a failure leaves none:
// the next run makes its own, and reports the error).
func makeSpareCgroup(base string) {
	cg, f, err := makeRunCgroup(base)
	cgroupSpare.mu.Lock()
	defer cgroupSpare.mu.Unlock()
	cgroupSpare.making = false
	if err != nil {
		return
	}
	if cgroupSpare.cg != nil {
		cg.discard(f)
		return
	}
	cgroupSpare.cg, cgroupSpare.f, cgroupSpare.base = cg, f, base
}

// makeRunCgroup makes a cgroup named agentgate-<host pid>-<random> in base
// and opens its directory.
func makeRunCgroup(base string) (*runCgroup, *os.File, error) {
	var b [6]byte
	_, _ = rand.Read(b[:])
	dir := filepath.Join(base, cgroupPrefix+strconv.Itoa(os.Getpid())+"-"+hex.EncodeToString(b[:]))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("creating the run's cgroup %s: %v", dir, err)
	}
	f, err := os.OpenFile(dir, os.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		os.Remove(dir)
		return nil, nil, fmt.Errorf("opening the run's cgroup %s: %v", dir, err)
	}
	// Without it populated reads by path, as for any other cgroup.
	events, _ := os.Open(filepath.Join(dir, "cgroup.events"))
	return &runCgroup{dir: dir, events: events}, f, nil
}

// discard removes a cgroup no run was started in and closes what this host
// holds of it (f, its opened directory, included).
func (c *runCgroup) discard(f *os.File) {
	f.Close()
	c.removeNow()
}

// removeNow removes the cgroup (it must be empty: one rmdir, where
// os.Remove would try an unlink first) and closes its events.
func (c *runCgroup) removeNow() {
	_ = unix.Rmdir(c.dir)
	if c.events != nil {
		c.events.Close()
	}
}

// populated reports whether any process is in the cgroup (cgroup.events).
// A cgroup that cannot be read counts as empty. It reads through the held
// descriptor when there is one, and by path when there is none or reading
// it failed (closed by a removal racing this call).
func (c *runCgroup) populated() bool {
	if c == nil {
		return false
	}
	if c.events != nil {
		var buf [128]byte // "populated 0\nfrozen 0\n"
		if n, err := readAfresh(c.events, buf[:]); err == nil {
			return bytes.Contains(buf[:n], []byte("populated 1"))
		}
	}
	b, err := os.ReadFile(filepath.Join(c.dir, "cgroup.events"))
	return err == nil && bytes.Contains(b, []byte("populated 1"))
}

// kill SIGKILLs every process in the cgroup (cgroup.kill).
func (c *runCgroup) kill() {
	if c == nil {
		return
	}
	_ = os.WriteFile(filepath.Join(c.dir, "cgroup.kill"), []byte("1"), 0)
}

// cgroupEmptyBound bounds how long end waits for a killed cgroup to empty.
const cgroupEmptyBound = 5 * time.Second

// end kills whatever is still in the cgroup, waits (bounded) until it is
// empty, and removes it. It reports whether processes were found in it.
func (c *runCgroup) end() (found bool) {
	if c == nil {
		return false
	}
	if c.populated() {
		found = true
		c.kill()
		deadline := time.Now().Add(cgroupEmptyBound)
		for c.populated() && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
	}
	c.removeNow()
	return found
}

// release ends the cgroup of a run whose supervisor reported the tree
// gone: what escaped the supervisor's sweep is killed before release
// returns (end), and an empty cgroup is removed in the background, off the
// run's path (cgroupRemovals counts those in progress).
func (c *runCgroup) release() {
	if c == nil {
		return
	}
	if c.populated() {
		c.end()
		return
	}
	c.remove()
}

// remove removes the cgroup, known to be empty (nothing can enter an empty
// cgroup but a process that may write its cgroup.procs, and it could as
// well leave its own), in the background.
func (c *runCgroup) remove() {
	cgroupRemovals.Add(1)
	go func() {
		defer cgroupRemovals.Done()
		c.removeNow()
	}()
}

// cgroupRemovals counts the background removals release started.
var cgroupRemovals sync.WaitGroup

// CleanStaleCgroups ends and removes the run cgroups that hosts which are
// no longer running left behind (a host and its supervisor killed at once),
// so that nothing such a run started outlives it for long. It returns how
// many it ended.
func CleanStaleCgroups() int {
	base, _ := CgroupBase()
	if base == "" {
		return 0
	}
	entries, err := os.ReadDir(base)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), cgroupPrefix)
		pidText, _, ok2 := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || !ok2 || err != nil || !e.IsDir() || pid == os.Getpid() || Alive(pid) {
			continue
		}
		if (&runCgroup{dir: filepath.Join(base, e.Name())}).end() {
			n++
		}
	}
	return n
}
