package lake

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/compact"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/merge"
	"github.com/lakemirror/lakemirror/internal/payload"
	"github.com/lakemirror/lakemirror/internal/sample"
)

// mirrorDump renders the mirror without _ingested_at.
func mirrorDump(t *testing.T, p *lakePipeline) string {
	t.Helper()
	tbl, err := p.cat.LoadTable(context.Background(), p.name.Mirror())
	if err != nil {
		t.Fatal(err)
	}
	rows, cols, err := ReadRows(context.Background(), tbl, []string{"order_id"})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, r := range rows {
		for _, c := range cols {
			if c != lakecat.ColIngestedAt {
				fmt.Fprintf(&b, "%s=%v ", c, r[c])
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// Purge removes exactly the tombstones past the window, whatever keys
// they belong to; a late change at or below the purge horizon for a
// purged key is quarantined, not resurrected; one above it applies.
func TestPurge(t *testing.T) {
	ctx := context.Background()
	p := newLakePipeline(t, merge.HistoryOptions{})
	s := sample.Generate(sample.Options{Seed: 3, Inserts: 20, Updates: 20, Deletes: 8, UnseenDeletes: 2, Tombstones: true})
	p.batch(s.Clean)
	// the sample's source commit times are in January 2026: with the clock
	// at 2026-03-01, a 30-day window purges them all, a 60-day one none
	p.mirror.now = func() time.Time { return time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC) }
	if _, err := p.mirror.Purge(ctx, time.Hour, 0); !errors.As(err, new(*RetentionError)) {
		t.Fatalf("a 1h retention below the 7-day floor: %v", err)
	}
	res, err := p.mirror.Purge(ctx, 60*24*time.Hour, 0)
	if err != nil || res.Purged != 0 || res.Deleted != 10 {
		t.Fatalf("60 days: %+v %v", res, err)
	}
	before := mirrorDump(t, p)
	res, err = p.mirror.Purge(ctx, 30*24*time.Hour, 0)
	if err != nil || res.Purged != 10 || res.Horizon == "" {
		t.Fatalf("30 days: %+v %v", res, err)
	}
	after := mirrorDump(t, p)
	var kept []string
	for _, line := range strings.Split(strings.TrimSpace(before), "\n") {
		if !strings.Contains(line, "_is_deleted=true") {
			kept = append(kept, line)
		}
	}
	if strings.TrimSpace(after) != strings.Join(kept, "\n") {
		t.Fatalf("after purge:\n%s\nwant the live rows only:\n%s", after, strings.Join(kept, "\n"))
	}
	// a fresh writer (index rebuilt from the table) agrees
	w2 := NewMirrorWriter(p.cat, p.name, []string{"order_id"})
	if res, err := w2.Purge(ctx, 30*24*time.Hour, 0); err != nil || res.Purged != 0 || res.Deleted != 0 {
		t.Fatalf("second purge: %+v %v", res, err)
	}
	// replay the whole stream: purged keys' old changes are quarantined
	prep := p.decode(rowsOf(s.Clean, 1000))
	pr, err := p.mirror.Prepare(ctx, prep)
	if err != nil {
		t.Fatal(err)
	}
	purged := 0
	for _, r := range pr.Rejected {
		if r.Stage == StagePurged {
			purged++
		}
	}
	if purged == 0 {
		t.Fatal("no change of a purged key was rejected")
	}
	for _, e := range pr.Events {
		if e.Op == cdc.OpCreate || e.Op == cdc.OpUpdate {
			if _, ok := p.mirror.Index().Lookup(e.Key); !ok {
				t.Fatalf("a change of a purged key below the horizon was kept: %+v", e)
			}
		}
	}
}

func rowsOf(msgs []sample.Message, base int64) []BronzeRow {
	out := make([]BronzeRow, len(msgs))
	for i, m := range msgs {
		out[i] = BronzeRow{Record: payload.Record{Topic: "t", Offset: base + int64(i), Key: m.Key, Value: m.Value}}
	}
	return out
}

// Compaction applies the position deletes: afterwards a full scan returns
// the same rows and reads no delete file, and the key index follows.
func TestCompaction(t *testing.T) {
	ctx := context.Background()
	p := newLakePipeline(t, merge.HistoryOptions{})
	s := sample.Generate(sample.Options{Seed: 4, Inserts: 30, Updates: 120, Deletes: 10, Tombstones: true})
	for i := 0; i < len(s.Delivered); i += 7 {
		p.batch(s.Delivered[i:min(i+7, len(s.Delivered))])
	}
	before := mirrorDump(t, p)
	res, err := compact.Compact(ctx, p.cat, p.name.Mirror(), compact.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rewritten < 2 || res.Added != 1 || res.DeleteFilesBefore == 0 || res.RemovedDeleteFiles != res.DeleteFilesBefore {
		t.Fatalf("compaction %+v", res)
	}
	if got := mirrorDump(t, p); got != before {
		t.Fatalf("rows changed by compaction:\n%s\nwant\n%s", got, before)
	}
	tbl, _ := p.cat.LoadTable(ctx, p.name.Mirror())
	if n, _ := compact.DeleteFileCount(ctx, tbl); n != 0 {
		t.Fatalf("%d delete files after compaction", n)
	}
	// the writer's index moves to the compacted files on the next batch
	p.batch(s.Delivered[:20]) // a replay: all no-ops
	if got := mirrorDump(t, p); got != before {
		t.Fatal("a replay after compaction changed the mirror")
	}
}
