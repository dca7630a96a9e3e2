package packaging

import (
	"bytes"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestExecArg(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain path stays bare", "/usr/local/bin/agentgate", "/usr/local/bin/agentgate"},
		{"space is quoted", "/home/a b/agentgate", `"/home/a b/agentgate"`},
		{"percent is doubled", "/opt/100%/agentgate", "/opt/100%%/agentgate"},
		{"dollar is escaped inside quotes", "/opt/x$y/agentgate", `"/opt/x\\$y/agentgate"`},
		{"backquote is escaped inside quotes", "/opt/x`y/agentgate", "\"/opt/x\\\\`y/agentgate\""},
		{"double quote is escaped inside quotes", `/opt/x"y/agentgate`, `"/opt/x\\"y/agentgate"`},
		{"backslash becomes four", `/opt/x\y/agentgate`, `"/opt/x\\\\y/agentgate"`},
		{"single quote is quoted", "/opt/it's/agentgate", `"/opt/it's/agentgate"`},
		{"non-ASCII needs no quoting", "/home/zoë/agentgate", "/home/zoë/agentgate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := execArg(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestExecArgRefusesControlCharacters(t *testing.T) {
	for _, in := range []string{"/opt/a\nb", "/opt/a\tb", "/opt/a\x7fb", "/opt/a\x1bb"} {
		_, err := execArg(in)
		assert.ErrorContains(t, err, "control character", "input %q", in)
	}
}

func TestAutostartEntry(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("checks the Exec quoting of a Unix path; XDG autostart entries are read on Linux desktops only")
	}
	entry, err := AutostartEntry("/home/a b/.local/bin/agentgate")
	require.NoError(t, err)
	text := string(entry)
	assert.Contains(t, text, "\nExec=\"/home/a b/.local/bin/agentgate\" --background\n")
	assert.Contains(t, text, "\nTryExec=/home/a b/.local/bin/agentgate\n")
	assert.Contains(t, text, "\nX-GNOME-Autostart-enabled=true\n")
	assert.True(t, strings.HasPrefix(text, "[Desktop Entry]\n"))
	assert.Equal(t, 1, strings.Count(text, "\nExec="), "exactly one Exec line")
	assert.Equal(t, len(strings.Split(autostartTemplate, "\n")), len(strings.Split(text, "\n")),
		"only Exec and TryExec are replaced")

	if tool, err := exec.LookPath("desktop-file-validate"); err == nil {
		path := filepath.Join(t.TempDir(), AutostartFileName)
		require.NoError(t, os.WriteFile(path, entry, 0o644))
		out, err := exec.Command(tool, path).CombinedOutput()
		assert.NoError(t, err, "desktop-file-validate: %s", out)
	} else {
		t.Log("desktop-file-validate not installed (Debian package desktop-file-utils): entry not validated")
	}
}

func TestAutostartEntryRefusesRelativePath(t *testing.T) {
	_, err := AutostartEntry("agentgate")
	assert.ErrorContains(t, err, "not absolute")
}

func TestEnableDisableAutostart(t *testing.T) {
	configHome := filepath.Join(t.TempDir(), "config")
	exe := filepath.Join(string(filepath.Separator), "opt", "agentgate", "agentgate")
	if runtime.GOOS == "windows" {
		exe = `C:\agentgate\agentgate.exe`
	}

	on, err := AutostartEnabled(configHome)
	require.NoError(t, err)
	assert.False(t, on, "no entry yet")

	require.NoError(t, EnableAutostart(configHome, exe))
	on, err = AutostartEnabled(configHome)
	require.NoError(t, err)
	assert.True(t, on)
	written, err := os.ReadFile(AutostartPath(configHome))
	require.NoError(t, err)
	want, err := AutostartEntry(exe)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(written))

	require.NoError(t, EnableAutostart(configHome, exe), "enabling twice replaces the entry")

	require.NoError(t, DisableAutostart(configHome))
	_, err = os.Stat(AutostartPath(configHome))
	assert.ErrorIs(t, err, os.ErrNotExist)
	require.NoError(t, DisableAutostart(configHome), "disabling twice is not an error")
	on, err = AutostartEnabled(configHome)
	require.NoError(t, err)
	assert.False(t, on)
}

func TestAutostartEnabledHonoursSwitchedOffEntries(t *testing.T) {
	tests := []struct {
		name, extra string
		want        bool
	}{
		{"as written", "", true},
		{"switched off in GNOME", "X-GNOME-Autostart-enabled=false\n", false},
		{"hidden", "Hidden=true\n", false},
		{"hidden false", "Hidden=false\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			configHome := t.TempDir()
			require.NoError(t, os.MkdirAll(filepath.Dir(AutostartPath(configHome)), 0o755))
			entry := strings.Replace(autostartTemplate, "X-GNOME-Autostart-enabled=true\n", tt.extra, 1)
			require.NoError(t, os.WriteFile(AutostartPath(configHome), []byte(entry), 0o644))
			got, err := AutostartEnabled(configHome)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestEmbeddedIconsArePNGsOfTheirNominalSize(t *testing.T) {
	tests := []struct {
		name string
		data []byte
		size int
	}{
		{"app icon", AppIconPNG, 512},
		{"tray idle", TrayIdlePNG, 64},
		{"tray pending", TrayPendingPNG, 64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := png.DecodeConfig(bytes.NewReader(tt.data))
			require.NoError(t, err)
			assert.Equal(t, tt.size, cfg.Width)
			assert.Equal(t, tt.size, cfg.Height)
		})
	}
	assert.NotEqual(t, TrayIdlePNG, TrayPendingPNG, "the pending icon differs from the idle one")
}
