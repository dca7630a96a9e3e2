//go:build !linux && !darwin && !windows

package wire

import (
	"errors"
	"runtime"
)

// peerCred fails closed on systems agentgate does not support: without peer
// credentials another user's connection could not be told apart.
func peerCred(fd int) (Peer, error) {
	return Peer{}, errors.New("peer credentials are not implemented on " + runtime.GOOS + "; agentgate refuses connections it cannot attribute")
}
