//go:build darwin

package wire

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// peerCred reads LOCAL_PEERCRED (uid) and LOCAL_PEERPID (pid). The
// executable is not looked up (macOS has no /proc).
func peerCred(fd int) (Peer, error) {
	cred, err := unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	if err != nil {
		return Peer{}, fmt.Errorf("read the peer's credentials (LOCAL_PEERCRED): %w", err)
	}
	p := Peer{Known: true, UID: int(cred.Uid)}
	if pid, err := unix.GetsockoptInt(fd, unix.SOL_LOCAL, unix.LOCAL_PEERPID); err == nil {
		p.PID = pid
	}
	return p, nil
}
