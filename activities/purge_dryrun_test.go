package activities

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/sample"
	"github.com/lakemirror/lakemirror/schemas"
)

// A purge dry run counts the soft-deleted rows older than the retention
// window and the horizon the purge would set, and writes nothing: the
// mirror keeps its snapshot, metadata file and properties, no purged-keys
// table appears; the purge that follows removes exactly what the dry run
// counted.
func TestPurgeDryRunWritesNothing(t *testing.T) {
	ctx := context.Background()
	cat := mustCatalog(t)
	spec := TableSpec{Table: "shop.orders", Topic: "shop.public.orders", KeyColumns: []string{"order_id"}}.Defaults()
	a := New(cat, nil)
	a.StateDir = t.TempDir()
	st, name, err := a.state(spec)
	if err != nil {
		t.Fatal(err)
	}
	pg := sample.PostgresChange
	msgs := []sample.Message{pg("c", "null", `{"order_id":1,"status":"new"}`, 100), pg("d", `{"order_id":1}`, "null", 200),
		pg("c", "null", `{"order_id":2,"status":"new"}`, 300), pg("d", `{"order_id":2}`, "null", 400), pg("c", "null", `{"order_id":3,"status":"new"}`, 500)}
	recs := make([]schemas.Record, len(msgs))
	for i, m := range msgs {
		recs[i] = schemas.Record{Topic: spec.Topic, Offset: int64(i), Key: m.Key, Value: m.Value}
	}
	b := lake.Batch{ID: "b1", Seq: 1, Topic: spec.Topic, Ranges: []lake.Range{{From: 0, To: 5}}, EndOffsets: lake.Offsets{0: 5}}
	stage := ""
	st.mu.Lock()
	_, _, err = a.applyRecords(ctx, st, name, spec, b, recs, nil, "", &stage)
	st.mu.Unlock()
	if err != nil {
		t.Fatalf("apply (%s): %v", stage, err)
	}
	mirrorState := func() string {
		tbl, err := cat.LoadTable(ctx, name.Mirror())
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("snapshot %d, metadata %s, horizon %q, last purge %q", tbl.CurrentSnapshot().SnapshotID, tbl.MetadataLocation(),
			tbl.Properties()[lake.PropPurgeHorizon], tbl.Properties()[lake.PropLastPurge])
	}
	before := mirrorState()
	req := MaintenanceRequest{Spec: spec, Job: JobPurge, Retention: 24 * time.Hour, RetentionFloor: time.Hour, DryRun: true}
	dry, err := a.Maintain(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	horizon := cdc.SeqOf(400, 400).Hex()
	if p := dry.Purge; p == nil || !p.DryRun || p.Deleted != 2 || p.Purged != 2 || p.Horizon != horizon || p.SnapshotID != 0 {
		t.Fatalf("dry run: %+v, want 2 of 2 soft-deleted rows, horizon %s, nothing committed", p, horizon)
	}
	if after := mirrorState(); after != before {
		t.Fatalf("the dry run changed the mirror:\nbefore %s\nafter  %s", before, after)
	}
	if tbl, err := lake.LoadTable(ctx, cat, name.Purged()); err != nil || tbl != nil {
		t.Fatalf("the dry run created the purged-keys table (%v)", err)
	}
	// a window that holds every delete: nothing to remove
	req.Retention = 3650 * 24 * time.Hour
	if res, err := a.Maintain(ctx, req); err != nil || res.Purge.Purged != 0 || res.Purge.Deleted != 2 || !res.Purge.DryRun {
		t.Fatalf("dry run, 10-year window: %+v, %v", res.Purge, err)
	}
	req.Retention, req.DryRun = 24*time.Hour, false
	real, err := a.Maintain(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if p := real.Purge; p.DryRun || p.Purged != 2 || p.Horizon != horizon || p.SnapshotID == 0 || p.Cutoff == "" {
		t.Fatalf("purge after the dry run: %+v", p)
	}
	if after := mirrorState(); after == before {
		t.Fatalf("the purge committed nothing")
	}
	if got := tableText(t, cat, name, false, "order_id", lake.ColDeleted); got != "3 false" {
		t.Fatalf("mirror after the purge:\n%s", got)
	}
}
