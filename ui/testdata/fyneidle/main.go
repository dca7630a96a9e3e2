// Command fyneidle is the baseline of the ui BenchmarkAppIdle: a Fyne app
// with one window holding one label, shown and a second later hidden
// through Fyne (as a tray app's window is when a person closes it), and
// nothing else: its idle CPU time is the floor Fyne's event loop sets for
// any app built on it.
package main

import (
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/app"
	"fyne.io/fyne/v2/widget"
)

func main() {
	a := app.NewWithID("dev.agentgate.fyneidle")
	w := a.NewWindow("fyneidle")
	w.SetContent(widget.NewLabel("idle"))
	go func() {
		time.Sleep(time.Second)
		fyne.Do(w.Hide)
	}()
	w.ShowAndRun()
}
