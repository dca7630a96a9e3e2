package ui

import (
	"debug/buildinfo"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFyneEventLoopIsPatched: the app as `make build` builds it (in the
// workspace scripts/fyne-work.sh makes) links the copy of Fyne whose event
// loop polls at 2 Hz while no window is visible. Without a built app (a
// plain `go test`) there is nothing to check.
func TestFyneEventLoopIsPatched(t *testing.T) {
	app := os.Getenv("AGENTGATE_BIN")
	if app == "" {
		app = filepath.Join("..", "bin", "agentgate")
	}
	info, err := buildinfo.ReadFile(app)
	if err != nil {
		t.Skipf("no built app to look at (%v); make build builds it", err)
	}
	for _, m := range info.Deps {
		if m.Path != "fyne.io/fyne/v2" {
			continue
		}
		if m.Replace == nil {
			t.Fatalf("%s links fyne.io/fyne/v2 %s as it is: at rest it would poll at 60 Hz (build it with make)", app, m.Version)
		}
		loop, err := os.ReadFile(filepath.Join(m.Replace.Path, "internal", "driver", "glfw", "loop.go"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(loop), "idleTickRate") {
			t.Fatalf("%s links %s, which holds Fyne's event loop without scripts/fyne-idle-loop.patch", app, m.Replace.Path)
		}
		return
	}
	t.Fatalf("%s does not link fyne.io/fyne/v2", app)
}
