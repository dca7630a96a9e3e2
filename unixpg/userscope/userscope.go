// Package userscope gives a host that is not root a cgroup subtree of its
// own in a systemd user session, so that every run can get a cgroup of its
// own there (unixpg.UseCgroupBase; docs/lifetime.md, "Per-run cgroups").
//
// It asks the session's systemd user manager, over the D-Bus session bus,
// for a transient scope holding this process with Delegate=yes
// (StartTransientUnit, as `systemd-run --user --scope -p Delegate=yes`
// does): the process moves into the scope's cgroup, which then belongs to
// the user, and cgroups can be made below it. It never starts a bus: the
// session bus is the one DBUS_SESSION_BUS_ADDRESS names, or the per-user
// socket $XDG_RUNTIME_DIR/bus when it exists.
package userscope

import "errors"

// ErrNoSession is returned when there is no session bus to ask.
var ErrNoSession = errors.New("no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS unset and no $XDG_RUNTIME_DIR/bus)")
