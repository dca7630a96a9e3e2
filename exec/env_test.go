package exec

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseEnvOutput(t *testing.T) {
	cases := []struct {
		name string
		out  string
		want []string
	}{
		{"no marker", "PATH=/bin\x00", nil},
		{"plain", envMarker + "A=1\x00PATH=/bin\x00", []string{"A=1", "PATH=/bin"}},
		{"noise before", "welcome!\n" + envMarker + "A=1\x00", []string{"A=1"}},
		{"value with newline and =", envMarker + "A=x\ny=z\x00B=\x00", []string{"A=x\ny=z", "B="}},
		{"junk entries", envMarker + "noequals\x00=nokey\x00C=3", []string{"C=3"}},
		{"last marker wins", envMarker + "A=1\x00" + envMarker + "B=2\x00", []string{"B=2"}},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, parseEnvOutput([]byte(tc.out)), tc.name)
	}
}

func TestEnvValue(t *testing.T) {
	env := []string{"PATH=/a", "X", "HOME=/h", "PATH=/b"}
	assert.Equal(t, "/b", PathFromEnv(env), "the last entry wins, as for getenv in most libcs")
	assert.Equal(t, "/h", envValue(env, "HOME"))
	assert.Equal(t, "", envValue(env, "NOPE"))
	if runtime.GOOS == "windows" {
		assert.Equal(t, `C:\x`, PathFromEnv([]string{`Path=C:\x`}))
	} else {
		assert.Equal(t, "", PathFromEnv([]string{"Path=/x"}))
	}
}

// TestRunEnv: a variable that steers what programs load or run has its
// login value or is absent, whatever the host's environment says; any
// other variable has the host's value, else the login one.
func TestRunEnv(t *testing.T) {
	login := []string{"PATH=/usr/bin:/home/p/bin", "HOME=/home/p", "LANG=en_GB.UTF-8", "EDITOR=vim", "GIT_CONFIG_GLOBAL=/home/p/.gitconfig-work", "SHELL=/bin/bash"}
	cases := []struct {
		name      string
		login     []string
		inherited []string
		want      []string
	}{
		{"terminal", login,
			[]string{"TERM=xterm", "LANG=de_DE.UTF-8", "DISPLAY=:1", "PATH=/evil:/usr/bin", "HOME=/tmp/evil", "SSH_AUTH_SOCK=/run/a"},
			[]string{"TERM=xterm", "LANG=de_DE.UTF-8", "DISPLAY=:1", "SSH_AUTH_SOCK=/run/a", "PATH=/usr/bin:/home/p/bin", "HOME=/home/p", "EDITOR=vim", "GIT_CONFIG_GLOBAL=/home/p/.gitconfig-work", "SHELL=/bin/bash"}},
		{"an agent's steering variables", login,
			[]string{"LD_PRELOAD=/tmp/evil.so", "BASH_ENV=/tmp/evil.sh", "GIT_CONFIG_GLOBAL=/repo/evil.gitconfig", "NODE_OPTIONS=--require /tmp/x.js",
				"PYTHONSTARTUP=/tmp/x.py", "DYLD_INSERT_LIBRARIES=/tmp/x.dylib", "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=core.fsmonitor", "GIT_CONFIG_VALUE_0=/tmp/x", "ENV=/tmp/x", "EDITOR=/tmp/x"},
			login},
		{"the login environment has it too", []string{"PATH=/bin", "LD_PRELOAD=/usr/lib/libjemalloc.so"},
			[]string{"LD_PRELOAD=/tmp/evil.so"},
			[]string{"PATH=/bin", "LD_PRELOAD=/usr/lib/libjemalloc.so"}},
		{"duplicates and junk", []string{"PATH=/a", "PATH=/b", "junk", "=x"},
			[]string{"A=1", "A=2", "noequals", "PATH=/c"},
			[]string{"A=2", "PATH=/b"}},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, RunEnv(tc.login, tc.inherited), tc.name)
	}
}

// TestHostEnvIgnoresTheStartersSteering: whoever started the host cannot
// choose LD_PRELOAD, BASH_ENV or GIT_CONFIG_GLOBAL for its runs.
func TestHostEnvIgnoresTheStartersSteering(t *testing.T) {
	t.Setenv("LD_PRELOAD", "/tmp/evil.so")
	t.Setenv("BASH_ENV", "/tmp/evil.sh")
	t.Setenv("GIT_CONFIG_GLOBAL", "/tmp/evil.gitconfig")
	t.Setenv("AGENTGATE_TEST_HARMLESS", "kept")
	env := HostEnv(context.Background(), HostCLI)
	assert.NotEmpty(t, PathFromEnv(env), "runs have a PATH (login shell or the default)")
	assert.Equal(t, "kept", envValue(env, "AGENTGATE_TEST_HARMLESS"))
	for _, kv := range env {
		assert.NotContains(t, kv, "/tmp/evil", "a steering variable of the starter reached the run environment")
	}
	assert.Equal(t, HostEnv(context.Background(), HostApp), env, "every host kind gets the same rule")
	clean := CleanEnv(os.Environ())
	assert.Equal(t, "kept", envValue(clean, "AGENTGATE_TEST_HARMLESS"))
	assert.False(t, slices.ContainsFunc(clean, func(kv string) bool { return envValue([]string{kv}, "LD_PRELOAD") != "" }))
}

// TestLoginEnvCache: a kept login environment is used while fresh, for the
// same account, from a private file, and not after a start-up file changed.
func TestLoginEnvCache(t *testing.T) {
	dir := t.TempDir()
	UseLoginEnvCache(dir)
	defer UseLoginEnvCache("")
	home := t.TempDir()
	acct := account{User: "p", Home: home, Shell: "/bin/sh"}
	env := []string{"PATH=/usr/bin:/home/p/bin", "HOME=" + home, "X=a\nb"}
	now := time.Now()
	assert.Nil(t, cachedLoginEnv(acct, now), "nothing kept yet")
	keepLoginEnv(acct, env)
	assert.Equal(t, env, cachedLoginEnv(acct, time.Now()))
	assert.Nil(t, cachedLoginEnv(account{User: "p", Home: home, Shell: "/bin/zsh"}, time.Now()), "another shell")
	assert.Nil(t, cachedLoginEnv(acct, time.Now().Add(LoginEnvMaxAge+time.Minute)), "stale")
	if runtime.GOOS != "windows" {
		require.NoError(t, os.Chmod(filepath.Join(dir, loginEnvCacheName), 0o644))
		assert.Nil(t, cachedLoginEnv(acct, time.Now()), "readable by others")
		require.NoError(t, os.Chmod(filepath.Join(dir, loginEnvCacheName), 0o600))
	}
	profile := filepath.Join(home, ".profile")
	require.NoError(t, os.WriteFile(profile, []byte("export PATH=$PATH:/opt/x\n"), 0o600))
	future := time.Now().Add(time.Second)
	require.NoError(t, os.Chtimes(profile, future, future))
	assert.Nil(t, cachedLoginEnv(acct, time.Now()), "a start-up file changed")
}
