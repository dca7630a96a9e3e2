package ui

import (
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// approveButton is the card's Approve button. It looks like a
// high-importance widget.Button but is deliberately not fyne.Focusable:
// Tab never reaches it and no key (Space, Enter) can press it, so only a
// deliberate click approves. It implements fyne.Disableable for the arming
// delay.
type approveButton struct {
	widget.BaseWidget
	// label is the button's text.
	label string
	// onTapped is called on a click while enabled.
	onTapped func()
	// disabled is true while the card is inert.
	disabled bool
	// hovered is true while the pointer is over the button.
	hovered bool
}

var (
	_ fyne.Tappable      = (*approveButton)(nil)
	_ fyne.Disableable   = (*approveButton)(nil)
	_ desktop.Hoverable  = (*approveButton)(nil)
	_ desktop.Cursorable = (*approveButton)(nil)
)

// newApproveButton returns an enabled button calling tapped on a click.
func newApproveButton(label string, tapped func()) *approveButton {
	b := &approveButton{label: label, onTapped: tapped}
	b.ExtendBaseWidget(b)
	return b
}

// Tapped calls onTapped unless the button is disabled.
func (b *approveButton) Tapped(*fyne.PointEvent) {
	if !b.disabled && b.onTapped != nil {
		b.onTapped()
	}
}

// Disable makes clicks do nothing and greys the button.
func (b *approveButton) Disable() { b.disabled = true; b.Refresh() }

// Enable makes the button clickable.
func (b *approveButton) Enable() { b.disabled = false; b.Refresh() }

// Disabled reports whether clicks are ignored.
func (b *approveButton) Disabled() bool { return b.disabled }

// MouseIn highlights the button.
func (b *approveButton) MouseIn(*desktop.MouseEvent) { b.hovered = true; b.Refresh() }

// MouseMoved does nothing.
func (b *approveButton) MouseMoved(*desktop.MouseEvent) {}

// MouseOut removes the highlight.
func (b *approveButton) MouseOut() { b.hovered = false; b.Refresh() }

// Cursor is the pointer while over the button.
func (b *approveButton) Cursor() desktop.Cursor { return desktop.PointerCursor }

// CreateRenderer draws a rounded background and the label.
func (b *approveButton) CreateRenderer() fyne.WidgetRenderer {
	r := &approveRenderer{b: b, bg: canvas.NewRectangle(color.Transparent), text: canvas.NewText(b.label, color.Black)}
	r.text.TextStyle.Bold = true
	r.text.Alignment = fyne.TextAlignCenter
	r.Refresh()
	return r
}

// approveRenderer renders an approveButton.
type approveRenderer struct {
	// b is the button rendered.
	b *approveButton
	// bg is the background shape.
	bg *canvas.Rectangle
	// text is the label.
	text *canvas.Text
}

// Layout places the background over the whole button and centres the label.
func (r *approveRenderer) Layout(size fyne.Size) {
	r.bg.Resize(size)
	ts := r.text.MinSize()
	r.text.Move(fyne.NewPos(0, (size.Height-ts.Height)/2))
	r.text.Resize(fyne.NewSize(size.Width, ts.Height))
}

// MinSize is the label plus the theme's inner padding, like widget.Button.
func (r *approveRenderer) MinSize() fyne.Size {
	p := r.b.Theme().Size(theme.SizeNameInnerPadding)
	ts := r.text.MinSize()
	return fyne.NewSize(ts.Width+p*4, ts.Height+p*2)
}

// Refresh applies the theme and the state.
func (r *approveRenderer) Refresh() {
	th := r.b.Theme()
	v := fyne.CurrentApp().Settings().ThemeVariant()
	r.bg.CornerRadius = th.Size(theme.SizeNameInputRadius)
	r.text.TextSize = th.Size(theme.SizeNameText)
	switch {
	case r.b.disabled:
		r.bg.FillColor = th.Color(theme.ColorNameDisabledButton, v)
		r.text.Color = th.Color(theme.ColorNameDisabled, v)
	case r.b.hovered:
		r.bg.FillColor = blend(th.Color(theme.ColorNamePrimary, v), th.Color(theme.ColorNameHover, v))
		r.text.Color = th.Color(theme.ColorNameForegroundOnPrimary, v)
	default:
		r.bg.FillColor = th.Color(theme.ColorNamePrimary, v)
		r.text.Color = th.Color(theme.ColorNameForegroundOnPrimary, v)
	}
	r.text.Text = r.b.label
	r.bg.Refresh()
	r.text.Refresh()
}

// Objects returns the background and the label.
func (r *approveRenderer) Objects() []fyne.CanvasObject { return []fyne.CanvasObject{r.bg, r.text} }

// Destroy does nothing.
func (r *approveRenderer) Destroy() {}

// blend lays the translucent colour over on the opaque colour base
// (source-over with premultiplied components, as color.Color returns them).
func blend(base, over color.Color) color.Color {
	br, bg, bb, _ := base.RGBA()
	or, og, ob, oa := over.RGBA()
	mix := func(b, o uint32) uint8 { return uint8((o + b*(0xffff-oa)/0xffff) >> 8) }
	return color.NRGBA{R: mix(br, or), G: mix(bg, og), B: mix(bb, ob), A: 0xff}
}
