//go:build !linux

package exec

import "os"

// enlargePipe does nothing where pipe capacity cannot be set.
func enlargePipe(*os.File) {}
