package ui

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestTopRight(t *testing.T) {
	assert.Equal(t, [2]int{1264, 16}, func() [2]int { x, y := TopRight(0, 0, 1840, 560); return [2]int{x, y} }())
	assert.Equal(t, [2]int{100, 46}, func() [2]int { x, y := TopRight(100, 30, 300, 560); return [2]int{x, y} }(), "never left of the work area")
}
