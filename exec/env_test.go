package exec

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
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

// fakeShell writes an executable shell script standing in for a login
// shell.
func fakeShell(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "fakeshell")
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755))
	return p
}

func TestLoginShellEnv(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no login shell on Windows")
	}
	// A real login shell, as the app runs it.
	env, err := loginShellEnv(context.Background(), "/bin/sh")
	require.NoError(t, err)
	assert.NotEmpty(t, envValue(env, "PATH"))

	// A shell whose startup prints noise, then runs the script.
	sh := fakeShell(t, "echo 'motd noise'\nshift 3\nexport FROM_LOGIN=yes\nexec /bin/sh -c \"$1\"\n")
	env, err = loginShellEnv(context.Background(), sh)
	require.NoError(t, err)
	assert.Equal(t, "yes", envValue(env, "FROM_LOGIN"))

	// A shell that hangs is bounded by the context, its group killed.
	hang := fakeShell(t, "sleep 60 & sleep 60\n")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err = loginShellEnv(ctx, hang)
	assert.ErrorContains(t, err, "printed no environment")

	// A shell that fails prints nothing usable.
	_, err = loginShellEnv(context.Background(), fakeShell(t, "exit 1\n"))
	assert.Error(t, err)
}

func TestHostEnvCLI(t *testing.T) {
	assert.Equal(t, os.Environ(), HostEnv(context.Background(), HostCLI))
	app := HostEnv(context.Background(), HostApp)
	assert.NotEmpty(t, PathFromEnv(app), "the app's environment has a PATH (login shell or fallback)")
}
