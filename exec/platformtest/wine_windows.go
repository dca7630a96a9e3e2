//go:build windows

package platformtest

import "golang.org/x/sys/windows"

// underWine is true when ntdll.dll exports wine_get_version.
var underWine = windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil
