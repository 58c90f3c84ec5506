package lake

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/tableread"
	"github.com/lakemirror/lakemirror/internal/payload"
)

// orderKeyOf is the primary key of the test orders row with order id i.
func orderKeyOf(i int64) cdc.Key {
	k, _ := cdc.KeyOf(&cdc.Row{Cols: orderCols, Vals: []cdc.Value{cdc.Int(i), cdc.Null(), cdc.Null()}}, orderKey)
	return k
}

func TestReadBronzeKeys(t *testing.T) {
	ctx := context.Background()
	cat := newCatalog(t)
	key := orderKeyOf
	var recs []BronzeRecord
	for o := int64(0); o < 6; o++ {
		r := BronzeRecord{Record: payload.Record{Offset: o, Value: []byte(fmt.Sprint(o))}, Op: "u", Seq: cdc.PostgresSeq(0, uint64(o+1)), PK: key(o % 3)}
		if o == 5 {
			r = BronzeRecord{Record: payload.Record{Offset: o}} // a tombstone: no key
		}
		recs = append(recs, r)
	}
	b := Batch{ID: "b1", Seq: 1, Topic: "t", Ranges: []Range{{From: 0, To: 6}}, EndOffsets: Offsets{0: 6}}
	if _, err := AppendBronze(ctx, cat, testTable, b, recs); err != nil {
		t.Fatal(err)
	}
	rows, err := tableread.ReadBronzeKeys(ctx, cat, testTable, []cdc.Key{key(1), key(7)})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rows {
		got = append(got, fmt.Sprintf("%s/%d@%d=%s", r.Topic, r.Partition, r.Offset, r.Value))
	}
	if fmt.Sprint(got) != "[t/0@1=1 t/0@4=4]" {
		t.Fatalf("rows %v", got)
	}
}

// TestBronzeValuesAcrossFiles: the raw values of several batches, each
// written through the column buffer the previous file left behind
// (parquetio.BinaryColumn), read back exactly from every file.
func TestBronzeValuesAcrossFiles(t *testing.T) {
	ctx := context.Background()
	cat := newCatalog(t)
	key := orderKeyOf
	want := map[int64]string{}
	var keys []cdc.Key
	offset := int64(0)
	for batch, n := range []int{300, 20, 1000, 7} {
		var recs []BronzeRecord
		from := offset
		for range n {
			v := fmt.Sprintf(`{"batch":%d,"offset":%d,"pad":"%s"}`, batch, offset, strings.Repeat("x", int(offset%97)))
			recs = append(recs, BronzeRecord{Record: payload.Record{Offset: offset, Value: []byte(v)}, Op: "u", Seq: cdc.PostgresSeq(0, uint64(offset+1)), PK: key(offset)})
			want[offset] = v
			keys = append(keys, key(offset))
			offset++
		}
		b := Batch{ID: fmt.Sprintf("b%d", batch), Seq: int64(batch + 1), Topic: "t", Ranges: []Range{{From: from, To: offset}}, EndOffsets: Offsets{0: offset}}
		if _, err := AppendBronze(ctx, cat, testTable, b, recs); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := tableread.ReadBronzeKeys(ctx, cat, testTable, keys)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows read, want %d", len(rows), len(want))
	}
	for _, r := range rows {
		if string(r.Value) != want[r.Offset] {
			t.Fatalf("offset %d: value %q, want %q", r.Offset, r.Value, want[r.Offset])
		}
	}
}

// TestReadBronzeKeysCounted: files are pruned by their `_key` bounds, a
// file whose bounds admit a wanted key but that holds none costs its key
// column alone, and the counts say so exactly.
func TestReadBronzeKeysCounted(t *testing.T) {
	ctx := context.Background()
	cat := newCatalog(t)
	offset := int64(0)
	write := func(seq int64, keys []int64, tombstones int) {
		t.Helper()
		from := offset
		var recs []BronzeRecord
		for _, k := range keys {
			recs = append(recs, BronzeRecord{Record: payload.Record{Offset: offset, Value: []byte(fmt.Sprint(k))}, Op: "u",
				Seq: cdc.PostgresSeq(0, uint64(offset+1)), PK: orderKeyOf(k)})
			offset++
		}
		for range tombstones {
			recs = append(recs, BronzeRecord{Record: payload.Record{Offset: offset}})
			offset++
		}
		b := Batch{ID: fmt.Sprint("b", seq), Seq: seq, Topic: "t", Ranges: []Range{{From: from, To: offset}}, EndOffsets: Offsets{0: offset}}
		if _, err := AppendBronze(ctx, cat, testTable, b, recs); err != nil {
			t.Fatal(err)
		}
	}
	span := func(from, n int64) []int64 {
		var ks []int64
		for k := from; k < from+n; k++ {
			ks = append(ks, k)
		}
		return ks
	}
	write(1, span(0, 100), 0)    // file A: keys 0..99
	write(2, span(1000, 100), 0) // file B: keys 1000..1099
	write(3, []int64{5, 1050}, 1)
	for _, c := range []struct {
		key  int64
		want string
	}{
		// A and C read whole; B pruned by its bounds
		{5, "rows [t/0@200=5 t/0@5=5] files 2 pruned 1 keys scanned 103 rows read 103 total 203"},
		// C's bounds admit 50, but it holds no 50: its key column only
		{50, "rows [t/0@50=50] files 2 pruned 1 keys scanned 103 rows read 100 total 203"},
		// B and C
		{1050, "rows [t/0@150=1050 t/0@201=1050] files 2 pruned 1 keys scanned 103 rows read 103 total 203"},
		// only C's bounds (5 to 1050) admit it, and C holds no 500
		{500, "rows [] files 1 pruned 2 keys scanned 3 rows read 0 total 203"},
	} {
		rows, scan, err := tableread.ReadBronzeKeysCounted(ctx, cat, testTable, []cdc.Key{orderKeyOf(c.key)})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range rows {
			got = append(got, fmt.Sprintf("%s/%d@%d=%s", r.Topic, r.Partition, r.Offset, r.Value))
		}
		slices.Sort(got)
		s := fmt.Sprintf("rows %v files %d pruned %d keys scanned %d rows read %d total %d", got, scan.Files, scan.Pruned, scan.KeysScanned, scan.RowsRead, scan.TotalRows)
		if s != c.want {
			t.Errorf("key %d:\n got %s\nwant %s", c.key, s, c.want)
		}
	}
}
