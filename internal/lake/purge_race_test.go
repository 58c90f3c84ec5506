package lake

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

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
