package exec

import (
	"context"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/agentgate/agentgate/exec/envrisk"
)

// loginEnvBound bounds the login shell that LoginEnv asks for the person's
// environment.
const loginEnvBound = 3 * time.Second

// loginEnv caches the login environment: computed once per process.
var loginEnv struct {
	once sync.Once
	env  []string
}

// HostEnv returns the environment runs get, the same rule for every host
// (kind is kept for the callers; it changes nothing): RunEnv of the person's
// login environment (LoginEnv) and this process's own environment. The
// agent never supplies one, and whoever started this process — a terminal,
// an agent calling `agentgate run`, `agentgate mcp` started from a
// repository's .mcp.json, a launcher — cannot choose a variable that steers
// what programs load or run (exec/envrisk): those come from the login
// environment only. docs/executor.md lists what a run's environment holds.
func HostEnv(ctx context.Context, kind HostKind) []string {
	return RunEnv(LoginEnv(ctx), os.Environ())
}

// RunEnv merges the person's login environment with the environment of the
// process that hosts the run (inherited): every variable of inherited that
// does not steer what programs load or run (envrisk.Steers) — the terminal's
// TERM, the session's DISPLAY or SSH_AUTH_SOCK —, and every variable of
// login that inherited does not supply that way, PATH, HOME, LD_* and the
// like included. So a steering variable has its login value or is absent,
// whatever the host's environment says; any other variable has the host's
// value, else the login one. Order: inherited's kept entries first, in
// their order, then login's. Names compare exactly, on Windows without
// regard to case; entries without '=' are dropped; a later duplicate of a
// name wins over an earlier one, as getenv does.
func RunEnv(login, inherited []string) []string {
	kept, _ := envrisk.Filter(inherited)
	kept = dedupEnv(kept)
	have := make(map[string]bool, len(kept))
	for _, kv := range kept {
		k, _, _ := strings.Cut(kv, "=")
		have[envKey(k)] = true
	}
	out := kept
	for _, kv := range dedupEnv(login) {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" || have[envKey(k)] {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// dedupEnv returns env without malformed entries and with only the last
// entry of each name, in the order of the kept entries.
func dedupEnv(env []string) []string {
	last := make(map[string]int, len(env))
	for i, kv := range env {
		if k, _, ok := strings.Cut(kv, "="); ok && k != "" {
			last[envKey(k)] = i
		}
	}
	out := make([]string, 0, len(last))
	for i, kv := range env {
		if k, _, ok := strings.Cut(kv, "="); ok && k != "" && last[envKey(k)] == i {
			out = append(out, kv)
		}
	}
	return out
}

// envKey is a variable name as the platform compares it.
func envKey(k string) string {
	if runtime.GOOS == "windows" {
		return strings.ToUpper(k)
	}
	return k
}

// LoginEnv returns the person's login environment, computed once per
// process. On Unix it is what their login shell — the shell the account
// database names, never $SHELL — reports when run as `shell -l -i -c
// 'printf MARKER; command env -0'` from MinimalEnv, so that nothing of the
// environment this process was started with reaches the shell's start-up
// files; bounded to about 3 s (and ctx), and kept for later processes when
// UseLoginEnvCache was called. On Windows it is the user's
// default environment (CreateEnvironmentBlock without inheritance: the
// system and user variables of the registry). When that fails, yields
// nothing or no PATH, it is MinimalEnv.
func LoginEnv(ctx context.Context) []string {
	loginEnv.once.Do(func() {
		acct := currentAccount()
		if env := cachedLoginEnv(acct, time.Now()); env != nil {
			loginEnv.env = env
			return
		}
		env, read := computeLoginEnv(ctx, acct)
		if read {
			keepLoginEnv(acct, env)
		}
		loginEnv.env = env
	})
	return append([]string(nil), loginEnv.env...)
}

// computeLoginEnv reads acct's login environment from minimalEnv(acct),
// bounded to loginEnvBound; read is false when it fell back to the minimal
// environment itself.
func computeLoginEnv(ctx context.Context, acct account) (env []string, read bool) {
	minimal := minimalEnv(acct)
	ctx, cancel := context.WithTimeout(ctx, loginEnvBound)
	defer cancel()
	env, err := readLoginEnv(ctx, acct, minimal)
	if err != nil || envValue(env, "PATH") == "" {
		return minimal, false
	}
	return env, true
}

// account is who the person is, from the account database (not from the
// environment, which whoever started this process chose).
type account struct {
	// User is the login name.
	User string
	// Home is the home directory.
	Home string
	// Shell is the login shell, an absolute path ("" on Windows).
	Shell string
}

// MinimalEnv is the environment the login shell is read from: HOME, USER,
// LOGNAME and SHELL of this process's account (from the account database),
// and the platform's default PATH (DefaultPath). Empty values are left out.
func MinimalEnv() []string { return minimalEnv(currentAccount()) }

// CleanEnv is the environment to start another agentgate process with (the
// desktop app, started by `agentgate mcp`): inherited without the variables
// that steer what programs load or run, plus MinimalEnv's — RunEnv of the
// minimal environment and inherited. So a repository's .mcp.json that sets
// LD_PRELOAD or XDG_CONFIG_HOME for `agentgate mcp` does not reach the app.
func CleanEnv(inherited []string) []string { return RunEnv(MinimalEnv(), inherited) }

// minimalEnv is MinimalEnv for acct.
func minimalEnv(acct account) []string {
	var env []string
	for _, kv := range [][2]string{{"HOME", acct.Home}, {"USER", acct.User}, {"LOGNAME", acct.User}, {"SHELL", acct.Shell}, {"PATH", DefaultPath}} {
		if kv[1] != "" {
			env = append(env, kv[0]+"="+kv[1])
		}
	}
	return env
}

// PathFromEnv returns the PATH value of env (on Windows matched without
// regard to case, as Windows does), the value Validate needs.
func PathFromEnv(env []string) string { return envValue(env, "PATH") }

// envValue returns the value of the last entry named key in env (on Windows
// case-insensitively), or "".
func envValue(env []string, key string) string {
	val := ""
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if k == key || (runtime.GOOS == "windows" && strings.EqualFold(k, key)) {
			val = v
		}
	}
	return val
}

// envMarker precedes the environment in the login shell's output, so that
// whatever startup files print before it is ignored.
const envMarker = "\x00__AGENTGATE_ENV__\x00"

// parseEnvOutput parses `printf marker; env -0` output: NUL-separated
// KEY=value entries after the last marker. Entries without '=' or with an
// empty key are dropped.
func parseEnvOutput(out []byte) []string {
	s := string(out)
	i := strings.LastIndex(s, envMarker)
	if i < 0 {
		return nil
	}
	var env []string
	for _, kv := range strings.Split(s[i+len(envMarker):], "\x00") {
		if k, _, ok := strings.Cut(kv, "="); ok && k != "" {
			env = append(env, kv)
		}
	}
	return env
}
