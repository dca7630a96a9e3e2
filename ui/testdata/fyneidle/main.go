// Command fyneidle is the baseline of the ui BenchmarkAppIdle: a Fyne app
// with one window holding one label and nothing else, whose idle CPU time
// is the floor Fyne's event loop sets for any app built on it.
package main

import (
	"fyne.io/fyne/v2/app"
	"fyne.io/fyne/v2/widget"
)

func main() {
	a := app.NewWithID("dev.agentgate.fyneidle")
	w := a.NewWindow("fyneidle")
	w.SetContent(widget.NewLabel("idle"))
	w.ShowAndRun()
}
