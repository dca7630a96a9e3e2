// Package ui is agentgate's desktop app: approval cards, the tray, the
// Preferences window and the Processes window. It is the only package that
// knows Fyne.
package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/app"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"
)

// AppID is the application identifier, the same as in FyneApp.toml.
const AppID = "dev.agentgate.agentgate"

// Main starts the desktop app and returns the process exit code when it quits.
func Main() int {
	a := app.NewWithID(AppID)
	w := a.NewWindow("agentgate — Processes")
	w.SetContent(container.NewCenter(widget.NewLabel("No commands have run yet.")))
	w.Resize(fyne.NewSize(720, 420))
	w.SetMaster()
	w.ShowAndRun()
	return 0
}
