package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"github.com/go-gl/glfw/v3.4/glfw"
)

// cardMargin is the gap between the card and the work area's edges, in
// screen coordinates.
const cardMargin = 16

// TopRight returns where a window of width w (screen coordinates) goes to
// sit in the top-right corner of a work area at (x, y) of the given width,
// cardMargin from its edges; never left of the work area.
func TopRight(x, y, width, w int) (int, int) {
	return max(x+width-w-cardMargin, x), y + cardMargin
}

// positionTopRight asks the window system to put win in the top-right
// corner of the primary monitor's work area; where the position cannot be
// known (no monitor information) it centres the window. Wayland ignores
// positions (Fyne documents it), so the compositor places the card there.
// It must run on the Fyne thread of a real (GLFW) driver.
func positionTopRight(win fyne.Window) {
	dw, ok := win.(desktop.Window)
	x, y, width, found := primaryWorkArea()
	if !ok || !found {
		win.CenterOnScreen()
		return
	}
	scale := win.Canvas().Scale()
	px, py := TopRight(x, y, width, int(CardSize.Width*scale))
	dw.RequestPosition(px, py)
}

// primaryWorkArea returns the primary monitor's work area (without panels)
// from GLFW, which Fyne's desktop driver has initialised; found is false
// when GLFW reports no monitor or fails.
func primaryWorkArea() (x, y, width int, found bool) {
	defer func() {
		if recover() != nil {
			found = false
		}
	}()
	m := glfw.GetPrimaryMonitor()
	if m == nil {
		return 0, 0, 0, false
	}
	x, y, width, _ = m.GetWorkarea()
	return x, y, width, width > 0
}
