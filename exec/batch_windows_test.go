//go:build windows

package exec

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBatchFileRunsAsApproved plants a build.bat in the project, which is
// the run's working directory, beside the approved tools\build.bat that
// PATH finds for argv ["build", …]. Windows runs a batch file through
// cmd.exe, which looks the command line's first word up again, current
// directory first; the executor must make cmd.exe run the approved file.
func TestBatchFileRunsAsApproved(t *testing.T) {
	e, root := newTestExecutor(t, Config{})
	tools := filepath.Join(root, "tools")
	require.NoError(t, os.MkdirAll(tools, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "build.bat"), []byte("@echo planted %1\r\n"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "build.cmd"), []byte("@echo planted %1\r\n"), 0o755))
	approved := filepath.Join(tools, "build.bat")
	require.NoError(t, os.WriteFile(approved, []byte("@echo approved %1 %~2\r\n"), 0o755))

	for _, argv := range [][]string{
		{"build", "x", "two words"},           // found on PATH
		{`tools\build.bat`, "x", "two words"}, // a path relative to the cwd
		{approved, "x", "two words"},          // the absolute path
	} {
		cmd, err := Validate(Proposal{Argv: argv, ProjectRoot: root}, tools)
		require.NoError(t, err, argv)
		require.Equal(t, approved, cmd.Executable, argv)
		require.Equal(t, root, cmd.Dir, "the planted file sits in the run's working directory")
		r, err := e.Start(cmd, Meta{Provider: "test"})
		require.NoError(t, err, argv)
		rec := waitRun(t, r)
		require.Equal(t, StateExited, rec.State, argv)
		assert.Equal(t, "approved x two words\r\n", string(readStream(t, r, Stdout)), "argv %q ran another file than %s", argv, approved)
	}
}
