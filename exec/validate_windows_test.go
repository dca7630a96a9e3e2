//go:build windows

package exec

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestValidateBatchArguments(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(root, "build.bat"), []byte("@echo %1\r\n"), 0o755))
	cases := []struct {
		argv []string
		ok   bool
	}{
		{[]string{`.\build.bat`, "plain", "--flag"}, true},
		{[]string{`.\build.bat`, "a&calc"}, false},
		{[]string{`.\build.bat`, `"quoted"`}, false},
		{[]string{`.\build.bat`, "100%"}, false},
	}
	for _, tc := range cases {
		_, err := Validate(Proposal{Argv: tc.argv, ProjectRoot: root}, "")
		if tc.ok {
			assert.NoError(t, err, tc.argv)
			continue
		}
		var ref *Refusal
		require.True(t, errors.As(err, &ref), tc.argv)
		assert.Equal(t, CodeBatchArgumentUnsafe, ref.Code)
		assert.Contains(t, ref.Message, "argument 1")
	}
}
