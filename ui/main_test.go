package ui

import (
	"os"
	"testing"
	"time"
)

// TestMain runs background work of the views in place (see inBackground)
// and leaves the card's arming to the tests (see afterFunc): under Fyne's
// test driver there is no window thread to hand results to.
func TestMain(m *testing.M) {
	inBackground = func(work func()) { work() }
	afterFunc = func(d time.Duration, _ func()) *time.Timer { return time.NewTimer(d) }
	os.Exit(m.Run())
}
