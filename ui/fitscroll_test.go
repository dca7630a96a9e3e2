package ui

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestFitHeight(t *testing.T) {
	for _, tc := range []struct{ content, limit, want float32 }{
		{32, 160, 32}, {160, 160, 160}, {400, 160, 160}, {400, 0, 400}, {0, 160, 0},
	} {
		assert.Equal(t, tc.want, FitHeight(tc.content, tc.limit), "%v within %v", tc.content, tc.limit)
	}
}
