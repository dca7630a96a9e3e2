//go:build unix && !linux

package unixpg

import (
	"errors"
	"os"
)

// runCgroup does not exist outside Linux.
type runCgroup struct{}

// UseCgroupBase does nothing: cgroups are Linux-only.
func UseCgroupBase(string) {}

// CgroupBase returns "": cgroups are Linux-only.
func CgroupBase() (string, string) { return "", "cgroups are Linux-only" }

// newRunCgroup makes none.
func newRunCgroup() (*runCgroup, *os.File, error) { return nil, nil, nil }

// kill does nothing.
func (c *runCgroup) kill() {}

// populated reports false.
func (c *runCgroup) populated() bool { return false }

// release does nothing.
func (c *runCgroup) release() {}

// remove does nothing.
func (c *runCgroup) remove() {}

// end does nothing.
func (c *runCgroup) end() bool { return false }

// OwnCgroupDir fails: cgroups are Linux-only.
func OwnCgroupDir() (string, error) { return "", errors.New("cgroups are Linux-only") }

// CleanStaleCgroups does nothing.
func CleanStaleCgroups() int { return 0 }
