//go:build linux

package cli

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rawPipe returns a pipe whose ends are plain blocking descriptors, as a
// stdin an MCP client passes is.
func rawPipe(t *testing.T) (r, w int) {
	var p [2]int
	require.NoError(t, syscall.Pipe2(p[:], syscall.O_CLOEXEC))
	t.Cleanup(func() { syscall.Close(p[0]); syscall.Close(p[1]) })
	return p[0], p[1]
}

func TestReopenPollableReadsThePipe(t *testing.T) {
	r, w := rawPipe(t)
	f, err := reopenPollable(r)
	require.NoError(t, err)
	defer f.Close()
	// Only a file served by the poller takes a deadline.
	require.NoError(t, f.SetReadDeadline(time.Now().Add(10*time.Second)))
	_, err = syscall.Write(w, []byte("{\"jsonrpc\":\"2.0\"}\n"))
	require.NoError(t, err)
	buf := make([]byte, 64)
	n, err := f.Read(buf)
	require.NoError(t, err)
	assert.Equal(t, "{\"jsonrpc\":\"2.0\"}\n", string(buf[:n]))

	// The original descriptor's open file description is not changed.
	flags, err := fcntlGetFlags(r)
	require.NoError(t, err)
	assert.Zero(t, flags&syscall.O_NONBLOCK, "O_NONBLOCK set on the original descriptor")

	syscall.Close(w)
	_, err = f.Read(buf)
	assert.Equal(t, io.EOF, err, "the writer's close must read as end of file")
}

func TestReopenPollableCloseUnblocksARead(t *testing.T) {
	r, _ := rawPipe(t)
	f, err := reopenPollable(r)
	require.NoError(t, err)
	assertCloseUnblocksRead(t, f)
}

// assertCloseUnblocksRead checks that closing f ends a read waiting on it.
func assertCloseUnblocksRead(t *testing.T, f *os.File) {
	t.Helper()
	read := make(chan error, 1)
	go func() {
		_, err := f.Read(make([]byte, 8))
		read <- err
	}()
	time.Sleep(20 * time.Millisecond) // let the read start waiting; correct either way
	require.NoError(t, f.Close())
	select {
	case err := <-read:
		assert.True(t, errors.Is(err, os.ErrClosed), "read after close: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not unblock the read")
	}
}

func TestReopenPollableRefusesWhatIsNotAPipe(t *testing.T) {
	path := filepath.Join(t.TempDir(), "requests")
	require.NoError(t, os.WriteFile(path, []byte("{}\n"), 0o600))
	file, err := os.Open(path)
	require.NoError(t, err)
	defer file.Close()
	_, err = reopenPollable(int(file.Fd()))
	assert.ErrorContains(t, err, "not a pipe")

	_, err = reopenPollable(-1)
	assert.Error(t, err)
}

// fcntlGetFlags returns fd's file status flags.
func fcntlGetFlags(fd int) (int, error) {
	flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFL, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(flags), nil
}

// TestPollableSocketReadsTheSocket: the stdin a Node.js client passes is one
// end of a socketpair; its poller-served duplicate reads what the client
// writes, takes a deadline, and reads end of file once the client closes.
func TestPollableSocketReadsTheSocket(t *testing.T) {
	p, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	ours, client := p[0], p[1]
	t.Cleanup(func() { syscall.Close(ours); syscall.Close(client) })
	f, err := pollableSocket(ours)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, f.SetReadDeadline(time.Now().Add(10*time.Second)))
	_, err = syscall.Write(client, []byte("{\"jsonrpc\":\"2.0\"}\n"))
	require.NoError(t, err)
	buf := make([]byte, 64)
	n, err := f.Read(buf)
	require.NoError(t, err)
	assert.Equal(t, "{\"jsonrpc\":\"2.0\"}\n", string(buf[:n]))
	syscall.Close(client)
	_, err = f.Read(buf)
	assert.Equal(t, io.EOF, err, "the client's close must read as end of file")
}

func TestPollableSocketCloseUnblocksARead(t *testing.T) {
	p, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	t.Cleanup(func() { syscall.Close(p[0]); syscall.Close(p[1]) })
	f, err := pollableSocket(p[0])
	require.NoError(t, err)
	assertCloseUnblocksRead(t, f)
}

func TestPollableSocketRefusesWhatIsNotASocket(t *testing.T) {
	r, _ := rawPipe(t)
	_, err := pollableSocket(r)
	assert.ErrorContains(t, err, "not a socket")
	_, err = pollableSocket(-1)
	assert.Error(t, err)
}
