package lake

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
)

// commitsTable makes a table with one snapshot per summary (an append of
// one row each) and returns it with the snapshot ids, oldest first.
func commitsTable(t *testing.T, summaries []iceberg.Properties) (*table.Table, []int64) {
	t.Helper()
	ctx := context.Background()
	cat := newCatalog(t)
	if err := lakecat.EnsureNamespace(ctx, cat, []string{"shop"}); err != nil {
		t.Fatal(err)
	}
	sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	tbl, err := cat.CreateTable(ctx, []string{"shop", "commits"}, sc)
	if err != nil {
		t.Fatal(err)
	}
	arrowSc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	var ids []int64
	for i, props := range summaries {
		b := array.NewInt64Builder(memory.DefaultAllocator)
		b.Append(int64(i))
		rec := array.NewRecordBatch(arrowSc, []arrow.Array{b.NewArray()}, 1)
		rdr, err := array.NewRecordReader(arrowSc, []arrow.RecordBatch{rec})
		if err != nil {
			t.Fatal(err)
		}
		tx := tbl.NewTransaction()
		if err := tx.Append(ctx, rdr, props); err != nil {
			t.Fatal(err)
		}
		if tbl, err = tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, tbl.CurrentSnapshot().SnapshotID)
	}
	return tbl, ids
}

func batchSummary(topic string, seq int64, end string) iceberg.Properties {
	return iceberg.Properties{lakecat.PropBatchID: fmt.Sprintf("t#%d", seq), lakecat.PropBatchSeq: fmt.Sprint(seq), lakecat.PropEndOffsets: end, lakecat.PropTopic: topic}
}

// TestPlanReapply: the run of batch commits ends at anything a scratch
// table could not reproduce from bronze's stream records, and at
// maxBatches; each batch's ranges start where the commit before it ended.
func TestPlanReapply(t *testing.T) {
	const topic = "shop.public.orders"
	load := batchSummary(topic, 3, `{"0":20,"1":5}`)
	load[PropLoadCursor] = `{"load":"x"}`
	tbl, ids := commitsTable(t, []iceberg.Properties{
		batchSummary(topic, 1, `{"0":10}`),
		batchSummary(topic, 2, `{"0":20,"1":5}`),
		load,
		batchSummary(topic, 4, `{"0":30,"1":5}`),
		batchSummary(topic, 5, `{"0":40,"1":7}`),
		batchSummary(topic, 6, `{"0":40,"1":7}`), // a backfill: ends where batch 5 did
		batchSummary(topic, 7, `{"0":41,"1":9}`),
		batchSummary(topic, 8, `{"0":45,"1":9}`),
	})
	plan, why, err := PlanReapply(tbl, topic, 5)
	if err != nil || plan == nil {
		t.Fatalf("plan %v %q %v", plan, why, err)
	}
	got := fmt.Sprintf("base %d target %d:", plan.Base, plan.Target)
	for _, b := range plan.Batches {
		got += fmt.Sprintf(" %d@%d%v", b.Batch.Seq, b.Snapshot, b.Batch.Ranges)
	}
	want := fmt.Sprintf("base %d target %d: 7@%d[{0 40 41} {1 7 9}] 8@%d[{0 41 45}]", ids[5], ids[7], ids[6], ids[7])
	if got != want {
		t.Fatalf("plan\n%s\nwant\n%s", got, want)
	}
	// at most two batches: the base moves up
	plan, _, _ = PlanReapply(tbl, topic, 1)
	if plan == nil || plan.Base != ids[6] || len(plan.Batches) != 1 || plan.Batches[0].Batch.Seq != 8 {
		t.Fatalf("maxBatches 1: %+v", plan)
	}
	// another topic's batches are no run at all
	if plan, why, err := PlanReapply(tbl, "other", 5); plan != nil || err != nil || !strings.Contains(why, "is not a batch of topic other (a batch of topic "+topic+")") {
		t.Fatalf("other topic: %+v %q %v", plan, why, err)
	}
	// the batch after the load, with the load as the only thing before it
	tbl2, ids2 := commitsTable(t, []iceberg.Properties{load, batchSummary(topic, 4, `{"0":30,"1":5}`), batchSummary(topic, 5, `{"0":40,"1":7}`),
		{"lakemirror.maintenance": "purge"}})
	if plan, why, _ := PlanReapply(tbl2, topic, 5); plan != nil || why != fmt.Sprintf("no batch to re-apply: Iceberg snapshot %d is not a batch of topic %s (purge)", ids2[3], topic) {
		t.Fatalf("after a purge: %+v %q", plan, why)
	}
	// a direct load ends the run: the batch after it is the base
	tbl3, ids3 := commitsTable(t, []iceberg.Properties{batchSummary(topic, 2, `{"0":20,"1":5}`), load, batchSummary(topic, 4, `{"0":30,"1":5}`), batchSummary(topic, 5, `{"0":40,"1":7}`)})
	if plan, _, _ := PlanReapply(tbl3, topic, 5); plan == nil || plan.Base != ids3[2] || len(plan.Batches) != 1 || fmt.Sprint(plan.Batches[0].Batch.Ranges) != "[{0 30 40} {1 5 7}]" {
		t.Fatalf("after a load: %+v", plan)
	}
}
