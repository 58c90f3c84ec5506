//go:build e2e

package runner

import (
	"context"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/tableread"
	"github.com/lakemirror/lakemirror/internal/merge"
	"github.com/lakemirror/lakemirror/internal/sample"
	"github.com/lakemirror/lakemirror/schemas"
)

// expectedHistory is the history of one clean in-order pass over the
// stream's source changes: merge.Replay per key over the decoded clean
// stream, rendered one line per version.
func expectedHistory(t *testing.T, stream sample.Stream, o merge.HistoryOptions) string {
	t.Helper()
	d := schemas.NewDecoder(schemas.DecoderOptions{KeyColumns: []string{"order_id"}})
	var events []*cdc.Event
	for i, m := range stream.Clean {
		dec, err := d.Decode(schemas.Record{Topic: "t", Offset: int64(i), Key: m.Key, Value: m.Value})
		if err != nil {
			t.Fatal(err)
		}
		if dec.Kind == schemas.KindChange {
			events = append(events, dec.Event)
		}
	}
	var lines []string
	for _, g := range merge.GroupByKey(events) {
		vs, _ := merge.Replay(nil, g.Events, o)
		for _, v := range vs {
			id, _ := v.Values.Get("order_id")
			st, _ := v.Values.Get("status")
			to := "<nil>"
			if !v.Current() {
				to = v.ToSeq.Hex()
			}
			lines = append(lines, fmt.Sprintf("%d %s %s..%s %s current=%v", id.I, st.S, v.Seq.Hex(), to, v.Hash, v.Current()))
		}
	}
	return strings.Join(lines, "\n")
}

func historyLines(t *testing.T, r *Runner, table string) string {
	t.Helper()
	name, _ := lake.ParseTableName(table)
	tbl, err := r.Catalog.LoadTable(context.Background(), name.History())
	if err != nil {
		t.Fatal(err)
	}
	rows, _, err := lake.ReadRows(context.Background(), tbl, []string{"order_id", lake.ColSeq})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, row := range rows {
		lines = append(lines, fmt.Sprintf("%v %v %v..%v %v current=%v", row["order_id"], row["status"], row[lake.ColSeq],
			row[lake.ColValidToSeq], row[lakecat.ColRowHash], row[lake.ColIsCurrent]))
	}
	return strings.Join(lines, "\n")
}

// The history table after a faulty delivery (duplicates, late and
// out-of-order records, small batches on two partitions) equals the
// history of one clean in-order pass, and the mirror is exact even with
// PostgreSQL's default replica identity (deletes carry only the key), the
// case that needs the late-key rebuild from bronze.
func TestHistoryAndLateRebuildEndToEnd(t *testing.T) {
	r := startRunner(t)
	defer r.Stop()
	for _, full := range []bool{true, false} {
		stream := sample.Generate(sample.Options{Seed: 21, Inserts: 50, Updates: 150, Deletes: 20, Duplicates: 15, Late: 25,
			OutOfOrder: 15, UnseenDeletes: 5, Tombstones: true, Envelope: true, ReplicaIdentityFull: full})
		spec := activities.TableSpec{Table: fmt.Sprintf("e2e.history_%v", full), Topic: fmt.Sprintf("e2e.public.history_%v", full),
			KeyColumns: []string{"order_id"}, MaxEvents: 13, MaxWait: 200 * time.Millisecond}
		ends := produce(t, r, spec.Topic, 2, stream.Delivered)
		startWorkflow(t, r.Client, spec)
		st := waitCaughtUp(t, r.Client, spec.Table, ends)
		if st.Totals.RebuiltKeys == 0 {
			t.Fatalf("replica identity full=%v: no late key was rebuilt; the stream has late records (totals %+v)", full, st.Totals)
		}
		checkMirror(t, r, spec.Table, stream.Expected())
		if got, want := historyLines(t, r, spec.Table), expectedHistory(t, stream, merge.HistoryOptions{}); got != want {
			debugBronze(t, r, spec.Table)
			t.Fatalf("replica identity full=%v: history differs\ngot:\n%s\nwant:\n%s", full, got, want)
		}
		stopWorkflow(t, r.Client, spec.Table)
	}
}

func debugBronze(t *testing.T, r *Runner, table string) {
	name, _ := lake.ParseTableName(table)
	tbl, _ := r.Catalog.LoadTable(context.Background(), name.Bronze())
	rows, _, _ := lake.ReadRows(context.Background(), tbl, []string{lakecat.BronzePartition, lake.BronzeOffset})
	byKey := map[string]int{}
	for _, row := range rows {
		if k, ok := row[lakecat.ColKey].(string); ok {
			byKey[k]++
		}
	}
	for k, n := range byKey {
		kb, _ := hex.DecodeString(k)
		got, err := tableread.ReadBronzeKeys(context.Background(), r.Catalog, name, []cdc.Key{cdc.Key(kb)})
		if err != nil || len(got) != n {
			t.Errorf("key %s: full scan %d rows, ReadBronzeKeys %d (%v)", k, n, len(got), err)
		}
	}
	t.Logf("bronze: %d rows, %d keys", len(rows), len(byKey))
}
