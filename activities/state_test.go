package activities

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/catalog"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/merge"
	"github.com/lakemirror/lakemirror/internal/sample"
	"github.com/lakemirror/lakemirror/schemas"
)

// applyStream applies msgs through the apply and rebuild activities' code
// in the given batch sizes. restart(i) says whether to throw the worker's
// state away before batch i (a worker restart: the next batch builds its
// local state from the tables, and the first late key loads bronze).
func applyStream(t *testing.T, cat catalog.Catalog, msgs []sample.Message, sizes []int, restart func(int) bool) latePaths {
	t.Helper()
	return applyStreamSpec(t, cat, TableSpec{}, msgs, sizes, restart)
}

// latePaths counts how a stream's late keys were rebuilt: woven inline in
// their batch (the log held every past change), or by RebuildKeys runs
// after a batch that left keys pending.
type latePaths struct{ woven, rebuilds int }

// applyStreamSpec is applyStream for a table with the options of opts
// (its WithoutBronze and WithoutHistory).
func applyStreamSpec(t *testing.T, cat catalog.Catalog, opts TableSpec, msgs []sample.Message, sizes []int, restart func(int) bool) latePaths {
	t.Helper()
	spec := TableSpec{Table: "shop.orders", Topic: "shop.public.orders", KeyColumns: []string{"order_id"}, MaxQuarantine: 1000,
		WithoutBronze: opts.WithoutBronze, WithoutHistory: opts.WithoutHistory}.Defaults()
	newWorker := func() *Activities {
		a := New(cat, nil)
		a.StateDir = t.TempDir()
		return a
	}
	a := newWorker()
	return applyBatches(t, &a, spec, msgs, sizes, func(i int) *Activities {
		if restart(i) {
			return newWorker()
		}
		return nil
	})
}

// applyStreamWith applies msgs in the given batch sizes through worker a.
func applyStreamWith(t *testing.T, a *Activities, spec TableSpec, msgs []sample.Message, sizes []int) {
	t.Helper()
	applyBatches(t, &a, spec, msgs, sizes, func(int) *Activities { return nil })
}

// applyBatches is applyStream's loop: before batch i, next(i) may give a
// new worker to continue on.
func applyBatches(t *testing.T, worker **Activities, spec TableSpec, msgs []sample.Message, sizes []int, next func(int) *Activities) latePaths {
	t.Helper()
	var late latePaths
	ctx := context.Background()
	a := *worker
	var offset int64
	for i, n := range sizes {
		if w := next(i); w != nil {
			a, *worker = w, w
		}
		st, name, err := a.state(spec)
		if err != nil {
			t.Fatal(err)
		}
		recs := make([]schemas.Record, n)
		for j := range recs {
			m := msgs[int(offset)+j]
			recs[j] = schemas.Record{Topic: spec.Topic, Offset: offset + int64(j), Key: m.Key, Value: m.Value}
		}
		b := lake.Batch{ID: fmt.Sprintf("b%d", i+1), Seq: int64(i + 1), Topic: spec.Topic,
			Ranges: []lake.Range{{From: offset, To: offset + int64(n)}}, EndOffsets: lake.Offsets{0: offset + int64(n)}}
		offset += int64(n)
		stage := ""
		st.mu.Lock()
		res, _, err := a.applyRecords(ctx, st, name, spec, b, recs, nil, "", &stage)
		late.woven += res.WovenKeys()
		if err == nil && res.History.Pending+res.Mirror.Pending > 0 {
			late.rebuilds++
			_, err = a.rebuildPending(ctx, st, name)
		}
		st.mu.Unlock()
		if err != nil {
			t.Fatalf("batch %d (%s): %v", i+1, stage, err)
		}
	}
	return late
}

func sizesFor(r *rand.Rand, total int) []int {
	var out []int
	for total > 0 {
		n := 1 + r.IntN(min(total, 15))
		out = append(out, n)
		total -= n
	}
	return out
}

func tableText(t *testing.T, cat catalog.Catalog, name lake.TableName, history bool, cols ...string) string {
	t.Helper()
	ident := name.Mirror()
	if history {
		ident = name.History()
	}
	tbl, err := cat.LoadTable(context.Background(), ident)
	if err != nil {
		t.Fatal(err)
	}
	rows, _, err := lake.ReadRows(context.Background(), tbl, []string{"order_id", lake.ColSeq})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, r := range rows {
		var parts []string
		for _, c := range cols {
			parts = append(parts, fmt.Sprint(r[c]))
		}
		lines = append(lines, strings.Join(parts, " "))
	}
	return strings.Join(lines, "\n")
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
		histCols := []string{"order_id", lake.ColSeq, lake.ColValidToSeq, lake.ColRowHash, lake.ColIsCurrent}
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

func mustCatalog(t *testing.T) catalog.Catalog {
	cat, err := lake.OpenCatalog(context.Background(), lake.CatalogConfig{LocalDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return cat
}
