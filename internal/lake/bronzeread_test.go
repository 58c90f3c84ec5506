package lake

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
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
	rows, err := ReadBronzeKeys(ctx, cat, testTable, []cdc.Key{key(1), key(7)})
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
	rows, err := ReadBronzeKeys(ctx, cat, testTable, keys)
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
