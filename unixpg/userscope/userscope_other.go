//go:build !linux

package userscope

import (
	"context"
	"errors"
)

// Delegate fails: systemd scopes are Linux-only.
func Delegate(context.Context) (string, error) {
	return "", errors.New("systemd user scopes are Linux-only")
}
