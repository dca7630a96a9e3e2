// Package unixpg starts a command so that it and every descendant end when
// they must: on Terminate, on Kill, when the command's leader exits, and when
// the host process dies, even by SIGKILL.
//
// Runs are started by small supervising processes (the design of Bazel's
// process-wrapper): the host re-executes its own binary with a hidden first
// argument and an environment marker; MaybeSupervise, which the main
// function of every binary that hosts runs calls first thing, recognises
// that and turns the process into a supervisor (an explicit call, never an
// init function: importing this package takes nothing over). A supervisor serves one run at a time and is reused: once a
// run's tree is completely gone it goes back to a small pool of idle
// supervisors (at most 4, each retired after 2 minutes idle), because a
// fresh one costs a whole Go start-up of the host binary. Start takes an
// idle one or starts a new one, so any number of runs may be in progress.
// Each run reaches its supervisor over a Unix socket: the description
// (path, argv, dir, env, grace) as JSON and the standard files as
// SCM_RIGHTS descriptors, which the supervisor closes as soon as the target
// holds them. The supervisor
//
//   - on Linux makes itself a child subreaper (PR_SET_CHILD_SUBREAPER), so that
//     descendants that leave the process group (setsid, double fork) are
//     re-parented to it and can be found and killed;
//   - starts the target in its own process group (its pgid is its pid);
//   - holds a lifeline: the socket to the host, whose end of file (the host
//     died or retired the supervisor) makes it SIGKILL the whole tree at
//     once and exit; an idle supervisor just exits;
//   - on a terminate request sends SIGTERM (and SIGCONT) to the group and to
//     every descendant it can find, waits the grace period for the tree to
//     go, then SIGKILLs the group and sweeps (Linux: every descendant,
//     repeatedly, until the supervisor has no child left);
//   - when the leader exits by itself, ends the rest of the tree the same way
//     (SIGTERM, grace, SIGKILL, sweep), so a grandchild holding the stdout
//     pipe cannot keep the run alive;
//   - reports the leader's exit status only when nothing of the tree
//     remains (Linux) or the process group is empty (other Unix), and only
//     then can it serve another run.
//
// On macOS there is no subreaper: a descendant that calls setsid (or
// setpgid) leaves the process group and is not caught. docs/lifetime.md lists
// exactly what each platform catches.
//
// What to run and how it ended are procspec.Spec and procspec.ExitStatus,
// the shapes package winjob shares; errors that mean containment failed
// wrap procspec.ErrContainment.
//
// The package compiles on every platform; Start and Process exist only on
// Unix. On other platforms MaybeSupervise does nothing.
package unixpg
