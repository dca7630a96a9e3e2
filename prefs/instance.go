package prefs

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/gofrs/flock"
)

// instancesDirName is the directory under Paths.StateDir holding one lock
// file per running app instance.
const instancesDirName = "instances"

// Instance is one running agentgate app (or headless host), the owner of
// the "until agentgate quits" grants given on its cards. It holds an
// exclusive lock on <state>/instances/<id>.lock for as long as it runs; the
// operating system releases that lock when the process ends however it
// ends (quit, crash, SIGKILL), so any process can tell whether the instance
// still runs, and a grant whose instance is gone is never honoured.
type Instance struct {
	// id names the instance: 16 random hex digits.
	id string
	// paths says where the lock file is.
	paths Paths
	// mu guards lock.
	mu sync.Mutex
	// lock is the held lock; nil after Close.
	lock *flock.Flock
}

// HoldInstance starts an app instance under p.StateDir: it creates its
// lock file (mode 0600, in a 0700 directory) and locks it.
func HoldInstance(p Paths) (*Instance, error) {
	dir := filepath.Join(p.StateDir, instancesDirName)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating %s for the app instance's lock: %w", dir, err)
	}
	b := make([]byte, 8)
	rand.Read(b)
	id := hex.EncodeToString(b)
	lock := flock.New(instanceLockFile(p, id), flock.SetPermissions(0o600))
	ok, err := lock.TryLock()
	if err != nil || !ok {
		return nil, fmt.Errorf("locking the app instance file %s: %v", instanceLockFile(p, id), err)
	}
	return &Instance{id: id, paths: p, lock: lock}, nil
}

// ID returns the instance's id, for GrantRequest.Instance.
func (in *Instance) ID() string { return in.id }

// Close ends the instance: the grants that last until it quits are removed
// from g (when g is not nil), then its lock is released and its lock file
// removed. Even without Close (a crash) those grants are never honoured
// again, and the next process to read the grants removes them. Close is
// idempotent; the error is the failure to remove the grants.
func (in *Instance) Close(g *Grants) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.lock == nil {
		return nil
	}
	var err error
	if g != nil {
		err = g.update(func(live []Grant) ([]Grant, error) {
			return slices.DeleteFunc(live, func(gr Grant) bool { return gr.Instance == in.id }), nil
		})
	}
	in.lock.Close()
	os.Remove(instanceLockFile(in.paths, in.id))
	in.lock = nil
	return err
}

// instanceLockFile returns the lock file of the instance id.
func instanceLockFile(p Paths, id string) string {
	return filepath.Join(p.StateDir, instancesDirName, id+lockSuffix)
}

// validInstanceID reports whether id has the form HoldInstance gives (hex
// digits only), so that an id read from grants.json can never name a path
// outside the instances directory.
func validInstanceID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// instanceAlive reports whether the app instance id still runs: its lock
// file exists and is locked by someone. When it cannot tell (an invalid id,
// an unreadable file), it answers false: an instance that cannot be shown
// to run has its grants ended.
func instanceAlive(p Paths, id string) bool {
	if !validInstanceID(id) {
		return false
	}
	// Opened without O_CREATE, so asking never creates a lock file.
	probe := flock.New(instanceLockFile(p, id), flock.SetFlag(os.O_RDONLY))
	got, err := probe.TryLock()
	if err != nil {
		return false // missing (the instance ended) or unreadable
	}
	if got {
		probe.Unlock()
		return false // nobody holds it: the instance is gone
	}
	probe.Close()
	return true
}

// removeInstanceLock removes the lock file an ended instance left behind
// (after a crash). Called only for instances found not running.
func removeInstanceLock(p Paths, id string) {
	if !validInstanceID(id) {
		return
	}
	os.Remove(instanceLockFile(p, id)) // on failure, left for the next reader
}
