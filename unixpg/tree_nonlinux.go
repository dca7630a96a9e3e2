//go:build unix && !linux

package unixpg

import "syscall"

// targetSysProcAttr puts the target in its own process group. There is no
// parent-death signal, no pidfd (*pidfd is left alone) and no cgroup
// outside Linux; the lifeline socket covers host death.
func targetSysProcAttr(pidfd *int, _ int) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// leaderExit returns nil: without pidfds, SIGCHLD announces the leader's
// exit.
func leaderExit(pidfd int) <-chan struct{} { return nil }

// descendants returns nil: without /proc children lists and a subreaper the
// supervisor can reach the tree only through its process group.
func descendants() []int { return nil }

// descendantsOf returns nil, as descendants does.
func descendantsOf(int) []int { return nil }

// recvmsgFlags is zero: MSG_CMSG_CLOEXEC is Linux-only. parseRights marks
// received descriptors close-on-exec before the run that owns them can
// fork anything.
const recvmsgFlags = 0

// dirThroughFD returns dir: without /proc the target changes into the
// directory by name; the host checked the handle's identity before Start.
func dirThroughFD(fd int, dir string) string { return dir }
