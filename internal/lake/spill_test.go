package lake

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/catalog"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/keyindex"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/scd2"
	"github.com/lakemirror/lakemirror/internal/lake/tablestate"
)

// TestMain runs the package's tests with every local state's key index
// spilled to disk at its first safe point when LAKEMIRROR_TEST_SPILL=1
// (a table budget of 0), so the whole suite checks the spilled index.
func TestMain(m *testing.M) {
	if os.Getenv("LAKEMIRROR_TEST_SPILL") == "1" {
		tablestate.SetBudget(keyindex.NewBudget(256<<20, 0))
	}
	os.Exit(m.Run())
}

// spillPair is a mirror and history writer sharing one state, as the
// activities make them, under an index budget (nil: in RAM).
type spillPair struct {
	cat    catalog.Catalog
	m      *MirrorWriter
	h      *scd2.HistoryWriter
	builds map[string]int
}

func newSpillPair(t *testing.T, budget *keyindex.Budget, stateDir string) *spillPair {
	p := &spillPair{cat: newCatalog(t), builds: map[string]int{}}
	p.m, p.h = NewWriters(p.cat, testTable, orderKey, WriterOptions{StateDir: stateDir, History: true, IndexBudget: budget,
		OnBuild: func(r string) { p.builds[r]++ }})
	return p
}

func (p *spillPair) apply(t *testing.T, b Batch, evs []*cdc.Event) {
	t.Helper()
	ctx := lakecat.WithTableCache(context.Background())
	prep, err := p.m.Prepare(ctx, evs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.h.Ensure(ctx, prep.Table); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.m.Apply(ctx, b, prep.Events); err != nil {
		t.Fatal(err)
	}
	pre, known := p.m.PreBatchSeqs()
	if _, err := p.h.Apply(ctx, b, prep.Events, pre, known); err != nil {
		t.Fatal(err)
	}
}

// historyText renders the history table: key, version interval, current.
func (p *spillPair) historyText(t *testing.T) string {
	tbl, err := p.cat.LoadTable(context.Background(), testTable.History())
	if err != nil {
		t.Fatal(err)
	}
	rows, _, err := ReadRows(context.Background(), tbl, []string{"order_id", lakecat.ColSeq})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, r := range rows {
		lines = append(lines, fmt.Sprintf("%v %v %v..%v %v", r["order_id"], r["status"], r[lakecat.ColSeq], r[lakecat.ColValidToSeq], r[lakecat.ColIsCurrent]))
	}
	return strings.Join(lines, "\n")
}

// spillStream is 12 batches of 80 changes over 300 keys: creates,
// updates, key-only deletes (their values come from the local state) and
// re-creates, in order.
func spillStream() [][]*cdc.Event {
	r := rand.New(rand.NewPCG(33, 1))
	live := map[int64]bool{}
	var out [][]*cdc.Event
	lsn := uint64(0)
	for range 12 {
		var evs []*cdc.Event
		for range 80 {
			lsn++
			id := int64(r.IntN(300))
			switch {
			case !live[id]:
				evs = append(evs, ev(cdc.OpCreate, lsn, id, "placed", int64(r.IntN(10000))))
				live[id] = true
			case r.IntN(4) == 0:
				evs = append(evs, ev(cdc.OpDelete, lsn, id, "", 0))
				live[id] = false
			default:
				evs = append(evs, ev(cdc.OpUpdate, lsn, id, []string{"paid", "shipped", "returned"}[r.IntN(3)], int64(r.IntN(10000))))
			}
		}
		out = append(out, evs)
	}
	return out
}

// A state whose key index lives on disk from its first batch on (a table
// budget of 0) writes the same mirror and history as one in RAM, its
// usage shows the index spilled, and the index's store goes with the
// state when it closes.
func TestSpilledStateMatchesRAM(t *testing.T) {
	budget := keyindex.NewBudget(64<<20, 0)
	defer budget.Close()
	spilled, inRAM := newSpillPair(t, budget, t.TempDir()), newSpillPair(t, nil, t.TempDir())
	for i, evs := range spillStream() {
		spilled.apply(t, batch(int64(i+1)), evs)
		inRAM.apply(t, batch(int64(i+1)), evs)
	}
	if got, want := mirrorLines(t, spilled.cat), mirrorLines(t, inRAM.cat); got != want || strings.Count(want, "\n") < 250 {
		t.Fatalf("mirror with a spilled index:\n%s\nin RAM:\n%s", got, want)
	}
	if got, want := spilled.historyText(t), inRAM.historyText(t); got != want || strings.Count(want, "\n") < 800 {
		t.Fatalf("history with a spilled index:\n%s\nin RAM:\n%s", got, want)
	}
	u, logBytes := spilled.m.State().Memory()
	ru, _ := inRAM.m.State().Memory()
	if !u.Spilled || u.Keys != ru.Keys || u.Keys < 250 || u.DiskBytes <= 0 || ru.Spilled || ru.DiskBytes != 0 || logBytes <= 0 {
		t.Fatalf("usage: spilled %+v (log %d bytes), in RAM %+v", u, logBytes, ru)
	}
	if budget.OnDisk() != u.DiskBytes || budget.InRAM() != u.RAMBytes {
		t.Fatalf("budget counts %d bytes in RAM and %d on disk, the index %d and %d", budget.InRAM(), budget.OnDisk(), u.RAMBytes, u.DiskBytes)
	}
	if err := spilled.m.State().Close(); err != nil {
		t.Fatal(err)
	}
	if budget.OnDisk() != 0 || budget.InRAM() != 0 {
		t.Fatalf("after Close the budget still counts %d bytes in RAM and %d on disk", budget.InRAM(), budget.OnDisk())
	}
	if fmt.Sprint(spilled.builds) != "map[new:1]" {
		t.Fatalf("builds %v, want map[new:1]", spilled.builds)
	}
}
