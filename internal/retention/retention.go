// Package retention holds the rules of bronze retention (docs/design.md,
// "Bronze retention"): the setting's check, the cutoff it gives, and
// which of bronze's (and the quarantine's) data files lie wholly before
// that cutoff, by their time partition or their ingestion-time bounds.
// Pure: no I/O; internal/lake drops the files it names.
package retention

import (
	"fmt"
	"time"
)

// Minimum is the shortest bronze retention accepted: one day, the width
// of bronze's default partition (day(_ingested_at)). Shorter would drop
// nothing a day partition can give up whole.
const Minimum = 24 * time.Hour

// Check returns why d is not a bronze retention, or nil: 0 (keep bronze
// for ever, the default) or at least Minimum. The error names the value.
func Check(d time.Duration) error {
	switch {
	case d < 0:
		return fmt.Errorf("bronze retention %s is negative (0 keeps bronze for ever)", d)
	case d > 0 && d < Minimum:
		return fmt.Errorf("bronze retention %s is shorter than a day: bronze is dropped in whole day partitions (0 keeps it for ever)", d)
	}
	return nil
}

// Cutoff is the ingestion time before which a record is past a retention
// d at now: now − d (UTC, µs precision). A file whose records were all
// ingested before it may be dropped.
func Cutoff(now time.Time, d time.Duration) time.Time {
	return now.Add(-d).UTC().Truncate(time.Microsecond)
}

// PartitionEnd is the first instant after a time partition value of the
// Iceberg transform ("year", "month", "day", "hour": years, months, days
// or hours since 1970-01-01 UTC, Iceberg spec "Partition Transforms"),
// and false for any other transform.
func PartitionEnd(transform string, value int32) (time.Time, bool) {
	epoch := time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
	v := int(value)
	switch transform {
	case "year":
		return epoch.AddDate(v+1, 0, 0), true
	case "month":
		return epoch.AddDate(0, v+1, 0), true
	case "day":
		return epoch.AddDate(0, 0, v+1), true
	case "hour":
		return epoch.Add(time.Duration(v+1) * time.Hour), true
	}
	return time.Time{}, false
}

// File is what the rule needs to know of one data file: the end of its
// time partition on the ingestion column (Partitioned false when the
// file's spec has no such field), else the newest ingestion time in it
// (the column's upper bound from the manifest; HasBound false when the
// manifest has none).
type File struct {
	Partitioned  bool
	PartitionEnd time.Time
	HasBound     bool
	MaxIngested  time.Time
}

// Verdict is what the rule decides for one file.
type Verdict int

const (
	Keep        Verdict = iota // some record is within the retention
	Drop                       // every record was ingested before the cutoff
	KeepUnknown                // no time partition and no bound: cannot tell, kept
)

// Decide drops a file whose every record was ingested before cutoff: its
// time partition ends at or before cutoff, or (a file without one: written
// before the table was partitioned by day, or an unpartitioned
// quarantine) its newest ingestion time is before cutoff. Files are only
// ever dropped whole, never rewritten.
func Decide(f File, cutoff time.Time) Verdict {
	switch {
	case f.Partitioned:
		if !f.PartitionEnd.After(cutoff) {
			return Drop
		}
		return Keep
	case f.HasBound:
		if f.MaxIngested.Before(cutoff) {
			return Drop
		}
		return Keep
	}
	return KeepUnknown
}
