package ui

import "testing"

func TestCardHeight(t *testing.T) {
	for _, tc := range []struct {
		name                      string
		header, body, footer, pad float32
		want                      float32
	}{
		{"short card fits its content", 40, 300, 90, 4, 446},
		{"never below the minimum", 20, 50, 40, 4, CardMinHeight},
		{"never above the full size: the body scrolls", 40, 900, 90, 4, CardSize.Height},
	} {
		if got := CardHeight(tc.header, tc.body, tc.footer, tc.pad); got != tc.want {
			t.Errorf("%s: CardHeight = %v, want %v", tc.name, got, tc.want)
		}
	}
}
