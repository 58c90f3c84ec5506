package kafka

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/lakemirror/lakemirror/schemas"
	"github.com/twmb/franz-go/pkg/kgo"
)

// A transaction topic of two partitions read with the decoder the group
// will use, schemas.DecodeTransaction: the real END of the
// kafka-connect-iceberg-sink capture (testdata/debezium, the one
// schemas' TestDecodeTransaction reads; PostgreSQL, schema envelope),
// synthetic BEGIN and END records, and records no decoder takes (not
// JSON, a tombstone, an unknown status), which are kept, never dropped.
func TestReadTransactionTopic(t *testing.T) {
	_, c := newCluster(t)
	ctx := testCtx(t)
	vals, err := schemas.SplitValues(readTestdata(t, "debezium/kafka-connect-iceberg-sink/debezium-metadata-schema.json"))
	if err != nil || len(vals) != 1 {
		t.Fatalf("fixture: %d values, %v", len(vals), err)
	}
	realEnd := vals[0]
	const topic = "shop.transaction"
	if err := c.CreateTopic(ctx, topic, 2); err != nil {
		t.Fatal(err)
	}
	rec := func(p int32, key, value string) *kgo.Record {
		r := &kgo.Record{Topic: topic, Partition: p}
		if key != "" {
			r.Key = []byte(key)
		}
		if value != "" {
			r.Value = []byte(value)
		}
		return r
	}
	// Keys as Debezium writes them ({"id":…}); an empty key or value is
	// none (nil), the value a tombstone.
	recs := []*kgo.Record{
		rec(0, `{"id":"12117:67299632"}`, `{"status":"BEGIN","id":"12117:67299632","event_count":null,"data_collections":null,"ts_ms":1680821545900}`),
		{Topic: topic, Partition: 0, Key: []byte(`{"id":"12117:67299632"}`), Value: realEnd},
		rec(0, "k", "not json {"),
		rec(1, `{"id":"571:53195829"}`, `{"status":"BEGIN","id":"571:53195829","event_count":null,"data_collections":null,"ts_ms":1486500577125}`),
		rec(1, `{"id":"571:53195832"}`, `{"status":"END","id":"571:53195832","event_count":3,"data_collections":[`+
			`{"data_collection":"public.accounts","event_count":2},{"data_collection":"public.transfers","event_count":1}],"ts_ms":1486500577691}`),
		rec(1, `{"id":"571:53195832"}`, ""), // a tombstone
		rec(1, "", `{"status":"COMMIT","id":"1"}`),
	}
	if err := c.Produce(ctx, recs...); err != nil {
		t.Fatal(err)
	}

	begin0 := TxRecord[schemas.Transaction]{Partition: 0, Offset: 0, Value: schemas.Transaction{Status: "BEGIN", ID: "12117:67299632", TsMs: 1680821545900}}
	end0 := TxRecord[schemas.Transaction]{Partition: 0, Offset: 1, Value: schemas.Transaction{Status: "END", ID: "12117:67299632", EventCount: 1,
		Collections: []schemas.CollectionCount{{Collection: "public.mine", EventCount: 1}}, TsMs: 1680821545908}}
	begin1 := TxRecord[schemas.Transaction]{Partition: 1, Offset: 0, Value: schemas.Transaction{Status: "BEGIN", ID: "571:53195829", TsMs: 1486500577125}}
	end1 := TxRecord[schemas.Transaction]{Partition: 1, Offset: 1, Value: schemas.Transaction{Status: "END", ID: "571:53195832", EventCount: 3,
		Collections: []schemas.CollectionCount{{Collection: "public.accounts", EventCount: 2}, {Collection: "public.transfers", EventCount: 1}}, TsMs: 1486500577691}}
	garbage := KeptRecord{Partition: 0, Offset: 2, Key: []byte("k"), Value: []byte("not json {"),
		Reason: `transaction metadata: not JSON: cannot parse JSON: unexpected value found: "not json {"; unparsed tail: "not json {"`}
	tombstone := KeptRecord{Partition: 1, Offset: 2, Key: []byte(`{"id":"571:53195832"}`),
		Reason: `transaction metadata: not JSON: cannot parse JSON: cannot parse empty string; unparsed tail: ""`}
	commit := KeptRecord{Partition: 1, Offset: 3, Value: []byte(`{"status":"COMMIT","id":"1"}`),
		Reason: `transaction metadata status "COMMIT": want BEGIN or END`}

	for _, c2 := range []struct {
		name   string
		ranges []Range
		want   TxTopicRead[schemas.Transaction]
	}{
		{"whole topic", []Range{{Partition: 1, From: 0, To: 4}, {Partition: 0, From: 0, To: 3}},
			TxTopicRead[schemas.Transaction]{Records: []TxRecord[schemas.Transaction]{begin0, end0, begin1, end1},
				Kept: []KeptRecord{garbage, tombstone, commit}}},
		{"inner ranges", []Range{{Partition: 0, From: 1, To: 2}, {Partition: 1, From: 3, To: 4}},
			TxTopicRead[schemas.Transaction]{Records: []TxRecord[schemas.Transaction]{end0}, Kept: []KeptRecord{commit}}},
		{"decodable only", []Range{{Partition: 0, From: 0, To: 2}, {Partition: 1, From: 2, To: 2}},
			TxTopicRead[schemas.Transaction]{Records: []TxRecord[schemas.Transaction]{begin0, end0}}},
		{"empty", []Range{{Partition: 0, From: 3, To: 3}}, TxTopicRead[schemas.Transaction]{}},
	} {
		got, err := ReadTransactionTopic(ctx, c, topic, c2.ranges, schemas.DecodeTransaction)
		if err != nil {
			t.Fatalf("%s: %v", c2.name, err)
		}
		if !reflect.DeepEqual(got, c2.want) {
			t.Errorf("%s:\n got  %+v\n want %+v", c2.name, got, c2.want)
		}
		if got.Undecodable() != len(c2.want.Kept) {
			t.Errorf("%s: Undecodable %d, want %d", c2.name, got.Undecodable(), len(c2.want.Kept))
		}
	}

	// Fetch's errors, wrapped.
	if _, err := ReadTransactionTopic(ctx, c, topic, []Range{{Partition: 0, From: 0, To: 4}}, schemas.DecodeTransaction); !errors.Is(err, ErrRangePastEnd) {
		t.Errorf("range past the end: %v, want ErrRangePastEnd", err)
	}
	if _, err := ReadTransactionTopic(ctx, c, "nope.transaction", []Range{{Partition: 0, From: 0, To: 1}}, schemas.DecodeTransaction); !errors.Is(err, ErrUnknownTopic) {
		t.Errorf("unknown topic: %v, want ErrUnknownTopic", err)
	}
}

// readTestdata reads a file under the repository's testdata directory.
func readTestdata(t *testing.T, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
