//go:build unix && !linux

package exec

import (
	"os"

	"golang.org/x/sys/unix"
)

// dirHandleMode is how directory handles are opened here (there is no
// O_PATH outside Linux).
const dirHandleMode = unix.O_RDONLY

// openDirBeneath opens the directory rel beneath root with walkBeneath:
// there is no openat2 outside Linux.
func openDirBeneath(root *os.File, rel string) (*os.File, error) {
	return walkBeneath(root, rel)
}
