package retention

import (
	"testing"
	"time"
)

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		d  time.Duration
		ok bool
	}{{0, true}, {24 * time.Hour, true}, {30 * 24 * time.Hour, true}, {23 * time.Hour, false}, {-time.Hour, false}} {
		if err := Check(c.d); (err == nil) != c.ok {
			t.Errorf("Check(%s) = %v, want ok %v", c.d, err, c.ok)
		}
	}
}

func TestPartitionEnd(t *testing.T) {
	for _, c := range []struct {
		transform string
		value     int32
		want      string
	}{
		{"day", 0, "1970-01-02T00:00:00Z"},
		{"day", 20454, "2026-01-02T00:00:00Z"}, // 2026-01-01
		{"hour", 24 * 20454, "2026-01-01T01:00:00Z"},
		{"month", 672, "2026-02-01T00:00:00Z"}, // 2026-01
		{"year", 56, "2027-01-01T00:00:00Z"},   // 2026
	} {
		got, ok := PartitionEnd(c.transform, c.value)
		if !ok || got.Format(time.RFC3339) != c.want {
			t.Errorf("PartitionEnd(%s, %d) = %s %v, want %s", c.transform, c.value, got.Format(time.RFC3339), ok, c.want)
		}
	}
	if _, ok := PartitionEnd("bucket", 3); ok {
		t.Error("bucket is no time partition")
	}
}

func TestDecide(t *testing.T) {
	now := time.Date(2026, 2, 20, 12, 0, 0, 0, time.UTC)
	cutoff := Cutoff(now, 30*24*time.Hour)
	if want := time.Date(2026, 1, 21, 12, 0, 0, 0, time.UTC); !cutoff.Equal(want) {
		t.Fatalf("cutoff %s, want %s", cutoff, want)
	}
	day := func(y int, m time.Month, d int) File {
		return File{Partitioned: true, PartitionEnd: time.Date(y, m, d+1, 0, 0, 0, 0, time.UTC)}
	}
	for _, c := range []struct {
		name string
		f    File
		want Verdict
	}{
		{"day before the cutoff's day", day(2026, 1, 20), Drop},
		{"the cutoff's own day (part within)", day(2026, 1, 21), Keep},
		{"a later day", day(2026, 2, 15), Keep},
		{"day ending exactly at the cutoff", File{Partitioned: true, PartitionEnd: cutoff}, Drop},
		{"unpartitioned, newest before", File{HasBound: true, MaxIngested: cutoff.Add(-time.Microsecond)}, Drop},
		{"unpartitioned, newest at the cutoff", File{HasBound: true, MaxIngested: cutoff}, Keep},
		{"no partition, no bound", File{}, KeepUnknown},
	} {
		if got := Decide(c.f, cutoff); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
