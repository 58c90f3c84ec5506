package activities

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/lakemirror/lakemirror/internal/lake/keyindex"
	"github.com/lakemirror/lakemirror/internal/sample"
)

// A worker whose index budget makes every table's index spill (a table
// budget of 0) applies a stream as before, and reports the table's local
// state in each batch result (ApplyResult.State, which status shows) and
// in the metrics' snapshot: exactly these fields, the keys the index
// holds, spilled, its RAM and disk as the table's state measures them,
// and the worker's budget. A table the worker has no state for reports
// none.
func TestStateUsageReported(t *testing.T) {
	s := sample.Generate(sample.Options{Seed: 3, Inserts: 40, Updates: 60, Deletes: 10, Duplicates: 4, Tombstones: true})
	sizes := sizesFor(rand.New(rand.NewPCG(3, 1)), len(s.Delivered))
	cat := mustCatalog(t)
	a := New(cat, nil)
	a.StateDir = t.TempDir()
	a.IndexBudget = keyindex.NewBudget(96<<20, 0)
	defer a.IndexBudget.Close()
	spec := TableSpec{Table: "shop.orders", Topic: "shop.public.orders", KeyColumns: []string{"order_id"}, MaxQuarantine: 1000}.Defaults()
	if a.stateUsage(spec.Table) != nil {
		t.Fatal("usage reported before the table has a state")
	}
	applyStreamWith(t, a, spec, s.Delivered, sizes)

	st, _, err := a.state(spec)
	if err != nil {
		t.Fatal(err)
	}
	st.mirror.Index() // waits for the last batch's recording, which ApplyBatch's result does not (it shows the batch before)
	var res ApplyResult
	a.observeBatch(spec.Table, &res, 0)
	ix, logBytes := st.mirror.State().Memory()
	keys := int64(st.mirror.Index().Keys())
	if keys < 40 || !ix.Spilled || ix.DiskBytes <= 0 || logBytes <= 0 {
		t.Fatalf("the table's state: %+v, log %d bytes, %d keys", ix, logBytes, keys)
	}
	want := fmt.Sprintf(`{"index_keys":%d,"index_spilled":true,"index_ram_bytes":%d,"index_disk_bytes":%d,"log_bytes":%d,"worker_index_ram_bytes":%d,"worker_budget_bytes":100663296,"table_budget_bytes":0,"cache_bytes":12582912}`,
		keys, ix.RAMBytes, ix.DiskBytes, logBytes, ix.RAMBytes)
	got, err := json.Marshal(res.State)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("ApplyResult.State\n%s\nwant\n%s", got, want)
	}
	snap := StateSamples(a)
	wantSnap := fmt.Sprintf("{[{shop.orders %d %d %d}] 100663296 0}", ix.RAMBytes, ix.DiskBytes, logBytes)
	if g := fmt.Sprint(snap); g != wantSnap {
		t.Fatalf("metrics snapshot %s, want %s", g, wantSnap)
	}
	var none ApplyResult
	a.observeBatch("shop.other", &none, 0)
	if none.State != nil {
		t.Fatalf("usage of a table without state: %+v", none.State)
	}
}
