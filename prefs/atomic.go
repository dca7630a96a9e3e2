package prefs

import (
	"os"

	"github.com/agentgate/agentgate/exec/atomicfile"
)

// WriteFileAtomic replaces the file at path with data so that a reader, or a
// crash at any moment, sees either the old content or the new, never a mix:
// it writes a temporary file in the same directory, syncs it to disk, renames
// it over path and, on Unix, syncs the directory so the rename itself is
// durable. The new file gets perm (before the umask); a missing directory is
// an error (create it first). On failure the temporary file is removed and
// path is left as it was. On Windows the rename retries briefly while
// another program holds the file open (see package exec/atomicfile).
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	return atomicfile.WriteFile(path, data, perm)
}
