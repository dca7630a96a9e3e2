package platformtest

import (
	"os"
	"runtime"
	"testing"
)

// TestUnderWine checks the detection against the environment the Wine test
// script sets (WINEPREFIX reaches the Windows process's environment).
func TestUnderWine(t *testing.T) {
	_, wineEnv := os.LookupEnv("WINEPREFIX")
	want := runtime.GOOS == "windows" && wineEnv
	if got := UnderWine(); got != want {
		t.Errorf("UnderWine() = %v, want %v (GOOS %s, WINEPREFIX set: %v)", got, want, runtime.GOOS, wineEnv)
	}
}
