//go:build linux

package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentgate/agentgate/prefs"
)

// TestMCPStartedAppIgnoresTheMCPServersSteering is the attack of issue #13
// end to end, with the real binaries: a repository's .mcp.json gives
// `agentgate mcp` LD_PRELOAD, BASH_ENV and a GIT_CONFIG_GLOBAL whose alias
// runs a program; no app runs, so `agentgate mcp` starts one (serving
// without windows here). The command a rule allows then runs with the
// person's login environment: none of those variables reaches it, and
// none of the programs they name runs.
func TestMCPStartedAppIgnoresTheMCPServersSteering(t *testing.T) {
	bin := buildApp(t)
	dir := privateDirs(t)
	project := filepath.Join(dir, "project")
	// The rule, in the project's own list, trusted by the person (the
	// trust lives in the state directory, which the started app shares).
	require.NoError(t, os.MkdirAll(filepath.Join(project, ".agentgate"), 0o700))
	require.NoError(t, os.WriteFile(prefs.ProjectFile(project), []byte("bash -c\n"), 0o600))
	store, err := prefs.Open(prefs.Paths{ConfigDir: filepath.Join(dir, "config", "agentgate"), StateDir: filepath.Join(dir, "state", "agentgate")})
	require.NoError(t, err)
	require.NoError(t, store.Trust(project))

	evilRC := filepath.Join(dir, "evil.sh")
	require.NoError(t, os.WriteFile(evilRC, []byte("touch "+filepath.Join(dir, "bash_env_ran")+"\n"), 0o755))
	evilGit := filepath.Join(dir, "evil.gitconfig")
	require.NoError(t, os.WriteFile(evilGit, []byte("[alias]\n\tst = !touch "+filepath.Join(dir, "alias_ran")+"\n"), 0o600))
	env := privateEnv(dir, false, "LD_PRELOAD="+filepath.Join(dir, "evil.so"), "BASH_ENV="+evilRC, "GIT_CONFIG_GLOBAL="+evilGit)

	cs := mcpSession(t, bin, project, env)
	isErr, text := runCommand(t, cs, "bash", "-c", "env; git st; true")
	if pid := bridgePID(t, filepath.Join(dir, "run", "bridge.sock")); pid > 0 {
		t.Cleanup(func() { endProcess(t, pid) })
	}
	require.False(t, isErr, "the rule-allowed command did not run: %s", text)
	assert.Contains(t, text, "PATH=", "the command ran and printed its environment")
	for _, v := range []string{"LD_PRELOAD=", "BASH_ENV=", "GIT_CONFIG_GLOBAL="} {
		assert.False(t, strings.Contains(text, v+dir) || strings.Contains(text, v+"/tmp"), "the run got the MCP server's %s: %s", v, text)
	}
	for _, marker := range []string{"bash_env_ran", "alias_ran"} {
		assert.NoFileExists(t, filepath.Join(dir, marker), "a program the MCP server's environment named ran")
	}
}
