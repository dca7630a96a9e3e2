//go:build windows

package exec

import (
	"context"
	"errors"
)

// loginShellEnv is not used on Windows, where programs started from the
// desktop inherit the user's full environment.
func loginShellEnv(context.Context, string) ([]string, error) {
	return nil, errors.New("no login shell on Windows")
}
