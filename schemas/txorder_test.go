package schemas

import (
	"strings"
	"testing"
)

// The transaction block's data_collection_order (Debezium docs,
// "Transaction metadata") reaches cdc.Event.TxOrder in every format: JSON
// envelope (a number, or quoted as the docs' examples show it), Avro
// envelope, flattened add.fields; absent or null is 0; a wrong type or a
// value below 1 is refused with the field's name.
func TestDecodeTxOrder(t *testing.T) {
	block := func(b string) string {
		return strings.Replace(pgUpdate, `"transaction":null`, `"transaction":`+b, 1)
	}
	for _, c := range []struct {
		value string
		want  int64
	}{
		{pgUpdate, 0},
		{strings.Replace(pgUpdate, `,"transaction":null`, ``, 1), 0},
		{block(`{"id":"42:200","total_order":5,"data_collection_order":3}`), 3},
		{block(`{"id":"42:200","total_order":"5","data_collection_order":"3"}`), 3},
		{block(`{"id":"42:200","total_order":5,"data_collection_order":null}`), 0},
		{block(`{"id":"42:200","total_order":5}`), 0},
	} {
		got, err := decodeOne(t, idKey, c.value)
		if err != nil || got.Event.TxOrder != c.want || got.Event.TxID != "42" {
			t.Errorf("%s: %v, TxOrder %d TxID %q; want %d", c.value, err, got.Event.TxOrder, got.Event.TxID, c.want)
		}
	}
	for _, c := range []struct{ block, err string }{
		{`{"id":"42:200","total_order":5,"data_collection_order":0}`, "transaction.data_collection_order: 0 is not a positive 64-bit integer"},
		{`{"id":"42:200","total_order":5,"data_collection_order":true}`, "transaction.data_collection_order: want an integer, got"},
	} {
		_, err := decodeOne(t, idKey, block(c.block))
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: error %v, want %q", c.block, err, c.err)
		}
	}
	flat := `{"id":1,"v":"a","__op":"u","__lsn":200,"__source_sequence":"[\"100\",\"200\"]","__source_ts_ms":1700000000000,"__source_txId":42,"__transaction_data_collection_order":7}`
	got, err := NewDecoder(DecoderOptions{KeyColumns: []string{"id"}}).Decode(Record{Value: []byte(flat)})
	if err != nil || got.Event.TxOrder != 7 {
		t.Errorf("flattened: %v, %+v", err, got.Event)
	}
	f := newAvroFixture(t)
	d := NewDecoder(DecoderOptions{Registry: f.tr.client})
	got, err = d.Decode(Record{Key: f.key(t, 1), Value: f.value(t, pgEnvelope("c", nil, pgRow(1, nil), 1000))})
	if err != nil || got.Event.TxOrder != 1 || got.Event.TxID == "" {
		t.Errorf("avro: %v, %+v", err, got.Event)
	}
}
