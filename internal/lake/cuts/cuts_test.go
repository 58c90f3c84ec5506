package cuts

import (
	"context"
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
	out, _, err := rowdelta.CommitRowDelta(ctx, tbl, "t", rowdelta.DataFiles(files), rowdelta.DeleteSet{}, nil)
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
	got, err := Publish(ctx, cat, c1, []lakecat.TableName{transfers, accounts}, 7*24*time.Hour, now)
	if err != nil {
		t.Fatal(err)
	}
	want := []Tagged{{Table: "shop.accounts", Mirror: a1, History: ah1}, {Table: "shop.transfers", Mirror: t1}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("cut 1 tagged %+v, want %+v", got, want)
	}
	// the tables move on; a retry of cut 1 keeps its snapshots
	a2 := appendID(t, cat, accounts, accounts.Mirror(), 2)
	if got, err = Publish(ctx, cat, c1, []lakecat.TableName{accounts, transfers}, 7*24*time.Hour, now); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("cut 1 again: %+v, %v; want %+v", got, err, want)
	}
	c2 := Cut{Group: "shop", Number: 2, W: "00000000000000700000000000000000", TxID: "110:112", SourceTsMs: 1767258000112}
	if got, err = Publish(ctx, cat, c2, []lakecat.TableName{accounts, transfers}, 7*24*time.Hour, now.Add(time.Minute)); err != nil {
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
	if _, err := Publish(ctx, cat, c1, nil, 0, now); err == nil {
		t.Error("no tables: no error")
	}
	// a table not created yet is empty at the cut: no tag, snapshot 0
	c3 := Cut{Group: "shop", Number: 3, W: "00000000000000800000000000000000"}
	got, err = Publish(ctx, cat, c3, []lakecat.TableName{accounts, {Namespace: "shop", Name: "nothing"}}, 0, now)
	if want := []Tagged{{Table: "shop.accounts", Mirror: a2, History: ah1}, {Table: "shop.nothing"}}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("cut 3 with a table not created: %+v, %v; want %+v", got, err, want)
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
	if _, err := Publish(ctx, cat, c1, []lakecat.TableName{orders}, 0, now); err != nil {
		t.Fatal(err)
	}
	if tbl, err = cat.LoadTable(ctx, Ident(orders)); err != nil {
		t.Fatal(err)
	}
	if _, ok := tbl.Schema().FindFieldByName(ColPerPosition); ok {
		t.Fatal("a retry of a published cut evolved the table")
	}
	c2 := Cut{Group: "shop", Number: 2, W: "00000000000000690000000000000071", SourceTsMs: 1767258000200, PerPosition: true}
	if _, err := Publish(ctx, cat, c2, []lakecat.TableName{orders}, 0, now.Add(time.Minute)); err != nil {
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
