//go:build windows

package wire

// peerCred reports unknown credentials: Windows' AF_UNIX offers none. The
// socket directory's ACL (under the per-user profile) keeps other users out.
func peerCred(fd int) (Peer, error) { return Peer{}, nil }
