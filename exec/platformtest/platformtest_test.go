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

func TestNativePath(t *testing.T) {
	cases := []struct{ in, unix, windows string }{
		{"/home/sam", "/home/sam", `C:\home\sam`},
		{"/", "/", `C:\`},
		{"relative/path", "relative/path", `relative\path`},
		{"~/src", "~/src", `~\src`},
		{"", "", ""},
	}
	for _, c := range cases {
		want := c.unix
		if runtime.GOOS == "windows" {
			want = c.windows
		}
		if got := NativePath(c.in); got != want {
			t.Errorf("NativePath(%q) = %q, want %q", c.in, got, want)
		}
	}
}
