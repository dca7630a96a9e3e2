package ui

import (
	"fmt"
	"os"
	"runtime"

	"github.com/go-gl/glfw/v3.4/glfw"
)

// noDisplayReason returns why this process cannot open a window, or "" when
// it can. On Linux and the BSDs a process with neither DISPLAY nor
// WAYLAND_DISPLAY in its environment has no display ("neither DISPLAY nor
// WAYLAND_DISPLAY is set"). Everywhere, GLFW must start and create a hidden
// OpenGL 2.1 window as Fyne will (the display may not open, or the GL driver
// may fail: no GLX, no usable framebuffer configuration); otherwise the
// reason names the display and GLFW's error. The probe's window and GLFW are
// taken down again, so Fyne starts afresh. It must run on the main thread
// (Fyne's driver locks the main goroutine to it) before Fyne starts.
func noDisplayReason() string {
	if runtime.GOOS != "darwin" && runtime.GOOS != "windows" && os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
		return "neither DISPLAY nor WAYLAND_DISPLAY is set"
	}
	if err := probeWindow(); err != nil {
		where := "the display"
		if d := os.Getenv("WAYLAND_DISPLAY"); d != "" {
			where = "the display WAYLAND_DISPLAY=" + d
		}
		if d := os.Getenv("DISPLAY"); d != "" {
			where = "the display DISPLAY=" + d
		}
		return where + " cannot show windows: " + err.Error()
	}
	return ""
}

// probeWindow starts GLFW, creates and destroys a hidden OpenGL window with
// the context Fyne asks for, and terminates GLFW. go-gl/glfw panics on some
// errors; they are returned as errors.
func probeWindow() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	if err := glfw.Init(); err != nil {
		return err
	}
	defer glfw.Terminate()
	glfw.DefaultWindowHints()
	glfw.WindowHint(glfw.Visible, glfw.False)
	glfw.WindowHint(glfw.ContextVersionMajor, 2)
	glfw.WindowHint(glfw.ContextVersionMinor, 1)
	w, err := glfw.CreateWindow(16, 16, "agentgate display probe", nil, nil)
	if err != nil {
		return err
	}
	w.Destroy()
	return nil
}
