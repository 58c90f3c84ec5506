package human

import (
	"testing"
	"time"
)

func TestDuration(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{1500 * time.Millisecond, "2s"},
		{42 * time.Second, "42s"},
		{7*time.Hour + 13*time.Minute + 26*time.Second, "7h13m26s"},
		{24*time.Hour - time.Second, "23h59m59s"},
		{24 * time.Hour, "1d0h0m"},
		{7763*time.Hour + 13*time.Minute + 26*time.Second, "323d11h13m"}, // the freshness of issue 35
		{25*time.Hour + 59*time.Minute + 31*time.Second, "1d2h0m"},
		{-90 * time.Second, "-1m30s"},
		{-(48*time.Hour + 5*time.Minute), "-2d0h5m"},
	} {
		if got := Duration(c.d); got != c.want {
			t.Errorf("Duration(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}

func TestPeriod(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{10 * time.Millisecond, "10ms"},
		{1200 * time.Millisecond, "1.2s"},
		{time.Hour, "1h0m0s"},
		{24*time.Hour - time.Millisecond, "23h59m59.999s"},
		{24 * time.Hour, "1d0h0m"},
		{8108*time.Hour + 12*time.Minute + 7*time.Second, "337d20h12m"}, // a reconcile's p99 of issue 35
		{-1500 * time.Millisecond, "-1.5s"},
		{-(48 * time.Hour), "-2d0h0m"},
	} {
		if got := Period(c.d); got != c.want {
			t.Errorf("Period(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}

func TestCount(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{Count(0, "batch", "batches"), "0 batches"},
		{Count(1, "batch", "batches"), "1 batch"},
		{Count(int64(2), "record", "records"), "2 records"},
		{Count(int32(-1), "key", "keys"), "-1 keys"},
		{Count(uint64(1), "entry", "entries"), "1 entry"},
		{Count(uint64(18446744073709551615), "row", "rows"), "18446744073709551615 rows"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
