package exec

import (
	"context"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"
)

// loginEnvBound bounds the login shell that HostEnv asks for the person's
// environment.
const loginEnvBound = 3 * time.Second

// loginEnv caches the login-shell environment: computed once per process.
var loginEnv struct {
	once sync.Once
	env  []string
}

// HostEnv returns the environment runs get: the agent never supplies one.
// For HostCLI and HostMCP it is os.Environ() (a terminal host passes its own
// environment). For HostApp on Unix it is the person's login-shell
// environment, as `$SHELL -l -i -c` reports it, computed once per process
// within about 3 s (and within ctx); if the shell fails, times out or
// reports nothing usable, it falls back to os.Environ(). A desktop app
// started by a dock or launcher may otherwise lack the PATH that finds
// `npm`, `cargo` or `go`. On Windows it is always os.Environ().
func HostEnv(ctx context.Context, kind HostKind) []string {
	if kind != HostApp || runtime.GOOS == "windows" {
		return os.Environ()
	}
	loginEnv.once.Do(func() {
		shell := os.Getenv("SHELL")
		if shell == "" || !strings.HasPrefix(shell, "/") {
			shell = "/bin/sh"
		}
		ctx, cancel := context.WithTimeout(ctx, loginEnvBound)
		defer cancel()
		env, err := loginShellEnv(ctx, shell)
		if err != nil || envValue(env, "PATH") == "" {
			env = os.Environ()
		}
		loginEnv.env = env
	})
	return append([]string(nil), loginEnv.env...)
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
