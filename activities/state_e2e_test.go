//go:build e2e

package activities

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/merge"
	"github.com/lakemirror/lakemirror/internal/sample"
	"github.com/lakemirror/lakemirror/schemas"
)

// A worker that loses its local state (restarts) at random batches ends
// with the same mirror and history as one that never restarts, and the
// history is the clean pass's: the state is rebuilt from the tables, and
// the first late key after a restart loads the past changes from bronze.
func TestLocalStateSurvivesRestarts(t *testing.T) {
	for seed := int64(1); seed <= 6; seed++ {
		s := sample.Generate(sample.Options{Seed: seed, Inserts: 25, Updates: 70, Deletes: 10, Duplicates: 8, Late: 14,
			OutOfOrder: 8, UnseenDeletes: 2, Tombstones: true, ReplicaIdentityFull: seed%2 == 0})
		sizes := sizesFor(rand.New(rand.NewPCG(uint64(seed), 1)), len(s.Delivered))
		name := lake.TableName{Namespace: "shop", Name: "orders"}
		steady := mustCatalog(t)
		// a worker that never restarts has every past change in its log: its
		// late keys are woven in their batches; after a restart the first
		// late key needs RebuildKeys (past changes from bronze)
		if late := applyStream(t, steady, s.Delivered, sizes, func(int) bool { return false }); late.rebuilds != 0 || late.woven == 0 {
			t.Fatalf("seed %d: the steady worker wove %d late keys and ran %d rebuilds, want some and none", seed, late.woven, late.rebuilds)
		}
		r := rand.New(rand.NewPCG(uint64(seed), 2))
		restarted := mustCatalog(t)
		if late := applyStream(t, restarted, s.Delivered, sizes, func(i int) bool { return i > 0 && r.IntN(3) == 0 }); late.rebuilds == 0 {
			t.Fatalf("seed %d: the restarted worker ran no RebuildKeys", seed)
		}

		mirrorCols := []string{"order_id", "status", "amount", lake.ColSeq, lake.ColDeleted}
		if a, b := tableText(t, steady, name, false, mirrorCols...), tableText(t, restarted, name, false, mirrorCols...); a != b {
			t.Fatalf("seed %d: mirrors differ\nsteady:\n%s\nrestarted:\n%s", seed, a, b)
		}
		histCols := []string{"order_id", lake.ColSeq, lake.ColValidToSeq, lakecat.ColRowHash, lake.ColIsCurrent}
		a, b := tableText(t, steady, name, true, histCols...), tableText(t, restarted, name, true, histCols...)
		if a != b {
			t.Fatalf("seed %d: histories differ\nsteady:\n%s\nrestarted:\n%s", seed, a, b)
		}
		want := cleanPass(t, s)
		if got := strings.ReplaceAll(a, "<nil>", "<nil>"); got != want {
			t.Fatalf("seed %d: history is not the clean pass's\ngot:\n%s\nwant:\n%s", seed, got, want)
		}
	}
}

// cleanPass is the history of the stream's changes in source order, by
// the pure rules.
func cleanPass(t *testing.T, s sample.Stream) string {
	d := schemas.NewDecoder(schemas.DecoderOptions{KeyColumns: []string{"order_id"}})
	var events []*cdc.Event
	for i, m := range s.Clean {
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
		vs, _ := merge.Replay(nil, g.Events, merge.HistoryOptions{})
		for _, v := range vs {
			id, _ := v.Values.Get("order_id")
			to := "<nil>"
			if !v.Current() {
				to = v.ToSeq.Hex()
			}
			lines = append(lines, fmt.Sprintf("%d %s %s %s %v", id.I, v.Seq.Hex(), to, v.Hash, v.Current()))
		}
	}
	return strings.Join(lines, "\n")
}
