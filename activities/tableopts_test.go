package activities

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/iceberg-go/catalog"

	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/sample"
)

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
			if p, err := lake.PendingKeys(mirror); err != nil || len(p) != 0 {
				t.Fatalf("seed %d %v: %d keys still pending (%v)", seed, c.opts.Tables(), len(p), err)
			}
		}
	}
}
