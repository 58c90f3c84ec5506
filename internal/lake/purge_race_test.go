package lake

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/merge"
	"github.com/lakemirror/lakemirror/internal/sample"
)

// A tombstone purge that commits (from another worker) after a batch was
// prepared and before it is staged fences the batch: Stage fails with
// ErrHorizonMoved instead of applying a replayed old change of the purged
// key against the purged table, and the batch prepared again quarantines
// that change. The key stays purged and its history keeps one closed
// version.
func TestPurgeBetweenPrepareAndStage(t *testing.T) {
	ctx := context.Background()
	p := newLakePipeline(t, merge.HistoryOptions{})
	create := pgChange("c", "null", `{"order_id":1,"status":"new"}`, 100)
	p.batch([]sample.Message{create, pgChange("d", `{"order_id":1,"status":"new"}`, "null", 200)})

	// the replay of the old create, prepared against the unpurged mirror
	replay := []sample.Message{create}
	prep, err := p.mirror.Prepare(ctx, p.decode(rowsOf(replay, p.offset)))
	if err != nil {
		t.Fatal(err)
	}
	if len(prep.Rejected) != 0 {
		t.Fatalf("rejected before the purge: %v", prep.Rejected[0].Err)
	}
	other := NewMirrorWriter(p.cat, p.name, []string{"order_id"}) // a second worker
	other.now = func() time.Time { return time.Now().Add(30 * 24 * time.Hour) }
	res, err := other.Purge(ctx, 8*24*time.Hour, time.Hour)
	if err != nil || res.Purged != 1 {
		t.Fatalf("purge: %+v, %v", res, err)
	}
	b := Batch{ID: "b-race", Seq: p.seq + 1, Topic: "t", Ranges: []Range{{From: p.offset, To: p.offset + 1}}, EndOffsets: Offsets{0: p.offset + 1}}
	if _, err := p.mirror.Stage(ctx, b, prep.Events); !errors.Is(err, ErrHorizonMoved) {
		t.Fatalf("Stage after the purge: %v, want ErrHorizonMoved", err)
	}
	// the retry prepares again and quarantines the change
	prep, err = p.mirror.Prepare(ctx, p.decode(rowsOf(replay, p.offset)))
	if err != nil {
		t.Fatal(err)
	}
	if len(prep.Rejected) != 1 || prep.Rejected[0].Stage != StagePurged {
		t.Fatalf("the retried batch rejects %d changes, want the replayed create as %q", len(prep.Rejected), StagePurged)
	}
	p.batch(replay)
	if got := mirrorLive(t, p); strings.Contains(got, "1 ") {
		t.Fatalf("the purged key is back in the mirror:\n%s", got)
	}
	if got := p.historyLines(); strings.Count(got, "\n") != 0 || !strings.HasSuffix(got, "false") {
		t.Fatalf("history of the purged key:\n%s\nwant one closed version", got)
	}
}

// After a purge, only changes for the keys it removed, at or below each
// removed row's own position, are refused: a key never purged applies even
// below the purge horizon (a source snapshot read, a late first insert),
// and a purged key's newer change revives it. A table purged before purged
// keys were recorded keeps refusing everything at or below its old horizon
// for keys absent from the mirror.
func TestPurgeRefusesOnlyPurgedKeys(t *testing.T) {
	ctx := context.Background()
	p := newLakePipeline(t, merge.HistoryOptions{})
	create1 := pgChange("c", "null", `{"order_id":1,"status":"new"}`, 100)
	p.batch([]sample.Message{create1, pgChange("d", `{"order_id":1,"status":"new"}`, "null", 200),
		pgChange("c", "null", `{"order_id":2,"status":"new"}`, 300)})
	p.mirror.now = func() time.Time { return time.Now().Add(30 * 24 * time.Hour) }
	if res, err := p.mirror.Purge(ctx, 8*24*time.Hour, time.Hour); err != nil || res.Purged != 1 || res.Horizon != cdc.SeqOf(200, 200).Hex() {
		t.Fatalf("purge: %+v, %v", res, err)
	}
	p.mirror.now = time.Now
	prep, err := p.mirror.Prepare(ctx, p.decode(rowsOf([]sample.Message{
		create1, // replay of the purged key's create: refused
		pgChange("c", "null", `{"order_id":3,"status":"late"}`, 150),                          // never purged, below the horizon: applies
		pgChange("u", `{"order_id":1,"status":"new"}`, `{"order_id":1,"status":"back"}`, 250), // above key 1's purged row: revives it
	}, p.offset)))
	if err != nil {
		t.Fatal(err)
	}
	if len(prep.Rejected) != 1 || prep.Rejected[0].Stage != StagePurged || prep.Rejected[0].Origin.Offset != p.offset {
		t.Fatalf("rejected %d changes, want only the replayed create of key 1", len(prep.Rejected))
	}
	if !strings.Contains(prep.Rejected[0].Err.Error(), "the key was purged at position "+cdc.SeqOf(200, 200).Hex()) {
		t.Fatalf("reason: %v", prep.Rejected[0].Err)
	}
	p.batch([]sample.Message{create1, pgChange("c", "null", `{"order_id":3,"status":"late"}`, 150),
		pgChange("u", `{"order_id":1,"status":"new"}`, `{"order_id":1,"status":"back"}`, 250)})
	want := strings.Join([]string{
		fmt.Sprintf("1 back <nil> %s deleted=false", cdc.SeqOf(250, 250).Hex()),
		fmt.Sprintf("2 new <nil> %s deleted=false", cdc.SeqOf(300, 300).Hex()),
		fmt.Sprintf("3 late <nil> %s deleted=false", cdc.SeqOf(150, 150).Hex()),
	}, "\n")
	if got := mirrorLive(t, p); got != want {
		t.Fatalf("mirror after the purge\ngot:\n%s\nwant:\n%s", got, want)
	}

	// a table whose purges predate the purged-keys table (only a horizon)
	old := newLakePipeline(t, merge.HistoryOptions{})
	old.batch([]sample.Message{pgChange("c", "null", `{"order_id":2,"status":"new"}`, 300)})
	tbl, err := old.cat.LoadTable(ctx, old.name.Mirror())
	if err != nil {
		t.Fatal(err)
	}
	tx := tbl.NewTransaction()
	if err := tx.SetProperties(iceberg.Properties{PropPurgeHorizon: cdc.SeqOf(200, 200).Hex()}); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	prep, err = old.mirror.Prepare(ctx, old.decode(rowsOf([]sample.Message{pgChange("c", "null", `{"order_id":3,"status":"late"}`, 150)}, old.offset)))
	if err != nil {
		t.Fatal(err)
	}
	if len(prep.Rejected) != 1 {
		t.Fatalf("a legacy-purged table rejects %d changes below its horizon, want 1", len(prep.Rejected))
	}
}
