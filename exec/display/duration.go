package display

import (
	"fmt"
	"time"
)

// Duration renders d for a person, rounded up to the second: "45 s",
// "2 min", "9 min 12 s", "1 h", "1 h 5 min" (seconds are left out from an
// hour on). A negative or zero duration is "0 s".
func Duration(d time.Duration) string {
	if d <= 0 {
		return "0 s"
	}
	s := int64((d + time.Second - 1) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%d s", s)
	case s < 3600 && s%60 == 0:
		return fmt.Sprintf("%d min", s/60)
	case s < 3600:
		return fmt.Sprintf("%d min %d s", s/60, s%60)
	case s%3600/60 == 0:
		return fmt.Sprintf("%d h", s/3600)
	}
	return fmt.Sprintf("%d h %d min", s/3600, s%3600/60)
}
