package exec

import (
	"context"
	"os"
	"os/user"

	"golang.org/x/sys/windows"
)

// DefaultPath is the PATH of MinimalEnv on Windows.
const DefaultPath = `C:\Windows\system32;C:\Windows;C:\Windows\System32\Wbem;C:\Windows\System32\WindowsPowerShell\v1.0\`

// readLoginEnv returns the user's default environment: the system and user
// variables of the registry, as a new logon would get them, without this
// process's (CreateEnvironmentBlock with bInherit false).
func readLoginEnv(_ context.Context, _ account, _ []string) ([]string, error) {
	return windows.GetCurrentProcessToken().Environ(false)
}

// currentAccount returns the user's name and profile directory (no login
// shell on Windows).
func currentAccount() account {
	var acct account
	if u, err := user.Current(); err == nil {
		acct.User, acct.Home = u.Username, u.HomeDir
	}
	if acct.Home == "" {
		acct.Home, _ = os.UserHomeDir()
	}
	return acct
}

// privateFile reports whether fi is a regular file (the state directory's
// ACL keeps it private on Windows).
func privateFile(fi os.FileInfo) bool { return fi.Mode().IsRegular() }
