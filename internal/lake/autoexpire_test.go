package lake

import (
	"context"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/lake/maintain"
	"github.com/lakemirror/lakemirror/internal/merge"
	"github.com/lakemirror/lakemirror/internal/sample"
)

// setTableProps sets props on the pipeline's mirror, history and bronze
// tables (created by a first batch).
func setTableProps(t *testing.T, p *lakePipeline, props iceberg.Properties) {
	t.Helper()
	ctx := context.Background()
	for _, ident := range []table.Identifier{p.name.Mirror(), p.name.History(), p.name.Bronze()} {
		tbl, err := p.cat.LoadTable(ctx, ident)
		if err != nil {
			t.Fatal(err)
		}
		tx := tbl.NewTransaction()
		if err := tx.SetProperties(props); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// snapshotsOf returns the number of snapshots ident keeps and the number
// of manifest lists (snap-*.avro) in its metadata directory.
func snapshotsOf(t *testing.T, p *lakePipeline, ident table.Identifier) (snapshots, manifestLists int) {
	t.Helper()
	tbl, err := p.cat.LoadTable(context.Background(), ident)
	if err != nil {
		t.Fatal(err)
	}
	return len(tbl.Metadata().Snapshots()), len(metadataFiles(t, tbl, "snap-*.avro"))
}

// With lakemirror.snapshots.retain = 4, a commit that leaves a table with
// more than 6 snapshots expires all but the newest 4 and deletes their
// manifest lists; the mirror, the history and the checkpoint are exactly
// those of a pipeline that keeps every snapshot.
func TestAutoExpireKeepsSnapshotsBounded(t *testing.T) {
	s := sample.Generate(sample.Options{Seed: 11, Inserts: 30, Updates: 60, Deletes: 10})
	kept := newLakePipeline(t, merge.HistoryOptions{})
	setRetain := func(p *lakePipeline, v string) {
		setTableProps(t, p, iceberg.Properties{maintain.PropSnapshotsRetain: v})
	}
	expired := newLakePipeline(t, merge.HistoryOptions{})
	msgs := s.Clean
	expired.batch(msgs[:5])
	kept.batch(msgs[:5])
	setRetain(expired, "4")
	setRetain(kept, "0")
	msgs = msgs[5:]
	// counts after each further batch: 2..6 grow, the 7th expires to 4
	want := []int{2, 3, 4, 5, 6, 4, 5, 6, 4, 5, 6, 4}
	for i, w := range want {
		expired.batch(msgs[:5])
		kept.batch(msgs[:5])
		msgs = msgs[5:]
		for _, ident := range []table.Identifier{expired.name.Mirror(), expired.name.History(), expired.name.Bronze()} {
			n, lists := snapshotsOf(t, expired, ident)
			if n != w || lists != w {
				t.Fatalf("after batch %d: %v keeps %d snapshots and %d manifest lists, want %d", i+2, ident, n, lists, w)
			}
		}
	}
	if n, _ := snapshotsOf(t, kept, kept.name.Mirror()); n != len(want)+1 {
		t.Fatalf("retain 0: the mirror keeps %d snapshots, want all %d", n, len(want)+1)
	}
	if got, want := mirrorLines(t, expired.cat), mirrorLines(t, kept.cat); got != want || got == "" {
		t.Fatalf("mirror with expiry:\n%s\nwithout:\n%s", got, want)
	}
	if got, want := expired.historyLines(), kept.historyLines(); got != want || got == "" {
		t.Fatalf("history with expiry:\n%s\nwithout:\n%s", got, want)
	}
	for _, p := range []*lakePipeline{expired, kept} {
		tbl, err := p.cat.LoadTable(context.Background(), p.name.Mirror())
		if err != nil {
			t.Fatal(err)
		}
		cp, err := ReadCheckpoint(tbl)
		if err != nil || cp.BatchSeq != int64(len(want)+1) {
			t.Fatalf("checkpoint %+v, %v; want batch %d", cp, err, len(want)+1)
		}
	}
}

// A table that sets history.expire.max-snapshot-age-ms keeps every
// snapshot younger than that, whatever lakemirror.snapshots.retain says.
func TestAutoExpireHonoursMaxSnapshotAge(t *testing.T) {
	s := sample.Generate(sample.Options{Seed: 12, Inserts: 30, Updates: 30})
	p := newLakePipeline(t, merge.HistoryOptions{})
	msgs := s.Clean
	p.batch(msgs[:5])
	setTableProps(t, p, iceberg.Properties{maintain.PropSnapshotsRetain: "2", table.MaxSnapshotAgeMsKey: "86400000"})
	for range 8 {
		msgs = msgs[5:]
		p.batch(msgs[:5])
	}
	if n, lists := snapshotsOf(t, p, p.name.Mirror()); n != 9 || lists != 9 {
		t.Fatalf("the mirror keeps %d snapshots and %d manifest lists, want all 9", n, lists)
	}
}
