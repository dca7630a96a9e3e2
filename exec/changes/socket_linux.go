package changes

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// socketName is the keeper's socket for stateDir: a name in the abstract
// namespace (no file to leave behind or to place within a path-length
// limit), derived from the state directory so each has its own keeper.
// Any local user could bind such a name, so both ends check that the
// other runs as this user (checkPeer).
func socketName(stateDir string) string {
	sum := sha256.Sum256([]byte(stateDir))
	return "@agentgate-changes-" + hex.EncodeToString(sum[:12])
}

// listen opens the keeper's socket for stateDir.
func listen(stateDir string) (net.Listener, error) {
	return net.Listen("unix", socketName(stateDir))
}

// dial connects to the keeper serving stateDir and checks it runs as this
// user.
func dial(stateDir string) (net.Conn, error) {
	c, err := net.Dial("unix", socketName(stateDir))
	if err != nil {
		return nil, err
	}
	if err := checkPeer(c); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// checkPeer fails unless the other end of c runs as this process's user.
func checkPeer(c net.Conn) error {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return fmt.Errorf("not a unix socket")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return err
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return err
	}
	if credErr != nil {
		return credErr
	}
	if int(cred.Uid) != os.Getuid() {
		return fmt.Errorf("the change keeper socket belongs to uid %d, not to this user (%d)", cred.Uid, os.Getuid())
	}
	return nil
}

// keeperProcesses reports whether this platform runs the keeper as its own
// process (hosts share it); elsewhere each host keeps its own index.
const keeperProcesses = true
