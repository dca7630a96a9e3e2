//go:build unix

package prefs

import "os"

// syncDir makes a rename inside dir durable by syncing the directory itself.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
