package cuts

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/rowdelta"
)

// appendID appends one row (id) to the table ident, creating it, and
// returns the new snapshot's id.
func appendID(t *testing.T, cat catalog.Catalog, name lakecat.TableName, ident table.Identifier, id int64) int64 {
	t.Helper()
	return appendApplied(t, cat, name, ident, id, "")
}

// appendApplied is appendID with a commit that records applied (hex) as
// the applied position, as a batch's mirror commit does ("" none).
func appendApplied(t *testing.T, cat catalog.Catalog, name lakecat.TableName, ident table.Identifier, id int64, applied string) int64 {
	t.Helper()
	var props iceberg.Properties
	if applied != "" {
		props = iceberg.Properties{lakecat.PropAppliedPosition: applied}
	}
	return appendProps(t, cat, name, ident, id, props)
}

// appendProps is appendID with a commit that sets props.
func appendProps(t *testing.T, cat catalog.Catalog, name lakecat.TableName, ident table.Identifier, id int64, props iceberg.Properties) int64 {
	t.Helper()
	ctx := context.Background()
	tbl, _, err := lakecat.LoadOrCreate(ctx, cat, name.NamespaceIdent(), ident, func() (*iceberg.Schema, error) {
		return iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true}), nil
	}, lakecat.TableProperties(nil))
	if err != nil {
		t.Fatal(err)
	}
	sc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).Append(id)
	rec := b.NewRecordBatch()
	defer rec.Release()
	files, _, err := rowdelta.WriteRecord(ctx, tbl, "t", rec)
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := rowdelta.CommitRowDelta(ctx, tbl, "t", rowdelta.DataFiles(files), rowdelta.DeleteSet{}, props)
	if err != nil {
		t.Fatal(err)
	}
	return out.CurrentSnapshot().SnapshotID
}

// refsOf is ident's cut tags as "name=snapshot id" (the id as given by
// ids, else the number).
func refsOf(t *testing.T, cat catalog.Catalog, ident table.Identifier) map[string]int64 {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), ident)
	if err != nil {
		t.Fatal(err)
	}
	return Refs(tbl)
}

// Untag removes `consistent` from a table taken out of its group, from
// its mirror and its history, and keeps its cut-<n> tags; again, or for
// a table without one or without tables, it does nothing.
func TestUntag(t *testing.T) {
	ctx := context.Background()
	cat, err := lakecat.OpenCatalog(ctx, lakecat.CatalogConfig{LocalDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	accounts := lakecat.TableName{Namespace: "shop", Name: "accounts"}
	transfers := lakecat.TableName{Namespace: "shop", Name: "transfers"}
	a1 := appendID(t, cat, accounts, accounts.Mirror(), 1)
	ah1 := appendID(t, cat, accounts, accounts.History(), 1)
	t1 := appendID(t, cat, transfers, transfers.Mirror(), 1)
	c1 := Cut{Group: "shop", Number: 1, W: "00000000000000670000000000000000", TxID: "102:103", SourceTsMs: 1767258000103}
	if _, _, err := Publish(ctx, cat, c1, []lakecat.TableName{accounts, transfers}, 7*24*time.Hour, time.Now()); err != nil {
		t.Fatal(err)
	}
	got, err := Untag(ctx, cat, accounts)
	if err != nil || !reflect.DeepEqual(got, []table.Identifier{accounts.Mirror(), accounts.History()}) {
		t.Fatalf("Untag = %v, %v", got, err)
	}
	if got := refsOf(t, cat, accounts.Mirror()); !reflect.DeepEqual(got, map[string]int64{"cut-1": a1}) {
		t.Fatalf("mirror tags %v", got)
	}
	if got := refsOf(t, cat, accounts.History()); !reflect.DeepEqual(got, map[string]int64{"cut-1": ah1}) {
		t.Fatalf("history tags %v", got)
	}
	if got := refsOf(t, cat, transfers.Mirror()); !reflect.DeepEqual(got, map[string]int64{"cut-1": t1, "consistent": t1}) {
		t.Fatalf("the other table's tags %v", got)
	}
	for _, name := range []lakecat.TableName{accounts, {Namespace: "shop", Name: "none"}} {
		if got, err := Untag(ctx, cat, name); err != nil || got != nil {
			t.Fatalf("Untag %s again: %v, %v", name, got, err)
		}
	}
}

// Publish tags each table's mirror and history at their current
// snapshots, appends the group's rows to `_cuts` once (a retry appends
// nothing and keeps the tags' snapshots), and moves `consistent`.
func TestPublish(t *testing.T) {
	ctx := context.Background()
	cat, err := lakecat.OpenCatalog(ctx, lakecat.CatalogConfig{LocalDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	accounts := lakecat.TableName{Namespace: "shop", Name: "accounts"}
	transfers := lakecat.TableName{Namespace: "shop", Name: "transfers"}
	a1 := appendID(t, cat, accounts, accounts.Mirror(), 1)
	ah1 := appendID(t, cat, accounts, accounts.History(), 1)
	t1 := appendID(t, cat, transfers, transfers.Mirror(), 1) // no history table
	now := time.Date(2026, 12, 6, 15, 0, 0, 0, time.UTC)
	c1 := Cut{Group: "shop", Number: 1, W: "00000000000000670000000000000000", TxID: "102:103", SourceTsMs: 1767258000103}
	got, _, err := Publish(ctx, cat, c1, []lakecat.TableName{transfers, accounts}, 7*24*time.Hour, now)
	if err != nil {
		t.Fatal(err)
	}
	want := []Tagged{{Table: "shop.accounts", Mirror: a1, History: ah1}, {Table: "shop.transfers", Mirror: t1}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("cut 1 tagged %+v, want %+v", got, want)
	}
	// the tables move on; a retry of cut 1 keeps its snapshots
	a2 := appendID(t, cat, accounts, accounts.Mirror(), 2)
	if got, _, err = Publish(ctx, cat, c1, []lakecat.TableName{accounts, transfers}, 7*24*time.Hour, now); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("cut 1 again: %+v, %v; want %+v", got, err, want)
	}
	c2 := Cut{Group: "shop", Number: 2, W: "00000000000000700000000000000000", TxID: "110:112", SourceTsMs: 1767258000112}
	if got, _, err = Publish(ctx, cat, c2, []lakecat.TableName{accounts, transfers}, 7*24*time.Hour, now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	want2 := []Tagged{{Table: "shop.accounts", Mirror: a2, History: ah1}, {Table: "shop.transfers", Mirror: t1}}
	if !reflect.DeepEqual(got, want2) {
		t.Fatalf("cut 2 tagged %+v, want %+v", got, want2)
	}
	for _, c := range []struct {
		ident table.Identifier
		want  map[string]int64
	}{
		{accounts.Mirror(), map[string]int64{"cut-1": a1, "cut-2": a2, "consistent": a2}},
		{accounts.History(), map[string]int64{"cut-1": ah1, "cut-2": ah1, "consistent": ah1}},
		{transfers.Mirror(), map[string]int64{"cut-1": t1, "cut-2": t1, "consistent": t1}},
	} {
		if got := refsOf(t, cat, c.ident); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s tags %v, want %v", lakecat.IdentString(c.ident), got, c.want)
		}
	}
	tbl, err := cat.LoadTable(ctx, accounts.Mirror())
	if err != nil {
		t.Fatal(err)
	}
	for ref, r := range tbl.Metadata().Refs() {
		if ref == "cut-1" && (r.MaxRefAgeMs == nil || *r.MaxRefAgeMs != 7*24*3600*1000) {
			t.Errorf("cut-1's max-ref-age-ms %v, want 7 days", r.MaxRefAgeMs)
		}
		if ref == Consistent && r.MaxRefAgeMs != nil {
			t.Errorf("consistent has max-ref-age-ms %d, want none", *r.MaxRefAgeMs)
		}
	}
	rows, err := Read(ctx, cat, accounts, "shop")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, r := range rows {
		lines = append(lines, fmt.Sprintf("%d %s %s %d %s %d %d %s", r.Number, r.W, r.TxID, r.SourceTsMs, r.Table, r.Mirror, r.History, r.PublishedAt.Format(time.RFC3339)))
	}
	wantLines := []string{
		fmt.Sprintf("1 %s 102:103 1767258000103 shop.accounts %d %d 2026-12-06T15:00:00Z", c1.W, a1, ah1),
		fmt.Sprintf("1 %s 102:103 1767258000103 shop.transfers %d 0 2026-12-06T15:00:00Z", c1.W, t1),
		fmt.Sprintf("2 %s 110:112 1767258000112 shop.accounts %d %d 2026-12-06T15:01:00Z", c2.W, a2, ah1),
		fmt.Sprintf("2 %s 110:112 1767258000112 shop.transfers %d 0 2026-12-06T15:01:00Z", c2.W, t1),
	}
	if !reflect.DeepEqual(lines, wantLines) {
		t.Errorf("_cuts rows\n got %q\nwant %q", lines, wantLines)
	}
	if _, _, err := Publish(ctx, cat, c1, nil, 0, now); err == nil {
		t.Error("no tables: no error")
	}
	// a table not created yet is empty at the cut: no tag, snapshot 0
	c3 := Cut{Group: "shop", Number: 3, W: "00000000000000800000000000000000"}
	got, _, err = Publish(ctx, cat, c3, []lakecat.TableName{accounts, {Namespace: "shop", Name: "nothing"}}, 0, now)
	if want := []Tagged{{Table: "shop.accounts", Mirror: a2, History: ah1}, {Table: "shop.nothing"}}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("cut 3 with a table not created: %+v, %v; want %+v", got, err, want)
	}
}

// Publish refuses a cut that a table has applied past (ErrPastCut, naming
// the table) before it tags anything; a later attempt of the same cut
// number moves a tag an attempt given up left behind to the snapshot it
// checked; a retry of a cut already appended keeps its tags even when a
// table moved past W since.
func TestPublishPastCut(t *testing.T) {
	ctx := context.Background()
	cat, err := lakecat.OpenCatalog(ctx, lakecat.CatalogConfig{LocalDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	accounts := lakecat.TableName{Namespace: "shop", Name: "accounts"}
	transfers := lakecat.TableName{Namespace: "shop", Name: "transfers"}
	const (
		below = "00000000000000600000000000000001"
		w     = "00000000000000670000000000000000"
		above = "00000000000000680000000000000002"
	)
	a1 := appendApplied(t, cat, accounts, accounts.Mirror(), 1, below)
	ah1 := appendID(t, cat, accounts, accounts.History(), 1)
	appendApplied(t, cat, transfers, transfers.Mirror(), 1, below)
	appendApplied(t, cat, transfers, transfers.Mirror(), 2, above) // a re-snapshot's chunk, or a batch after the table left the cut
	now := time.Date(2026, 12, 7, 5, 0, 0, 0, time.UTC)
	c1 := Cut{Group: "shop", Number: 1, W: w, TxID: "102:103", SourceTsMs: 1767258000103}
	_, _, err = Publish(ctx, cat, c1, []lakecat.TableName{accounts, transfers}, time.Hour, now)
	wantErr := "lake: publish a cut: table shop.transfers: a table is past the cut: its mirror has applied up to " + above + ", above W " + w +
		", so no Iceberg snapshot of it holds the table at W (it left the cut: a re-snapshot or backfill, a bound it dropped, or a run started anew before its first batch); " +
		"nothing was tagged, and a later cut will be taken"
	if !errors.Is(err, ErrPastCut) || err.Error() != wantErr {
		t.Fatalf("a table past W: %v\nwant %s", err, wantErr)
	}
	for _, ident := range []table.Identifier{accounts.Mirror(), accounts.History(), transfers.Mirror()} {
		if got := refsOf(t, cat, ident); len(got) != 0 {
			t.Errorf("%s tagged %v after a cut refused", lakecat.IdentString(ident), got)
		}
	}
	if rows, err := Read(ctx, cat, accounts, "shop"); err != nil || len(rows) != 0 {
		t.Errorf("_cuts rows after a cut refused: %+v, %v", rows, err)
	}
	// another width: not the group's connector
	_, _, err = Publish(ctx, cat, Cut{Group: "shop", Number: 1, W: "0000000000000067"}, []lakecat.TableName{accounts}, time.Hour, now)
	if want := "lake: publish a cut: table shop.accounts: a table is past the cut: its positions have 2 words, W 0000000000000067 has 1: the table is not of the group's connector"; !errors.Is(err, ErrPastCut) || err.Error() != want {
		t.Errorf("another width: %v\nwant %s", err, want)
	}

	// an attempt given up after it tagged accounts at a1 (before this
	// check, or a catalog failure): the next attempt of cut 1, with
	// accounts moved on (below W), moves the tag to what it checked
	if err := setTag(ctx, cat, accounts.Mirror(), Tag(1), a1, time.Hour); err != nil {
		t.Fatal(err)
	}
	a2 := appendApplied(t, cat, accounts, accounts.Mirror(), 2, w)
	got, _, err := Publish(ctx, cat, c1, []lakecat.TableName{accounts}, time.Hour, now)
	want := []Tagged{{Table: "shop.accounts", Mirror: a2, History: ah1}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("cut 1 again: %+v, %v; want %+v", got, err, want)
	}
	for _, c := range []struct {
		ident table.Identifier
		want  map[string]int64
	}{
		{accounts.Mirror(), map[string]int64{"cut-1": a2, "consistent": a2}},
		{accounts.History(), map[string]int64{"cut-1": ah1, "consistent": ah1}},
	} {
		if got := refsOf(t, cat, c.ident); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s tags %v, want %v", lakecat.IdentString(c.ident), got, c.want)
		}
	}
	// appended: a retry keeps the tags although the table moved past W since
	appendApplied(t, cat, accounts, accounts.Mirror(), 3, above)
	if got, _, err = Publish(ctx, cat, c1, []lakecat.TableName{accounts}, time.Hour, now); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("cut 1 retried after its rows: %+v, %v; want %+v", got, err, want)
	}
	if got := refsOf(t, cat, accounts.Mirror()); !reflect.DeepEqual(got, map[string]int64{"cut-1": a2, "consistent": a2}) {
		t.Errorf("accounts tags after the retry %v", got)
	}
	rows, err := Read(ctx, cat, accounts, "shop")
	if err != nil || len(rows) != 1 || rows[0].Mirror != a2 || rows[0].History != ah1 || rows[0].W != w {
		t.Errorf("_cuts rows %+v, %v; want one row of cut 1 at %d/%d", rows, err, a2, ah1)
	}
}

// A `_cuts` table created before ColPerPosition (its nine columns, a row
// of a cut per transaction) gets the column when the next cut is
// published, not on a retry of a cut already there: the old row reads
// PerPosition false (null), a cut per position's rows true, and the
// column is an optional boolean with the next field id.
func TestPublishPerPositionEvolves(t *testing.T) {
	ctx := context.Background()
	cat, err := lakecat.OpenCatalog(ctx, lakecat.CatalogConfig{LocalDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	orders := lakecat.TableName{Namespace: "shop", Name: "orders"}
	o1 := appendID(t, cat, orders, orders.Mirror(), 1)
	old := iceberg.NewSchema(0, schema().Fields()[:9]...)
	tbl, _, err := lakecat.LoadOrCreate(ctx, cat, orders.NamespaceIdent(), Ident(orders),
		func() (*iceberg.Schema, error) { return old, nil }, lakecat.TableProperties(nil))
	if err != nil {
		t.Fatal(err)
	}
	// cut 1's row as an earlier version wrote it: nine columns
	now := time.Date(2026, 12, 6, 15, 0, 0, 0, time.UTC)
	c1 := Cut{Group: "shop", Number: 1, W: "00000000000000670000000000000000", TxID: "102:103", SourceTsMs: 1767258000103}
	sc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).Append(c1.Group)
	b.Field(1).(*array.Int64Builder).Append(c1.Number)
	b.Field(2).(*array.StringBuilder).Append(c1.W)
	b.Field(3).(*array.StringBuilder).Append(c1.TxID)
	b.Field(4).(*array.TimestampBuilder).Append(arrow.Timestamp(c1.SourceTsMs * 1000))
	b.Field(5).(*array.TimestampBuilder).Append(arrow.Timestamp(now.UnixMicro()))
	b.Field(6).(*array.StringBuilder).Append(orders.String())
	b.Field(7).(*array.Int64Builder).Append(o1)
	b.Field(8).AppendNull()
	rec := b.NewRecordBatch()
	defer rec.Release()
	files, _, err := rowdelta.WriteRecord(ctx, tbl, "t", rec)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := rowdelta.CommitRowDelta(ctx, tbl, "t", rowdelta.DataFiles(files), rowdelta.DeleteSet{}, iceberg.Properties{PropCutPrefix + "shop": "1"}); err != nil {
		t.Fatal(err)
	}
	// a retry of cut 1 finds its row: it neither appends nor evolves
	if _, _, err := Publish(ctx, cat, c1, []lakecat.TableName{orders}, 0, now); err != nil {
		t.Fatal(err)
	}
	if tbl, err = cat.LoadTable(ctx, Ident(orders)); err != nil {
		t.Fatal(err)
	}
	if _, ok := tbl.Schema().FindFieldByName(ColPerPosition); ok {
		t.Fatal("a retry of a published cut evolved the table")
	}
	c2 := Cut{Group: "shop", Number: 2, W: "00000000000000690000000000000071", SourceTsMs: 1767258000200, PerPosition: true}
	if _, _, err := Publish(ctx, cat, c2, []lakecat.TableName{orders}, 0, now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if tbl, err = cat.LoadTable(ctx, Ident(orders)); err != nil {
		t.Fatal(err)
	}
	f, ok := tbl.Schema().FindFieldByName(ColPerPosition)
	if !ok || f.ID != 10 || f.Required || !f.Type.Equals(iceberg.PrimitiveTypes.Bool) {
		t.Fatalf("evolved %s: %+v, %v; want optional boolean, id 10", ColPerPosition, f, ok)
	}
	rows, err := Read(ctx, cat, orders, "shop")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, r := range rows {
		lines = append(lines, fmt.Sprintf("%d %s %q %d %s %d %v", r.Number, r.W, r.TxID, r.SourceTsMs, r.Table, r.Mirror, r.PerPosition))
	}
	want := []string{
		fmt.Sprintf(`1 %s "102:103" 1767258000103 shop.orders %d false`, c1.W, o1),
		fmt.Sprintf(`2 %s "" 1767258000200 shop.orders %d true`, c2.W, o1),
	}
	if !reflect.DeepEqual(lines, want) {
		t.Errorf("_cuts rows\n got %q\nwant %q", lines, want)
	}
}

// A table whose last batch ended in the middle of a source snapshot
// (Debezium's reads with the last still to come: BatchTally.SnapshotOpen)
// is not at any cut: nothing is tagged, no row appended. Once a batch
// ends the snapshot (or streams), the cut is published.
func TestPublishSourceSnapshotOpen(t *testing.T) {
	ctx := context.Background()
	cat, err := lakecat.OpenCatalog(ctx, lakecat.CatalogConfig{LocalDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	items := lakecat.TableName{Namespace: "shop", Name: "items"}
	const w = "00000000000000670000000000000000"
	appendProps(t, cat, items, items.Mirror(), 1, iceberg.Properties{lakecat.PropAppliedPosition: "00000000000000600000000000000001",
		lakecat.PropBatchTally: `{"records":2,"changes":2,"tombstones":0,"tx_metadata":0,"quarantined":0,"snapshot_rows":2,"snapshot_open":true}`})
	now := time.Date(2026, 12, 7, 5, 0, 0, 0, time.UTC)
	c1 := Cut{Group: "shop", Number: 1, W: w}
	_, _, err = Publish(ctx, cat, c1, []lakecat.TableName{items}, time.Hour, now)
	wantErr := "lake: publish a cut: table shop.items: a table is in the middle of a source snapshot: its last batch ended with source snapshot reads " +
		"and the snapshot's last read still to come, so the table at W is not known; nothing was tagged, and a later cut will be taken once the snapshot is applied"
	if !errors.Is(err, ErrSourceSnapshotOpen) || err.Error() != wantErr {
		t.Fatalf("a table in a source snapshot: %v\nwant %s", err, wantErr)
	}
	if got := refsOf(t, cat, items.Mirror()); len(got) != 0 {
		t.Errorf("tagged %v after a cut refused", got)
	}
	if rows, err := Read(ctx, cat, items, "shop"); err != nil || len(rows) != 0 {
		t.Errorf("_cuts rows after a cut refused: %+v, %v", rows, err)
	}
	// the snapshot's last read applied
	s2 := appendProps(t, cat, items, items.Mirror(), 2, iceberg.Properties{
		lakecat.PropBatchTally: `{"records":1,"changes":1,"tombstones":0,"tx_metadata":0,"quarantined":0,"snapshot_rows":1,"snapshot_last":true}`})
	got, pub, err := Publish(ctx, cat, c1, []lakecat.TableName{items}, time.Hour, now)
	if want := []Tagged{{Table: "shop.items", Mirror: s2}}; err != nil || !reflect.DeepEqual(got, want) || pub != c1 {
		t.Fatalf("after the last read: %+v, %+v, %v; want %+v, %+v", got, pub, err, want, c1)
	}
}

// An attempt of cut 1 at W1 appended its rows and was then given up (its
// `consistent` moves failed through every retry); the group's next
// attempt is cut 1 again, bound at W2. Publish returns the cut as
// recorded (W1, its transaction and source time) with W1's tags, which
// the group then records (found by a breaker's run: before, the group
// recorded cut 1 at W2 with W1's snapshots).
func TestPublishRecordedAtAnotherW(t *testing.T) {
	ctx := context.Background()
	cat, err := lakecat.OpenCatalog(ctx, lakecat.CatalogConfig{LocalDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	accounts := lakecat.TableName{Namespace: "shop", Name: "accounts"}
	const (
		w1 = "00000000000000670000000000000000"
		w2 = "00000000000000900000000000000000"
	)
	s1 := appendApplied(t, cat, accounts, accounts.Mirror(), 1, "00000000000000600000000000000001")
	now := time.Date(2026, 12, 7, 5, 0, 0, 0, time.UTC)
	c1 := Cut{Group: "shop", Number: 1, W: w1, TxID: "102:103", SourceTsMs: 1767258000103}
	if _, _, err := Publish(ctx, cat, c1, []lakecat.TableName{accounts}, time.Hour, now); err != nil {
		t.Fatal(err)
	}
	appendApplied(t, cat, accounts, accounts.Mirror(), 2, "00000000000000850000000000000001")
	again := Cut{Group: "shop", Number: 1, W: w2, TxID: "130:144", SourceTsMs: 1767258000900}
	got, pub, err := Publish(ctx, cat, again, []lakecat.TableName{accounts}, time.Hour, now.Add(time.Minute))
	if want := []Tagged{{Table: "shop.accounts", Mirror: s1}}; err != nil || !reflect.DeepEqual(got, want) || pub != c1 {
		t.Fatalf("cut 1 again at W2: %+v, %+v, %v; want %+v, %+v (as recorded)", got, pub, err, want, c1)
	}
	if got := refsOf(t, cat, accounts.Mirror()); !reflect.DeepEqual(got, map[string]int64{"cut-1": s1, "consistent": s1}) {
		t.Errorf("tags %v", got)
	}
}
