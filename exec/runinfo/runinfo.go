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
	"time"
)

// ChangeSummary lists what a run changed under its working directory.
type ChangeSummary struct {
	// Created lists the paths that appeared, relative to the run's Dir,
	// slash-separated and sorted; directories end in "/". Each list keeps
	// at most ChangeLimits.MaxListed paths (then Incomplete is set).
	Created []string `json:"created"`
	// Modified lists the paths whose content (or type) changed.
	Modified []string `json:"modified"`
	// Deleted lists the paths that disappeared.
	Deleted []string `json:"deleted"`
	// Incomplete is true when a bound (files, time, list length) was hit or
	// something was unreadable, so some changes may be missing.
	Incomplete bool `json:"incomplete,omitempty"`
	// Reason says which bound hit, for a person.
	Reason string `json:"reason,omitempty"`
	// Method is "content-hash" (Linux, macOS) or "size-mtime" (Windows).
	Method string `json:"method"`
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
