package schemas

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// Fixture files 8–12 (memiiso/debezium-server-iceberg, pretty-printed,
// MySQL 2.7.0.Alpha1 with keys) and 15 (getindata transaction metadata).

func splitOne(t *testing.T, rel string) []byte {
	t.Helper()
	vals, err := SplitValues(readFixture(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	if len(vals) != 1 {
		t.Fatalf("%s: %d values, want 1", rel, len(vals))
	}
	return vals[0]
}

func TestServerIcebergDelete(t *testing.T) {
	key := splitOne(t, "debezium-server-iceberg/serde-unnested-delete-key-withschema.json")
	val := splitOne(t, "debezium-server-iceberg/serde-unnested-delete-val-withschema.json")
	d := NewDecoder(DecoderOptions{}) // key columns from the Kafka key
	got, err := d.Decode(Record{Topic: "testc.inventory.customers", Partition: 2, Offset: 9, Key: key, Value: val})
	if err != nil {
		t.Fatal(err)
	}
	e := got.Event
	if got.Kind != KindChange || got.RawOp != "d" || e.Op != cdc.OpDelete {
		t.Fatalf("kind %v op %q", got.Kind, got.RawOp)
	}
	if e.Seq != cdc.MySQLSeq(3, 632, 0) {
		t.Errorf("seq %v", e.Seq)
	}
	if e.SourceTs != 1718486007000000 { // source.ts_us
		t.Errorf("SourceTs %d", e.SourceTs)
	}
	if e.Snapshot != cdc.SnapshotNone || e.TxID != "" {
		t.Errorf("snapshot %d tx %q", e.Snapshot, e.TxID)
	}
	if e.Key != mustKey(t, cdc.Int(1004)) {
		t.Errorf("key %x", e.Key)
	}
	if fmt.Sprint(d.keyCols) != "[id]" {
		t.Errorf("learned key columns %v", d.keyCols)
	}
	if e.After != nil {
		t.Errorf("after %+v", e.After)
	}
	wantValue(t, "first_name", get(t, e.Before, "first_name"), cdc.String("Anne"))
	wantValue(t, "email", get(t, e.Before, "email"), cdc.String("annek@noanswer.org"))
	if len(e.Schema) != 4 || e.Schema[0] != (cdc.Column{Name: "id", Type: cdc.TypeInt, Source: "int32"}) {
		t.Errorf("schema %+v", e.Schema)
	}
	if e.Origin != (cdc.Origin{Topic: "testc.inventory.customers", Partition: 2, Offset: 9}) {
		t.Errorf("origin %+v", e.Origin)
	}

	// The same delete with before:null takes its key from the Kafka key,
	// typed by the key schema, and encodes the same key.
	noBefore := deleteBeforeImage(t, val)
	got2, err := NewDecoder(DecoderOptions{}).Decode(Record{Key: key, Value: noBefore})
	if err != nil {
		t.Fatal(err)
	}
	if got2.Event.Key != e.Key || got2.Event.Before != nil {
		t.Errorf("key from Kafka key %x, want %x", got2.Event.Key, e.Key)
	}
	// A bare (schema-less) Kafka key works too.
	got3, err := NewDecoder(DecoderOptions{KeyColumns: []string{"id"}}).Decode(Record{Key: []byte(`{"id":1004}`), Value: noBefore})
	if err != nil || got3.Event.Key != e.Key {
		t.Errorf("bare key: %v %x", err, got3.Event.Key)
	}
	// Without a key at all, such a delete cannot be keyed.
	_, err = NewDecoder(DecoderOptions{KeyColumns: []string{"id"}}).Decode(Record{Value: noBefore})
	asDecodeError(t, err)
}

// deleteBeforeImage replaces the payload's before object with null.
func deleteBeforeImage(t *testing.T, val []byte) []byte {
	t.Helper()
	i := bytes.Index(val, []byte(`"payload"`))
	j := bytes.Index(val[i:], []byte(`"before": {`))
	k := bytes.Index(val[i+j:], []byte(`},`))
	if i < 0 || j < 0 || k < 0 {
		t.Fatal("fixture layout changed")
	}
	out := append([]byte{}, val[:i+j]...)
	out = append(out, `"before": null`...)
	return append(out, val[i+j+k+1:]...)
}

func TestServerIcebergOrder(t *testing.T) {
	key := splitOne(t, "debezium-server-iceberg/serde-unnested-order-key-withschema.json")
	val := splitOne(t, "debezium-server-iceberg/serde-unnested-order-val-withschema.json")
	got, err := NewDecoder(DecoderOptions{}).Decode(Record{Key: key, Value: val})
	if err != nil {
		t.Fatal(err)
	}
	e := got.Event
	if e.Op != cdc.OpRead || e.Seq != cdc.MySQLSeq(3, 824, 0) || e.SourceTs != 1718461481000000 {
		t.Errorf("op %v seq %v ts %d", e.Op, e.Seq, e.SourceTs)
	}
	if e.Snapshot != cdc.SnapshotLast { // "last_in_data_collection": the table's last read
		t.Errorf("snapshot %d", e.Snapshot)
	}
	if e.Key != mustKey(t, cdc.Int(10004)) {
		t.Errorf("key %x", e.Key)
	}
	wantValue(t, "order_date", get(t, e.After, "order_date"), cdc.Date(16852))
	wantValue(t, "purchaser", get(t, e.After, "purchaser"), cdc.Int(1003))
	if c := e.Schema[1]; c != (cdc.Column{Name: "order_date", Type: cdc.TypeDate, Source: "io.debezium.time.Date"}) {
		t.Errorf("order_date column %+v", c)
	}
}

func TestUnwrappedRecordRejected(t *testing.T) {
	val := splitOne(t, "debezium-server-iceberg/unwrap-with-schema.json")
	_, err := NewDecoder(DecoderOptions{KeyColumns: []string{"id"}, Flattened: FlattenNever}).Decode(Record{Value: val})
	if de := asDecodeError(t, err); !strings.Contains(de.Reason, "ExtractNewRecordState") {
		t.Errorf("reason %q", de.Reason)
	}
}

func TestTxMetadata(t *testing.T) {
	val := splitOne(t, "kafka-connect-iceberg-sink/debezium-metadata-schema.json")
	d := NewDecoder(DecoderOptions{})
	got, err := d.Decode(Record{Value: val})
	if err != nil {
		t.Fatal(err)
	}
	if got.Kind != KindTxMetadata || got.Event != nil || got.RawOp != "" {
		t.Errorf("got %+v", got)
	}
	// Without the envelope, a BEGIN as Debezium writes it.
	begin := `{"status":"BEGIN","id":"571:53195829","event_count":null,"data_collections":null,"ts_ms":1486500577125}`
	got, err = d.Decode(Record{Value: []byte(begin)})
	if err != nil || got.Kind != KindTxMetadata {
		t.Errorf("BEGIN: %+v %v", got, err)
	}
	_, err = d.Decode(Record{Value: []byte(`{"status":"MAYBE","id":"1"}`)})
	asDecodeError(t, err)
}
