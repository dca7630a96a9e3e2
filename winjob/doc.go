// Package winjob starts a command on Windows inside a Job Object, so that it
// and every descendant end when they must: on Terminate or Kill, when the
// command's leader exits, and when the host process ends, even if it
// crashes or is killed.
//
// The job is unnamed, created with a handle that is not inheritable and
// never duplicated, and limited with JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE and
// no breakaway flag: children join it automatically and cannot leave, and
// when the host's only handle closes (the host exits, however) Windows
// terminates every process in it. The target is created suspended
// (CREATE_SUSPENDED | CREATE_NO_WINDOW | CREATE_NEW_PROCESS_GROUP), assigned
// to the job, and only then resumed, so it never runs outside the job; if
// assignment fails it is terminated and Start fails closed with an error
// wrapping ErrContainment.
//
// Windows has no SIGTERM: Terminate and Kill both end the whole job at once
// with TerminateJobObject, and Spec.Grace is not used. The package's API has
// the same shape as package unixpg so that callers stay thin.
//
// The Windows code runs in `make test` under Wine 8 (its own tests and the
// executor's, exec/executor_windows_test.go; see docs/lifetime.md for what
// Wine cannot host). The pure parts (flag computation, error wording,
// CheckBatchArgs, BatchCommandLine) are in files without build tags and are
// tested on every platform.
package winjob
