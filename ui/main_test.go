package ui

import (
	"os"
	"testing"
)

// TestMain runs background work of the views in place (see inBackground):
// under Fyne's test driver there is no window thread to hand results to.
func TestMain(m *testing.M) {
	inBackground = func(work func()) { work() }
	os.Exit(m.Run())
}
