package main

import (
	"errors"
	"testing"
	"time"
)

// backfill --from takes RFC 3339 times (Z or an offset) and durations ago
// with Go's units plus d for days.
func TestParseFrom(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"2d":                          now.Add(-48 * time.Hour),
		"1d12h":                       now.Add(-36 * time.Hour),
		"1.5d":                        now.Add(-36 * time.Hour),
		"0d":                          now,
		"90m":                         now.Add(-90 * time.Minute),
		"2h30m":                       now.Add(-150 * time.Minute),
		"2026-11-29T10:00:00Z":        time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC),
		"2026-11-29T10:00:00+01:00":   time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC),
		"2026-11-29T10:00:00.5-05:00": time.Date(2026, 11, 29, 15, 0, 0, 5e8, time.UTC),
	} {
		got, err := parseTime(in, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("parseTime(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for in, msg := range map[string]string{
		"2x":         `--from "2x" is neither an RFC 3339 time (2026-11-29T10:00:00Z, 2026-11-29T10:00:00+01:00) nor a duration ago (90m, 2h, 2d, 1d12h)`,
		"d":          `--from "d" is neither an RFC 3339 time (2026-11-29T10:00:00Z, 2026-11-29T10:00:00+01:00) nor a duration ago (90m, 2h, 2d, 1d12h)`,
		"":           `--from "" is neither an RFC 3339 time (2026-11-29T10:00:00Z, 2026-11-29T10:00:00+01:00) nor a duration ago (90m, 2h, 2d, 1d12h)`,
		"2026-11-29": `--from "2026-11-29" is neither an RFC 3339 time (2026-11-29T10:00:00Z, 2026-11-29T10:00:00+01:00) nor a duration ago (90m, 2h, 2d, 1d12h)`,
		"-2h":        `--from "-2h": a duration ago cannot be negative`,
		"-1d":        `--from "-1d": a duration ago cannot be negative`,
		"1d-2h":      `--from "1d-2h" is neither an RFC 3339 time (2026-11-29T10:00:00Z, 2026-11-29T10:00:00+01:00) nor a duration ago (90m, 2h, 2d, 1d12h)`,
	} {
		if _, err := parseTime(in, now); err == nil || err.Error() != msg {
			t.Errorf("parseTime(%q): %v, want %q", in, err, msg)
		}
	}
}

// The command line: a day duration is accepted (the command goes on to
// connect to Temporal), a bad one is a usage error (exit code 2).
func TestBackfillFromCLI(t *testing.T) {
	closed := closedAddr(t)
	code, _, stderr := cli(t, "backfill", "shop.orders", "--from", "2d", "--temporal-address", closed)
	if code != exitFailure || !hasPrefix(stderr, "starter: cannot reach Temporal at "+closed) {
		t.Errorf("--from 2d: exit %d, stderr %q; want 1 and cannot reach Temporal (the time was accepted)", code, stderr)
	}
	code, _, stderr = cli(t, "backfill", "shop.orders", "--from", "2x", "--temporal-address", closed)
	if want := "starter: --from \"2x\" is neither an RFC 3339 time (2026-11-29T10:00:00Z, 2026-11-29T10:00:00+01:00) nor a duration ago (90m, 2h, 2d, 1d12h)\n"; code != exitUsage || stderr != want {
		t.Errorf("--from 2x: exit %d, stderr %q; want 2, %q", code, stderr, want)
	}
	var ee *exitError
	if _, err := parseTime("2x", time.Now()); errors.As(err, &ee) {
		t.Errorf("parseTime returns plain errors; the command makes them usage errors")
	}
}
