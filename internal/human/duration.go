package human

import (
	"fmt"
	"time"
)

// Duration renders d for a person: below a day Go's form rounded to the
// second ("42s", "7h13m26s", "0s"); from a day on days, hours and minutes,
// rounded to the minute ("1d0h0m", "323d11h13m" for 7763h13m26s). A
// negative d gets a leading "-". It never fails.
func Duration(d time.Duration) string {
	if d < 0 {
		return "-" + Duration(-d)
	}
	if d < 24*time.Hour {
		return d.Round(time.Second).String()
	}
	m := int64(d.Round(time.Minute) / time.Minute)
	return fmt.Sprintf("%dd%dh%dm", m/(24*60), m/60%24, m%60)
}

// Period renders a configured or measured period for a person: below a
// day Go's form unrounded ("10ms", "1.2s", "1h0m0s"), so that a
// sub-second setting reads as given; from a day on what Duration gives
// ("337d20h12m" for 8108h12m). A negative d gets a leading "-".
func Period(d time.Duration) string {
	if d > -24*time.Hour && d < 24*time.Hour {
		return d.String()
	}
	return Duration(d)
}
