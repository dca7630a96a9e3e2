package display

import (
	"testing"
	"time"
)

func TestDuration(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{-time.Second, "0 s"},
		{0, "0 s"},
		{time.Nanosecond, "1 s"},
		{45 * time.Second, "45 s"},
		{59*time.Second + time.Millisecond, "1 min"},
		{2 * time.Minute, "2 min"},
		{9*time.Minute + 12*time.Second, "9 min 12 s"},
		{12 * time.Minute, "12 min"},
		{time.Hour, "1 h"},
		{time.Hour + 30*time.Second, "1 h"},
		{time.Hour + 5*time.Minute, "1 h 5 min"},
		{25 * time.Hour, "25 h"},
	} {
		if got := Duration(c.d); got != c.want {
			t.Errorf("Duration(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}
