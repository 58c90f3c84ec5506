package activities

import (
	"reflect"
	"testing"

	"github.com/lakemirror/lakemirror/internal/sample"
	"github.com/lakemirror/lakemirror/schemas"
)

// A batch's bronze rows are its records as fetched (one record type,
// payload.Record, embedded in lake.BronzeRecord): every field and header
// kept, whether the record is a change, a tombstone or undecodable, with
// the op and position decoding found for a change.
func TestDecodeKeepsTheRecordForBronze(t *testing.T) {
	s := sample.Generate(sample.Options{Seed: 5, Inserts: 1})
	if len(s.Delivered) == 0 || s.Delivered[0].Op != 'c' {
		t.Fatalf("the sample's first record is not a create: %+v", s.Delivered)
	}
	m := s.Delivered[0]
	recs := []schemas.Record{
		{Topic: "shop.public.orders", Partition: 2, Offset: 40, Key: m.Key, Value: m.Value, Timestamp: 1_700_000_000_000_000,
			Headers: []schemas.Header{{Key: "trace", Value: []byte("t1")}, {Key: "empty"}}},
		{Topic: "shop.public.orders", Partition: 2, Offset: 41, Key: m.Key, Timestamp: 1_700_000_000_000_001}, // tombstone
		{Topic: "shop.public.orders", Partition: 2, Offset: 42, Value: []byte("not json"), Timestamp: 1_700_000_000_000_002},
	}
	out, err := decodeChunk(schemas.NewDecoder(schemas.DecoderOptions{KeyColumns: []string{"order_id"}}), recs)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.bronze) != len(recs) {
		t.Fatalf("%d bronze rows for %d records", len(out.bronze), len(recs))
	}
	for i, r := range recs {
		if !reflect.DeepEqual(out.bronze[i].Record, r) {
			t.Errorf("bronze row %d holds %+v, want the record %+v", i, out.bronze[i].Record, r)
		}
	}
	if b := out.bronze[0]; b.Op != "c" || b.Seq != m.Seq || b.PK != "" {
		t.Errorf("the change's bronze row: op %q seq %q pk %q, want op c, seq %q and no key yet (set by the writer)", b.Op, b.Seq, b.PK, m.Seq)
	}
	for i := 1; i < 3; i++ {
		if b := out.bronze[i]; b.Op != "" || b.Seq != "" || b.SourceTs != 0 {
			t.Errorf("bronze row %d: op %q seq %q source ts %d, want none", i, b.Op, b.Seq, b.SourceTs)
		}
	}
	if len(out.events) != 1 || out.counts.tombstones != 1 || len(out.quarantine) != 1 || out.quarantine[0].Offset != 42 {
		t.Errorf("events %d, tombstones %d, quarantined %+v: want 1, 1 and offset 42", len(out.events), out.counts.tombstones, out.quarantine)
	}
}
