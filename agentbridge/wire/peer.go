package wire

import (
	"errors"
	"net"
	"os"
	"runtime"
)

// Peer is what the operating system says about the process on the other end
// of a Unix socket.
type Peer struct {
	// Known is false where the OS offers no peer credentials (Windows).
	Known bool
	// UID is the peer's effective user id at connect (listen, for a server) time.
	UID int
	// PID is the peer's process id, 0 when unknown.
	PID int
	// Exe is the peer's executable path when readable (Linux /proc), else "".
	Exe string
}

// ErrNotUnixConn is returned by PeerOf for a connection that is not a Unix
// socket.
var ErrNotUnixConn = errors.New("not a Unix socket connection")

// SameUser reports whether the peer is known to run as the current user. On
// Windows, where AF_UNIX has no peer credentials (Known is false), it
// reports true: the socket directory's ACL is the protection there.
func (p Peer) SameUser() bool {
	if !p.Known {
		return runtime.GOOS == "windows"
	}
	return p.UID == os.Getuid()
}

// PeerOf returns the credentials of the process on the other end of c, which
// must be a *net.UnixConn.
func PeerOf(c net.Conn) (Peer, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return Peer{}, ErrNotUnixConn
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return Peer{}, err
	}
	var peer Peer
	var credErr error
	if err := raw.Control(func(fd uintptr) { peer, credErr = peerCred(int(fd)) }); err != nil {
		return Peer{}, err
	}
	return peer, credErr
}
