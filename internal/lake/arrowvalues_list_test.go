package lake

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/parquetio"
)

// List columns (Debezium/Connect arrays): the Iceberg type mapping, the
// Arrow round trip of every element kind, and a mirror table with a list
// column written (writeParquet) and read back (ReadRows, the key index
// rebuilt from the files).

func TestListIcebergType(t *testing.T) {
	for _, c := range []struct {
		t    cdc.Type
		want string
	}{
		{cdc.ListType(cdc.TypeLong), "list<long>"},
		{cdc.ListType(cdc.DecimalType(10, 2)), "list<decimal(10, 2)>"},
		{cdc.ListType(cdc.TypeString), "list<string>"},
	} {
		it, err := lakecat.IcebergType(c.t)
		if err != nil || it.String() != c.want {
			t.Errorf("IcebergType(%v) = %v, %v; want %s", c.t, it, err, c.want)
			continue
		}
		back, err := lakecat.CDCType(it)
		if err != nil || back != c.t {
			t.Errorf("CDCType(%v) = %v, %v; want %v", it, back, err, c.t)
		}
	}
	if _, err := lakecat.IcebergType(cdc.ListType(cdc.DecimalType(65, 1))); err == nil {
		t.Error("list<decimal(65,1)> has no Iceberg type")
	}
}

func TestListArrowRoundTrip(t *testing.T) {
	uuid := string([]byte{0x65, 0x1a, 0xed, 0x08, 0x39, 0x0f, 0x48, 0x93, 0xb2, 0xf1, 0x36, 0x92, 0x3e, 0x7b, 0x74, 0x00})
	cases := []struct {
		elem cdc.Type
		vals []cdc.Value
	}{
		{cdc.TypeInt, []cdc.Value{cdc.List(cdc.Int(1), cdc.Null(), cdc.Int(-2147483648)), cdc.List(), cdc.Null()}},
		{cdc.TypeLong, []cdc.Value{cdc.List(cdc.Int(9223372036854775807))}},
		{cdc.TypeDouble, []cdc.Value{cdc.List(cdc.Float(0.1), cdc.Float(-1e300))}},
		{cdc.TypeString, []cdc.Value{cdc.List(cdc.String("a"), cdc.String(""), cdc.Null())}},
		{cdc.TypeBinary, []cdc.Value{cdc.List(cdc.Bytes([]byte{0, 255}))}},
		{cdc.DecimalType(38, 5), []cdc.Value{cdc.List(cdc.Decimal(-12345, 5), cdc.BigDecimal("12345678901234567890123456789012345678", 5))}},
		{cdc.TypeDate, []cdc.Value{cdc.List(cdc.Date(-719162))}},
		{cdc.TypeTime, []cdc.Value{cdc.List(cdc.Time(86_399_999_999))}},
		{cdc.TypeTimestamp, []cdc.Value{cdc.List(cdc.Timestamp(-1))}},
		{cdc.TypeTimestampTZ, []cdc.Value{cdc.List(cdc.TimestampTZ(1595008822123456))}},
		{cdc.TypeUUID, []cdc.Value{cdc.List(cdc.Value{Kind: cdc.KindUUID, S: uuid})}},
		{cdc.TypeBool, []cdc.Value{cdc.List(cdc.Bool(true), cdc.Bool(false))}},
	}
	for _, c := range cases {
		lt := cdc.ListType(c.elem)
		it, err := lakecat.IcebergType(lt)
		if err != nil {
			t.Fatal(err)
		}
		sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "l", Type: it})
		fresh, err := iceberg.AssignFreshSchemaIDs(sc, nil)
		if err != nil {
			t.Fatal(err)
		}
		asc, err := table.SchemaToArrowSchema(fresh, nil, true, false)
		if err != nil {
			t.Fatal(err)
		}
		b := array.NewRecordBuilder(memory.DefaultAllocator, asc)
		for _, v := range c.vals {
			if err := parquetio.AppendValue(b.Field(0), v); err != nil {
				t.Fatalf("%v: append %+v: %v", lt, v, err)
			}
		}
		rec := b.NewRecordBatch()
		b.Release()
		for i, want := range c.vals {
			got, err := parquetio.ValueAt(rec.Column(0), i)
			if err != nil || !got.Equal(want) {
				t.Errorf("%v row %d: %+v %v, want %+v", lt, i, got, err, want)
			}
		}
		rec.Release()
	}
	// A value of the wrong element kind is an error naming the element.
	sc, _ := iceberg.AssignFreshSchemaIDs(iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "l", Type: &iceberg.ListType{ElementID: -1, Element: iceberg.PrimitiveTypes.Int64}}), nil)
	asc, _ := table.SchemaToArrowSchema(sc, nil, true, false)
	b := array.NewRecordBuilder(memory.DefaultAllocator, asc)
	defer b.Release()
	if err := parquetio.AppendValue(b.Field(0), cdc.List(cdc.Int(1), cdc.String("x"))); err == nil {
		t.Error("a string element in a list<long> column")
	} else {
		t.Log(err)
	}
	if err := parquetio.AppendValue(b.Field(0), cdc.String("x")); err == nil {
		t.Error("a string in a list column")
	}
}

// tagEvent is a change of the tagged table (id, tags list<string>, scores list<decimal(6,2)>).
func tagEvent(op cdc.Op, lsn uint64, id int64, tags cdc.Value, scores cdc.Value) *cdc.Event {
	cols := cdc.NewColumns([]string{"id", "tags", "scores"})
	schema := []cdc.Column{
		{Name: "id", Type: cdc.TypeLong},
		{Name: "tags", Type: cdc.ListType(cdc.TypeString), Optional: true},
		{Name: "scores", Type: cdc.ListType(cdc.DecimalType(6, 2)), Optional: true},
	}
	row := &cdc.Row{Cols: cols, Vals: []cdc.Value{cdc.Int(id), tags, scores}}
	e := &cdc.Event{Op: op, Seq: cdc.PostgresSeq(0, lsn), SourceTs: int64(lsn) * 1_000_000, Schema: schema, After: row,
		Origin: cdc.Origin{Topic: "shop.public.tagged", Offset: int64(lsn)}}
	e.Key, _ = cdc.KeyOf(row, []string{"id"})
	return e
}

func TestMirrorListColumn(t *testing.T) {
	ctx := context.Background()
	cat := newCatalog(t)
	name := lakecat.TableName{Namespace: "shop", Name: "tagged"}
	keys := []string{"id"}
	w := NewMirrorWriter(cat, name, keys)
	b := func(seq int64) Batch {
		return Batch{ID: fmt.Sprintf("tagged#%d", seq), Seq: seq, Topic: "shop.public.tagged",
			Ranges: []Range{{From: seq * 10, To: seq*10 + 10}}, EndOffsets: Offsets{0: seq*10 + 10}}
	}
	batch1 := []*cdc.Event{
		tagEvent(cdc.OpCreate, 1, 1, cdc.List(cdc.String("red"), cdc.Null()), cdc.List(cdc.Decimal(150, 2))),
		tagEvent(cdc.OpCreate, 2, 2, cdc.List(), cdc.Null()),
	}
	if _, err := w.Prepare(ctx, batch1); err != nil {
		t.Fatal(err)
	}
	if _, _, err := w.Apply(ctx, b(1), batch1); err != nil {
		t.Fatal(err)
	}
	// An update of the list column replaces the row (a position delete);
	// a fresh writer rebuilds its index from the files (parquetio.ValueAt on lists).
	w2 := NewMirrorWriter(cat, name, keys)
	batch2 := []*cdc.Event{tagEvent(cdc.OpUpdate, 3, 1, cdc.List(cdc.String("blue")), cdc.List(cdc.Decimal(-5, 2), cdc.Decimal(99999, 2)))}
	if _, err := w2.Prepare(ctx, batch2); err != nil {
		t.Fatal(err)
	}
	res, _, err := w2.Apply(ctx, b(2), batch2)
	if err != nil || res.Updated != 1 || res.PositionDeletes != 1 {
		t.Fatalf("%+v %v", res, err)
	}
	tbl, err := cat.LoadTable(ctx, name.Mirror())
	if err != nil {
		t.Fatal(err)
	}
	if f, ok := tbl.Schema().FindFieldByName("tags"); !ok || f.Type.String() != "list<string>" {
		t.Fatalf("tags field %+v", f)
	}
	rows, _, err := ReadRows(ctx, tbl, keys)
	if err != nil {
		t.Fatal(err)
	}
	got := ""
	for _, r := range rows {
		got += fmt.Sprintf("%v %v %v|", r["id"], r["tags"], r["scores"])
	}
	if want := "1 [blue] [-0.05 999.99]|2 [] <nil>|"; got != want {
		t.Fatalf("rows %q, want %q", got, want)
	}
}
