//go:build linux

package ui

import (
	"os"
	"path/filepath"
	"testing"

	"fyne.io/fyne/v2/test"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentgate/agentgate/packaging"
	"github.com/agentgate/agentgate/prefs"
	"github.com/agentgate/agentgate/ui/model"
)

// TestStartAtLoginSwitchesTheAutostartEntry: Preferences ▸ Start at login
// is the autostart entry itself (there is no setting beside it): ticking it
// writes the entry for the running binary, unticking removes it, and the
// box shows what is on disk when Preferences opens.
func TestStartAtLoginSwitchesTheAutostartEntry(t *testing.T) {
	test.NewTempApp(t)
	paths := prefs.Paths{ConfigDir: t.TempDir(), StateDir: t.TempDir()}
	store, err := prefs.Open(paths)
	require.NoError(t, err)
	configHome := t.TempDir()
	auto := model.Autostart{ConfigHome: configHome, Executable: "/opt/agentgate/bin/agentgate"}
	v := newPrefsView(&model.AllowedModel{Store: store}, []model.ScopeRef{{Scope: prefs.ScopeGlobal}}, nil, auto)
	defer v.close()
	require.True(t, v.startAtLogin.Visible())
	assert.False(t, v.startAtLogin.Checked)

	test.Tap(v.startAtLogin)
	entry, err := os.ReadFile(filepath.Join(configHome, "autostart", packaging.AutostartFileName))
	require.NoError(t, err, "ticking Start at login wrote no autostart entry")
	assert.Contains(t, string(entry), "Exec=/opt/agentgate/bin/agentgate")
	on, err := packaging.AutostartEnabled(configHome)
	require.NoError(t, err)
	assert.True(t, on)

	again := newPrefsView(&model.AllowedModel{Store: store}, []model.ScopeRef{{Scope: prefs.ScopeGlobal}}, nil, auto)
	defer again.close()
	assert.True(t, again.startAtLogin.Checked, "Preferences opened again shows the entry that is on disk")

	test.Tap(v.startAtLogin)
	_, err = os.Stat(filepath.Join(configHome, "autostart", packaging.AutostartFileName))
	assert.True(t, os.IsNotExist(err), "unticking left the autostart entry")
}
