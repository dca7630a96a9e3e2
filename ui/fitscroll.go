package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
)

// fitScrollLayout sizes a vertical scroll to its content's height, up to
// maxHeight; taller content scrolls. A short command then leaves no empty
// gap under it, and a long one cannot push the rest of the card away.
type fitScrollLayout struct {
	// content is what the scroll holds (a wrapping label: its minimum
	// height follows the width it was last given).
	content fyne.CanvasObject
	// maxHeight is the tallest the scroll grows before it scrolls.
	maxHeight float32
	// overflows is the last value passed to onOverflow.
	overflows bool
	// onOverflow is told when the content starts or stops being taller than
	// maxHeight (nil: not told).
	onOverflow func(bool)
}

// MinSize is the content's minimum size with the height capped at
// maxHeight.
func (l *fitScrollLayout) MinSize(objects []fyne.CanvasObject) fyne.Size {
	min := l.content.MinSize()
	return fyne.NewSize(min.Width, FitHeight(min.Height, l.maxHeight))
}

// Layout gives the scroll the whole space and reports an overflow change.
// The label re-wraps to the new width; Fyne then sees its new minimum size
// and lays the card out again, so the height converges.
func (l *fitScrollLayout) Layout(objects []fyne.CanvasObject, size fyne.Size) {
	for _, o := range objects {
		o.Move(fyne.NewPos(0, 0))
		o.Resize(size)
	}
	over := l.content.MinSize().Height > l.maxHeight
	if over != l.overflows {
		l.overflows = over
		if l.onOverflow != nil {
			l.onOverflow(over)
		}
	}
}

// FitHeight returns the height a box shows for content of height content
// when it grows up to limit: content itself, or limit when content is
// taller (the rest scrolls). A limit of 0 or less means no limit.
func FitHeight(content, limit float32) float32 {
	if limit > 0 && content > limit {
		return limit
	}
	return content
}

// newFitScroll returns a vertical scroll around content that is as tall as
// content up to maxHeight; onOverflow (may be nil) is told when content
// starts or stops being taller.
func newFitScroll(content fyne.CanvasObject, maxHeight float32, onOverflow func(bool)) *fyne.Container {
	scroll := container.NewVScroll(content)
	return container.New(&fitScrollLayout{content: content, maxHeight: maxHeight, onOverflow: onOverflow}, scroll)
}
