//go:build windows

package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/windows"
)

func TestTransient(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{windows.ERROR_SHARING_VIOLATION, true},
		{&os.LinkError{Op: "rename", Err: windows.ERROR_ACCESS_DENIED}, true},
		{&os.PathError{Op: "open", Err: windows.ERROR_LOCK_VIOLATION}, true},
		{fmt.Errorf("x: %w", windows.ERROR_DELETE_PENDING), true},
		{windows.ERROR_FILE_NOT_FOUND, false},
		{windows.ERROR_PATH_NOT_FOUND, false},
		{errors.New("other"), false},
	} {
		assert.Equal(t, c.want, transient(c.err), "%v", c.err)
	}
}

// TestReplaceWaitsForAnotherReader holds the file open the way other
// programs do (os.Open: no FILE_SHARE_DELETE), which makes a rename over it
// fail, and lets go when the first attempt has failed: WriteFile retries
// and succeeds. (Under Wine a reader of this package blocks the same way,
// for lack of POSIX rename semantics; see TestReplaceWhileOpen.)
func TestReplaceWaitsForAnotherReader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, WriteFile(path, []byte("old"), 0o600))
	held, err := os.Open(path)
	require.NoError(t, err)
	var failures []error
	testHookTransient = func(err error) {
		if len(failures) == 0 {
			held.Close()
		}
		failures = append(failures, err)
	}
	defer func() { testHookTransient = nil }()
	require.NoError(t, WriteFile(path, []byte("new"), 0o600))
	held.Close()
	if len(failures) == 0 {
		t.Log("this Windows let a file open without FILE_SHARE_DELETE be replaced; the retry was not needed")
	} else {
		t.Logf("the replacement failed %d time(s) while the file was held (%v), then succeeded", len(failures), failures[0])
	}
	data, err := ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "new", string(data))
}
