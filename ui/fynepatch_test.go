package ui

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentgate/agentgate/exec/platformtest"
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
	// At rest, unpatched, the app would poll at 60 Hz.
	platformtest.RequirePatchedModule(t, app, "fyne.io/fyne/v2", "internal/driver/glfw/loop.go", "idleTickRate", "fyne-idle-loop.patch")
}
