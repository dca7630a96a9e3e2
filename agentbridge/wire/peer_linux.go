//go:build linux

package wire

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// peerCred reads SO_PEERCRED (uid and pid) and, when readable, the peer's
// executable from /proc/<pid>/exe.
func peerCred(fd int) (Peer, error) {
	cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		return Peer{}, fmt.Errorf("read the peer's credentials (SO_PEERCRED): %w", err)
	}
	p := Peer{Known: true, UID: int(cred.Uid), PID: int(cred.Pid)}
	if p.PID > 0 {
		p.Exe, _ = os.Readlink("/proc/" + strconv.Itoa(p.PID) + "/exe")
	}
	return p, nil
}
