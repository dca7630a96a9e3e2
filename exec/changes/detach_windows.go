package changes

import "syscall"

// detached: on Windows the keeper runs in-process (Open), so this is never
// used to start one.
func detached() *syscall.SysProcAttr { return nil }
