package activities

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/catalog"

	"github.com/lakemirror/lakemirror/internal/lake"
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

func tableText(t testing.TB, cat catalog.Catalog, name lake.TableName, history bool, cols ...string) string {
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

func mustCatalog(t testing.TB) catalog.Catalog {
	cat, err := lake.OpenCatalog(context.Background(), lake.CatalogConfig{LocalDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return cat
}
