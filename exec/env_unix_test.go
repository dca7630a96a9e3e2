//go:build unix

package exec

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeShell writes an executable shell script standing in for a login
// shell.
func fakeShell(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "fakeshell")
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755))
	return p
}

// TestLoginEnvReadFromMinimalEnv: the login shell is the account's and
// sees only the minimal environment — nothing of the environment this
// process was started with (an agent's LD_PRELOAD, BASH_ENV, a
// repository's GIT_CONFIG_GLOBAL) reaches its start-up files.
func TestLoginEnvReadFromMinimalEnv(t *testing.T) {
	t.Setenv("BASH_ENV", "/tmp/evil.sh")
	t.Setenv("GIT_CONFIG_GLOBAL", "/tmp/evil.gitconfig")
	t.Setenv("SHELL", "/tmp/evil-shell")
	home := t.TempDir()
	// The stand-in login shell prints what it was given, plus what its
	// start-up files would add.
	sh := fakeShell(t, "shift 3\nexport FROM_PROFILE=yes\nexec /bin/sh -c \"$1\"\n")
	env, read := computeLoginEnv(context.Background(), account{User: "p", Home: home, Shell: sh})
	require.True(t, read)
	assert.Equal(t, "yes", envValue(env, "FROM_PROFILE"))
	assert.Equal(t, home, envValue(env, "HOME"))
	assert.Equal(t, sh, envValue(env, "SHELL"), "SHELL is the account's shell, not $SHELL")
	assert.Equal(t, DefaultPath, envValue(env, "PATH"))
	for _, kv := range env {
		assert.NotContains(t, kv, "/tmp/evil", "the login shell saw the inherited environment")
	}

	// A shell that fails gives the minimal environment itself.
	failing := fakeShell(t, "exit 1\n")
	env, read = computeLoginEnv(context.Background(), account{User: "p", Home: home, Shell: failing})
	assert.False(t, read)
	assert.Equal(t, []string{"HOME=" + home, "USER=p", "LOGNAME=p", "SHELL=" + failing, "PATH=" + DefaultPath}, env)
}

func TestLoginShellEnv(t *testing.T) {
	minimal := []string{"PATH=" + DefaultPath}
	// A real login shell, as the app runs it.
	env, err := loginShellEnv(context.Background(), "/bin/sh", minimal)
	require.NoError(t, err)
	assert.NotEmpty(t, envValue(env, "PATH"))

	// A shell whose startup prints noise, then runs the script.
	sh := fakeShell(t, "echo 'motd noise'\nshift 3\nexport FROM_LOGIN=yes\nexec /bin/sh -c \"$1\"\n")
	env, err = loginShellEnv(context.Background(), sh, minimal)
	require.NoError(t, err)
	assert.Equal(t, "yes", envValue(env, "FROM_LOGIN"))

	// A shell that hangs is bounded by the context, its group killed.
	hang := fakeShell(t, "sleep 60 & sleep 60\n")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err = loginShellEnv(ctx, hang, minimal)
	assert.ErrorContains(t, err, "printed no environment")

	// A shell that fails prints nothing usable.
	_, err = loginShellEnv(context.Background(), fakeShell(t, "exit 1\n"), minimal)
	assert.Error(t, err)
}
