//go:build !linux

package changes

import (
	"errors"
	"net"
)

// errNoSocket says this platform has no keeper process.
var errNoSocket = errors.New("the change keeper runs in-process on this platform")

func listen(string) (net.Listener, error) { return nil, errNoSocket }
func dial(string) (net.Conn, error)       { return nil, errNoSocket }
func checkPeer(net.Conn) error            { return errNoSocket }

// keeperProcesses reports whether this platform runs the keeper as its own
// process (hosts share it); elsewhere each host keeps its own index.
const keeperProcesses = false
