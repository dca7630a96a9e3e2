// Package runinfo holds the few data shapes that describe a run and that
// parts without an executor need too: the audit log, the lean hook
// executable and the bridge's wire types. It imports only the standard
// library, so that importing it links no supervisor, no process-control
// code and no UI (ARCHITECTURE.md: what the hook links).
//
// It also holds the one generator of run ids, used for the executor's runs
// and the broker's proposals and hook questions alike.
package runinfo

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
)

// ChangeSummary lists what a run changed under its working directory
// (made by package exec/changes).
type ChangeSummary struct {
	// Created lists the paths that appeared, relative to the run's Dir,
	// slash-separated and sorted; directories end in "/". Each list keeps
	// at most changes.Limits.MaxListed paths (then Incomplete is set).
	Created []string `json:"created"`
	// Modified lists the paths whose content (or type) changed.
	Modified []string `json:"modified"`
	// Deleted lists the paths that disappeared.
	Deleted []string `json:"deleted"`
	// Incomplete is true when some changes may be missing: a bound
	// (entries, list length, wait) was hit, something was unreadable, or
	// the change keeper could not be asked. Reason says which.
	Incomplete bool `json:"incomplete,omitempty"`
	// Reason says, for a person, why the summary is incomplete.
	Reason string `json:"reason,omitempty"`
	// Method is "content-hash" (Linux, macOS: a file is modified when its
	// content differs) or "size-mtime" (Windows: when size or time differ).
	Method string `json:"method"`
	// Cover says what the summary looked at; nil in records written before
	// it existed.
	Cover *ChangeCover `json:"cover,omitempty"`
}

// ChangeCover says what a ChangeSummary covered.
type ChangeCover struct {
	// Entries is how many entries under the run's Dir the index held when
	// the summary was made: every one of them unless Skipped names some
	// directories.
	Entries int `json:"entries"`
	// Skipped names directories under the run's Dir (relative, ending in
	// "/", with why: "permission denied", "over the limit of N entries")
	// whose content is not indexed; at most 20 are named.
	Skipped []string `json:"skipped,omitempty"`
	// From is the start of the window: changes made from this moment on are
	// listed (the run's start, less the file system's timestamp
	// granularity).
	From time.Time `json:"from"`
	// To is the end of the window: the moment every change up to the run's
	// end was known (shortly after it ended). A change made by another
	// process between the two is listed too.
	To time.Time `json:"to"`
	// Watched is true when the index was kept by filesystem events, false
	// when a walk of the whole project found the changes.
	Watched bool `json:"watched"`
}

// idTimeLayout is the time part of a run id: UTC to the nanosecond, fixed
// width, so that ids sort by the time they were made.
const idTimeLayout = "20060102T150405.000000000Z"

// idRandomBytes is how many random bytes follow the time: 48 bits, so that
// an id cannot be guessed from the time alone.
const idRandomBytes = 6

// NewID returns a fresh run id, e.g. "20261130T142501.123456789Z-3fa2b1c4d5e6":
// the UTC time to the nanosecond (fixed width, so ids sort by time) and 48
// random bits in hex. Every id it returns passes CheckID.
func NewID() string {
	var b [idRandomBytes]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return time.Now().UTC().Format(idTimeLayout) + "-" + hex.EncodeToString(b[:])
}

// CheckID checks that id can name a run's files on every platform: 1 to 128
// ASCII letters, digits, '.', '_' or '-', not starting with '.'. The error
// says so.
func CheckID(id string) error {
	ok := id != "" && len(id) <= 128 && id[0] != '.'
	for _, c := range id {
		if !(c == '.' || c == '_' || c == '-' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
			ok = false
		}
	}
	if !ok {
		return fmt.Errorf("run id %q is invalid: use 1 to 128 letters, digits, '.', '_' or '-', not starting with '.'", id)
	}
	return nil
}

// Confinement says how a run was confined, as applied: it is shown on the
// card and the terminal prompt (before), and kept in the run record, the
// Processes window and the audit log (after).
type Confinement struct {
	// Writes lists, for a person, where the run may write: "project",
	// "temp" (its private TMPDIR), "cache" (the user's cache directory),
	// "git" (a worktree's git directories), then each writable_paths entry
	// that exists, as written ("~/.npm"). Empty when writes are not
	// confined (Unconfined says why).
	Writes []string `json:"writes,omitempty"`
	// Unconfined says why writes are not confined: "approved without
	// write confinement", "Landlock is not available on this kernel",
	// "write confinement is Linux-only", …; "" when they are.
	Unconfined string `json:"unconfined,omitempty"`
	// Dropped lists writable paths left out because agentgate's own
	// settings or the agents' user-level settings lie inside them (and no
	// mount namespace could keep those read-only), each with why.
	Dropped []string `json:"dropped,omitempty"`
	// Protected says how the files inside writable paths that steer agents
	// and tools (.agentgate/, .claude/, .git/config, .git/hooks, …) are
	// kept: "read-only" (bound read-only in a mount namespace; missing
	// ones are also checked) or "checked" (hashed before and after the
	// run, every change reported).
	Protected string `json:"protected,omitempty"`
	// Network is "any" or "none".
	Network string `json:"network,omitempty"`
	// NetworkBy says how "none" holds: "namespace" (no device but
	// loopback) or "landlock-tcp" (TCP only: UDP and other protocols still
	// reach the network); "" for "any".
	NetworkBy string `json:"network_by,omitempty"`
	// Landlock is the Landlock ABI version applied; 0 for none.
	Landlock int `json:"landlock,omitempty"`
	// Scoped is true when the run cannot signal processes outside it, nor
	// reach their abstract Unix sockets (Landlock ABI 6 and later).
	Scoped bool `json:"scoped,omitempty"`
}

// summaryWrites is how many of Writes Summary names before "and N more".
const summaryWrites = 5

// Summary is the one line a person reads: "writes: project, temp, cache",
// at most five places and then "and N more", or "writes: not confined
// (REASON)"; then "; network: none" when the network is cut off. The zero
// Confinement (nothing known) gives "".
func (c Confinement) Summary() string {
	if c.Unconfined == "" && len(c.Writes) == 0 {
		return ""
	}
	s := "writes: not confined (" + c.Unconfined + ")"
	if c.Unconfined == "" {
		shown := c.Writes
		if len(shown) > summaryWrites {
			shown = shown[:summaryWrites]
		}
		s = "writes: " + strings.Join(shown, ", ")
		if more := len(c.Writes) - len(shown); more > 0 {
			s += fmt.Sprintf(" and %d more", more)
		}
	}
	if c.Network == "none" {
		s += "; network: none"
		if c.NetworkBy == "landlock-tcp" {
			s += " (TCP only)"
		}
	}
	return s
}
