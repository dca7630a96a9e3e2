//go:build linux

package exec

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSpliceToFile moves a pipe's bytes to an offset of a file, reports end
// of file with a nil error, and declines a source that is not a descriptor
// without consuming anything.
func TestSpliceToFile(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "spill"))
	require.NoError(t, err)
	defer f.Close()
	data := patternBytes(100 << 10)
	src := osPipeOf(t, data, 10<<10)

	var got int
	for got < len(data) {
		n, ok, err := spliceToFile(src, f, int64(1000+got), len(data)-got)
		require.NoError(t, err)
		require.True(t, ok, "a pipe into a file on %s is spliced", t.TempDir())
		require.Positive(t, n, "bytes remain")
		got += n
	}
	n, ok, err := spliceToFile(src, f, int64(1000+got), 4096)
	assert.True(t, ok)
	assert.NoError(t, err)
	assert.Zero(t, n, "end of file")

	content, err := os.ReadFile(f.Name())
	require.NoError(t, err)
	require.Len(t, content, 1000+len(data))
	assert.Equal(t, make([]byte, 1000), content[:1000], "nothing before the offset is written")
	assert.True(t, bytes.Equal(data, content[1000:]))

	r := bytes.NewReader(data)
	n, ok, err = spliceToFile(r, f, 0, 10)
	assert.False(t, ok, "a reader with no descriptor is declined")
	assert.NoError(t, err)
	assert.Zero(t, n)
	assert.Equal(t, len(data), r.Len(), "nothing was read from it")
}
