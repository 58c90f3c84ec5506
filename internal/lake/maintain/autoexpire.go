package maintain

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
)

// PropSnapshotsRetain is the table property that bounds the Iceberg
// snapshots a table keeps between batches: a commit that leaves the table
// with more than half again as many expires all but the newest this many
// (AutoExpire). "0" turns it off. Unset, defaultSnapshotsRetain applies.
//
// Why: every Iceberg commit rewrites the table's metadata.json, which
// lists every retained snapshot (Iceberg spec, "Table Metadata"), and
// every load parses it, so a batch's fixed cost grows with the snapshots
// kept. Streaming batches every few seconds would otherwise keep tens of
// thousands until the scheduled expiry (5 days by default): measured with
// BenchmarkBatchAfterCommits, a 5-record batch took 45 ms with 50
// snapshots and 336 ms with 550. Point-in-time reads belong to the SCD2
// history table; Iceberg time travel on these tables covers the newest
// snapshots only (and any snapshot a tag or branch holds).
const PropSnapshotsRetain = "lakemirror.snapshots.retain"

// defaultSnapshotsRetain is PropSnapshotsRetain's default: with the
// default --max-wait of 2 s, at least the last few minutes of batches.
const defaultSnapshotsRetain = 100

// snapshotsRetain is tbl's PropSnapshotsRetain (default when unset or
// not a non-negative integer).
func snapshotsRetain(tbl *table.Table) int {
	v, ok := tbl.Properties()[PropSnapshotsRetain]
	if !ok {
		return defaultSnapshotsRetain
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return defaultSnapshotsRetain
	}
	return n
}

// AutoExpire expires tbl's Iceberg snapshots beyond the newest
// PropSnapshotsRetain when it holds more than 1.5 times that many, in a
// commit of its own (commitExpiry); the files only expired snapshots
// referenced (manifest lists, manifests, data files compacted or purged
// away) are deleted after the commit (DeleteExpiredFiles). A snapshot a tag or
// branch holds is kept, and so is any snapshot younger than Iceberg's
// history.expire.max-snapshot-age-ms when the table sets it to a
// positive number of milliseconds (Iceberg's own 5-day default is not
// applied here: it is what makes metadata grow). Tables with
// gc.enabled=false are left alone. It returns the table as committed, or
// tbl when nothing was due.
//
// Errors: commitExpiry's (a conflict with another writer among them:
// tbl is returned; a failed file deletion after the expiry landed: the
// expired table is); the caller's own commit has landed either way.
func AutoExpire(ctx context.Context, tbl *table.Table) (*table.Table, error) {
	retain := snapshotsRetain(tbl)
	props := tbl.Properties()
	if retain == 0 || len(tbl.Metadata().Snapshots()) <= retain+retain/2 ||
		strings.EqualFold(props[table.GCEnabledKey], "false") {
		return tbl, nil
	}
	var maxAge time.Duration
	if ms, err := strconv.ParseInt(strings.TrimSpace(props[table.MaxSnapshotAgeMsKey]), 10, 64); err == nil && ms > 0 {
		maxAge = time.Duration(ms) * time.Millisecond
		if !expirable(tbl, retain, maxAge) {
			return tbl, nil
		}
	}
	out, err := commitExpiry(ctx, tbl, retain, maxAge)
	if out == nil {
		return tbl, err
	}
	return out, err
}

// expirable reports whether tbl's current branch holds, beyond its newest
// retain snapshots, at least retain/2 snapshots older than maxAge: only
// then is an expiry worth its commit.
func expirable(tbl *table.Table, retain int, maxAge time.Duration) bool {
	cur := tbl.CurrentSnapshot()
	if cur == nil {
		return false
	}
	cutoff := time.Now().Add(-maxAge).UnixMilli()
	old := 0
	for i, s := range lakecat.Ancestors(tbl, cur.SnapshotID) {
		if i >= retain && s.TimestampMs < cutoff {
			old++
		}
	}
	return old >= max(retain/2, 1)
}
