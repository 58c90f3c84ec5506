package schemas

import (
	"reflect"
	"testing"
)

// A transaction metadata topic's records, read into Transaction: the
// real END of file 15 (PROVENANCE.md: PostgreSQL, schema envelope), a
// BEGIN as Debezium writes it without the envelope (null counts), an END
// over two tables, and the refusals.
func TestDecodeTransaction(t *testing.T) {
	got, err := DecodeTransaction(splitOne(t, "kafka-connect-iceberg-sink/debezium-metadata-schema.json"))
	want := Transaction{Status: "END", ID: "12117:67299632", EventCount: 1,
		Collections: []CollectionCount{{Collection: "public.mine", EventCount: 1}}, TsMs: 1680821545908}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("real END: %+v, %v; want %+v", got, err, want)
	}
	got, err = DecodeTransaction([]byte(`{"status":"BEGIN","id":"571:53195829","event_count":null,"data_collections":null,"ts_ms":1486500577125}`))
	want = Transaction{Status: "BEGIN", ID: "571:53195829", TsMs: 1486500577125}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("BEGIN: %+v, %v; want %+v", got, err, want)
	}
	got, err = DecodeTransaction([]byte(`{"status":"END","id":"571:53195832","event_count":3,"data_collections":[` +
		`{"data_collection":"public.accounts","event_count":2},{"data_collection":"public.transfers","event_count":1}],"ts_ms":1486500577691}`))
	want = Transaction{Status: "END", ID: "571:53195832", EventCount: 3, TsMs: 1486500577691, Collections: []CollectionCount{
		{Collection: "public.accounts", EventCount: 2}, {Collection: "public.transfers", EventCount: 1}}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("END over two tables: %+v, %v; want %+v", got, err, want)
	}
	for _, c := range []struct{ value, err string }{
		{`[1]`, "transaction metadata: want a JSON object, got an array"},
		{`{"status":"COMMIT","id":"1"}`, `transaction metadata status "COMMIT": want BEGIN or END`},
		{`{"status":"END"}`, "transaction metadata id: want a string, got nothing"},
		{`{"status":"END","id":""}`, "transaction metadata id: empty"},
		{`{"status":"END","id":"1","event_count":-1}`, "transaction metadata event_count: want a non-negative integer, got a number"},
		{`{"status":"END","id":"1","data_collections":{"x":1}}`, "transaction metadata data_collections: want an array, got an object"},
		{`{"status":"END","id":"1","data_collections":[{"data_collection":"t","event_count":"2"}]}`,
			"transaction metadata data_collections[0]: transaction metadata event_count: want a non-negative integer, got a string"},
	} {
		if _, err := DecodeTransaction([]byte(c.value)); err == nil || err.Error() != c.err {
			t.Errorf("%s: error %v, want %q", c.value, err, c.err)
		}
	}
}
