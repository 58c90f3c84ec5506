//go:build e2e

package activities

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/sample"
)

// Every choice of tables ends with the same mirror as the table with all
// three, under duplicates, late and out-of-order deliveries and deletes
// without before images (whose values a late change decides: the
// mirror-only late path of lake/mirror_pending.go), and creates exactly
// the tables it keeps. With bronze kept, a worker restart changes nothing
// either (the late path reads bronze once).
func TestTableOptionsSameMirror(t *testing.T) {
	name := lake.TableName{Namespace: "shop", Name: "orders"}
	mirrorCols := []string{"order_id", "status", "amount", "note", lake.ColSeq, lake.ColDeleted}
	cases := []struct {
		opts     TableSpec
		restarts bool
	}{
		{TableSpec{WithoutHistory: true, WithoutBronze: true}, false},
		{TableSpec{WithoutHistory: true}, false},
		{TableSpec{WithoutHistory: true}, true},
		{TableSpec{WithoutBronze: true}, false},
	}
	for seed := int64(1); seed <= 4; seed++ {
		s := sample.Generate(sample.Options{Seed: seed, Inserts: 25, Updates: 70, Deletes: 14, Duplicates: 8, Late: 16,
			OutOfOrder: 8, UnseenDeletes: 2, Tombstones: true, ReplicaIdentityFull: false})
		sizes := sizesFor(rand.New(rand.NewPCG(uint64(seed), 1)), len(s.Delivered))
		full := mustCatalog(t)
		applyStream(t, full, s.Delivered, sizes, func(int) bool { return false })
		want := tableText(t, full, name, false, mirrorCols...)
		for _, c := range cases {
			cat := mustCatalog(t)
			r := rand.New(rand.NewPCG(uint64(seed), 2))
			applyStreamSpec(t, cat, c.opts, s.Delivered, sizes, func(i int) bool { return c.restarts && i > 0 && r.IntN(3) == 0 })
			if got := tablesOf(t, cat, name); !slices.Equal(got, c.opts.Tables()) {
				t.Fatalf("seed %d %v: tables %v, want %v", seed, c.opts.Tables(), got, c.opts.Tables())
			}
			if got := tableText(t, cat, name, false, mirrorCols...); got != want {
				t.Fatalf("seed %d %v restarts=%v: mirror differs from the full table's\ngot:\n%s\nwant:\n%s", seed, c.opts.Tables(), c.restarts, got, want)
			}
			if !c.opts.WithoutHistory {
				continue
			}
			mirror, err := lake.LoadTable(context.Background(), cat, name.Mirror())
			if err != nil {
				t.Fatal(err)
			}
			if p, err := lakecat.PendingKeys(mirror); err != nil || len(p) != 0 {
				t.Fatalf("seed %d %v: %d keys still pending (%v)", seed, c.opts.Tables(), len(p), err)
			}
		}
	}
}

// Compaction makes progress while batches are applied continuously (it runs
// between them), and the tables end as without it.
func TestCompactionUnderLoad(t *testing.T) {
	s := sample.Generate(sample.Options{Seed: 11, Inserts: 60, Updates: 300, Deletes: 30, Duplicates: 10, Late: 20, OutOfOrder: 10, Tombstones: true})
	sizes := sizesFor(rand.New(rand.NewPCG(11, 1)), len(s.Delivered))
	name := lake.TableName{Namespace: "shop", Name: "orders"}
	plain := mustCatalog(t)
	applyStream(t, plain, s.Delivered, sizes, func(int) bool { return false })

	cat := mustCatalog(t)
	a := New(cat, nil)
	a.StateDir = t.TempDir()
	spec := TableSpec{Table: "shop.orders", Topic: "shop.public.orders", KeyColumns: []string{"order_id"}, MaxQuarantine: 1000}.Defaults()
	done := make(chan struct{})
	compactions, rewritten := 0, 0
	var compactErr error
	// compaction i starts once batch (i+1)*len/9 has started (so each one
	// finds files with deletes: without the pacing all eight could run
	// before the first batch), and runs while the batches go on
	started := make(chan int, len(sizes))
	go func() {
		defer close(done)
		seen := -1
		for i := 0; i < 8; i++ {
			for seen < (i+1)*len(sizes)/9 {
				b, ok := <-started
				if !ok {
					break
				}
				seen = b
			}
			res, err := a.Maintain(context.Background(), MaintenanceRequest{Spec: spec, Job: JobCompact})
			if err != nil {
				compactErr = err
				return
			}
			compactions++
			rewritten += res.Compact["mirror"].Rewritten
		}
	}()
	applyBatches(t, &a, spec, s.Delivered, sizes, func(i int) *Activities { started <- i; return nil })
	close(started)
	<-done
	if compactErr != nil {
		t.Fatalf("compaction under load failed: %v", compactErr)
	}
	if compactions != 8 || rewritten == 0 {
		t.Fatalf("%d compactions rewrote %d mirror files, want 8 that rewrote some", compactions, rewritten)
	}
	mirrorCols := []string{"order_id", "status", "amount", lake.ColSeq, lake.ColDeleted}
	if got, want := tableText(t, cat, name, false, mirrorCols...), tableText(t, plain, name, false, mirrorCols...); got != want {
		t.Fatalf("mirror differs with compactions\ngot:\n%s\nwant:\n%s", got, want)
	}
	histCols := []string{"order_id", lake.ColSeq, lake.ColValidToSeq, lakecat.ColRowHash, lake.ColIsCurrent}
	if got, want := tableText(t, cat, name, true, histCols...), tableText(t, plain, name, true, histCols...); got != want {
		t.Fatalf("history differs with compactions\ngot:\n%s\nwant:\n%s", got, want)
	}
}

// tablesOf lists which of the source table's Iceberg tables exist.
func tablesOf(t *testing.T, cat catalog.Catalog, name lake.TableName) []string {
	t.Helper()
	var out []string
	for _, k := range []struct {
		kind  string
		ident []string
	}{{"bronze", name.Bronze()}, {"mirror", name.Mirror()}, {"history", name.History()}} {
		tbl, err := lake.LoadTable(context.Background(), cat, k.ident)
		if err != nil {
			t.Fatal(err)
		}
		if tbl != nil {
			out = append(out, k.kind)
		}
	}
	return out
}
