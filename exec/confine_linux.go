//go:build linux

package exec

import (
	"context"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"

	"github.com/agentgate/agentgate/exec/procspec"
	"github.com/agentgate/agentgate/exec/runinfo"
)

// confineCaps is what this machine offers for confinement, learnt once per
// Executor (confineCapsOf).
type confineCaps struct {
	// abi is the kernel's Landlock ABI version; 0 when it has none.
	abi int
	// shim is the confinement shim, open; nil when it is missing.
	shim *os.File
	// shimWhy says why there is no shim.
	shimWhy string
	// namespaces is true when the shim can make mount and network
	// namespaces (through a user namespace when not root).
	namespaces bool
}

// shimProbeBound bounds the shim's one probe of the namespaces.
const shimProbeBound = 5 * time.Second

// probeConfinement learns what this machine offers: the Landlock ABI, the
// shim (cfg.Shim, or agentgate-shim beside the running executable, opened
// and kept open: replacing the file later changes nothing), and whether
// the shim can make the namespaces (it is run once with -P).
func probeConfinement(cfg ConfineConfig) *confineCaps {
	c := &confineCaps{}
	if v, err := ll.LandlockGetABIVersion(); err == nil && v > 0 {
		c.abi = v
	}
	path := cfg.Shim
	if path == "" {
		exe, err := os.Executable()
		if err != nil {
			c.shimWhy = "agentgate's own executable cannot be found, nor agentgate-shim beside it: " + err.Error()
			return c
		}
		path = filepath.Join(filepath.Dir(exe), "agentgate-shim")
	}
	f, err := os.Open(path)
	if err != nil {
		c.shimWhy = fmt.Sprintf("the confinement shim %s cannot be opened (%v); install agentgate-shim beside agentgate", path, err)
		return c
	}
	c.shim = f
	args := []string{"agentgate-shim", "2", "-m", "-n", "-P"}
	if os.Geteuid() != 0 {
		args = append(args, "-u")
	}
	ctx, cancel := context.WithTimeout(context.Background(), shimProbeBound)
	defer cancel()
	cmd := osexec.CommandContext(ctx, path, args[1:]...)
	cmd.Args[0] = args[0]
	c.namespaces = cmd.Run() == nil
	return c
}

// Landlock's filesystem rights that write, by the ABI that brought them.
const (
	// writeAccessV1 are the rights of ABI 1 that change the file system.
	writeAccessV1 = ll.AccessFSWriteFile | ll.AccessFSRemoveDir | ll.AccessFSRemoveFile | ll.AccessFSMakeChar |
		ll.AccessFSMakeDir | ll.AccessFSMakeReg | ll.AccessFSMakeSock | ll.AccessFSMakeFifo | ll.AccessFSMakeBlock |
		ll.AccessFSMakeSym
	// fileWriteAccessV1 are those that apply to a file (not a directory).
	fileWriteAccessV1 = ll.AccessFSWriteFile
)

// writeAccess returns the write rights ABI abi can restrict: ABI 1's, plus
// refer (moving and linking between directories, ABI 2) and truncate
// (ABI 3). Reads, execution and device ioctls are never restricted.
func writeAccess(abi int) (dirs, files landlock.AccessFSSet) {
	dirs, files = writeAccessV1, fileWriteAccessV1
	if abi >= 2 {
		dirs |= ll.AccessFSRefer
	}
	if abi >= 3 {
		dirs |= ll.AccessFSTruncate
		files |= ll.AccessFSTruncate
	}
	return dirs, files
}

// deviceFiles are the devices every run may write.
var deviceFiles = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx"}

// deviceDirs are the device directories every run may write in: terminals
// and POSIX shared memory.
var deviceDirs = []string{"/dev/pts", "/dev/shm"}

// confine plans how cmd runs confined (docs/lifetime.md): the Landlock
// ruleset (writes only where planWrites allows, signals and abstract
// sockets scoped to the run, TCP cut off for network none without a
// namespace), the namespaces and mounts, the private TMPDIR. A run the
// person approved without write confinement keeps the scoping and the
// network setting but gets no write rules. When writes cannot be confined
// the run starts unconfined and says why, unless require_confinement
// refuses it; network none that cannot be applied is always refused.
//
// With preview set it only describes (Executor.Confinement): nothing is
// made (no temporary directory, no ruleset) and plan.sandbox stays nil.
func (e *Executor) confine(cmd Command, meta Meta, preview bool) (*confinePlan, *Refusal) {
	cc := e.cfg.Confine
	if cc.Off {
		return unconfinedPlan("write confinement is off for this host", ""), nil
	}
	s := cc.settings()
	if s.Network == "" {
		s.Network = NetworkAny
	}
	caps := e.confineCaps()
	why := ""
	switch {
	case caps.abi == 0:
		why = "Landlock is not available on this kernel"
	case caps.shim == nil:
		why = caps.shimWhy
	}
	if why != "" {
		if s.Require || s.Network == NetworkNone {
			return nil, confinementUnavailable(why)
		}
		return unconfinedCheckedPlan(cmd.ProjectRoot, why, s.Network), nil
	}
	// A preview plans with a stand-in for the run's temporary directory
	// (made only for a run), named like one so the same rules judge it.
	tmp := filepath.Join(os.TempDir(), tmpPattern+"preview")
	if !preview {
		var err error
		if tmp, err = e.tmps.take(); err != nil {
			return nil, refusef(CodeFailedToStart, "could not create the run's temporary directory: %v; nothing ran", err)
		}
	}
	plan := &confinePlan{info: runinfo.Confinement{Network: s.Network, Landlock: caps.abi, Scoped: caps.abi >= 6}}
	if !preview {
		plan.tmpDir = tmp
	}
	in := confineInputs{root: cmd.ProjectRoot, tmp: tmp, cache: cc.CacheDir, home: cc.Home, settings: s,
		protect: cc.Protect, mountNS: caps.namespaces}
	if in.home == "" {
		in.home, _ = os.UserHomeDir()
	}
	if in.cache == "" {
		in.cache, _ = os.UserCacheDir()
	}
	wp := planWrites(in)
	plan.checked = wp.checked
	plan.info.Dropped = wp.dropped
	plan.info.Protected = "checked"
	if caps.namespaces {
		plan.info.Protected = "read-only"
	}
	dirRights, fileRights := writeAccess(caps.abi)
	cfg := landlock.Config{}
	var rules []landlock.Rule
	if meta.WithoutWriteConfinement {
		plan.info.Unconfined = "approved without write confinement"
	} else {
		cfg.HandledAccessFS = dirRights
		dirs := make([]string, 0, len(wp.writable)+len(deviceDirs))
		for _, w := range wp.writable {
			dirs = append(dirs, w.path)
			// A path that does not exist now is not writable in this run
			// (Landlock grants by inode): only the others are shown (a
			// preview's temporary directory is made only for the run).
			_, err := os.Stat(w.path)
			if (err == nil || preview && w.path == tmp) && !slices.Contains(plan.info.Writes, w.label) {
				plan.info.Writes = append(plan.info.Writes, w.label)
			}
		}
		rules = append(rules,
			landlock.PathAccess(dirRights, dirs...).IgnoreIfMissing(),
			landlock.PathAccess(fileRights, deviceFiles...).IgnoreIfMissing(),
			landlock.PathAccess(fileRights, deviceDirs...).IgnoreIfMissing(),
			landlock.PathAccess(dirRights, "/dev/shm").IgnoreIfMissing())
	}
	if caps.abi >= 6 {
		cfg.Scoped = ll.ScopeSignal | ll.ScopeAbstractUnixSocket
	}
	netNS := false
	if s.Network == NetworkNone {
		switch {
		case caps.namespaces:
			netNS, plan.info.NetworkBy = true, "namespace"
		case caps.abi >= 4:
			cfg.HandledAccessNet = ll.AccessNetBindTCP | ll.AccessNetConnectTCP
			plan.info.NetworkBy = "landlock-tcp"
		default:
			e.tmps.remove(plan.tmpDir)
			return nil, confinementUnavailable("network none needs a network namespace or Landlock ABI 4, and this machine has neither")
		}
	}
	if preview {
		return plan, nil
	}
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil || fd < 0 {
		e.tmps.remove(plan.tmpDir)
		if err == nil {
			err = fmt.Errorf("the kernel has nothing to restrict")
		}
		return nil, refusef(CodeContainmentFailed, "agentgate could not build the run's Landlock ruleset (%v), so it did not start; "+
			"do not retry or run the command another way: the person must fix this", err)
	}
	plan.sandbox = &procspec.Sandbox{
		Shim: caps.shim, Ruleset: os.NewFile(uintptr(fd), "landlock-ruleset"), RulesetFlags: flags, NetNS: netNS,
	}
	if caps.namespaces {
		// A mount namespace only for what exists to bind or hide: making
		// one (and tearing it down) costs, and has nothing to do otherwise.
		plan.sandbox.ReadOnly = existing(wp.readOnly)
		plan.sandbox.Hide = existing(cc.Hide)
		plan.sandbox.MountNS = len(plan.sandbox.ReadOnly)+len(plan.sandbox.Hide) > 0
		if !meta.WithoutWriteConfinement {
			// With its writes confined the run cannot unmount the binds
			// (a Landlock domain cannot change mounts).
			for _, p := range plan.sandbox.ReadOnly {
				if slices.Contains(plan.checked, p) {
					if plan.sealed == nil {
						plan.sealed = map[string]bool{}
					}
					plan.sealed[p] = true
				}
			}
		}
	}
	plan.sandbox.UserNS = (plan.sandbox.MountNS || netNS) && os.Geteuid() != 0
	return plan, nil
}

// existing returns the paths of paths that exist (not following a final
// symlink: the shim skips symlinks anyway).
func existing(paths []string) []string {
	var out []string
	for _, p := range paths {
		if _, err := os.Lstat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}
