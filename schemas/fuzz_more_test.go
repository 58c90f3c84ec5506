package schemas

import (
	"errors"
	"maps"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// Fuzz targets for the Avro and flattened decoders: no input panics, every
// error is a *DecodeError with the record's coordinates and a reason, and
// every success is a consistent event.

// fuzzCheck decodes rec with d and checks the contract.
func fuzzCheck(t *testing.T, d *Decoder, rec Record) {
	t.Helper()
	got, err := d.Decode(rec)
	if err != nil {
		var de *DecodeError
		if !errors.As(err, &de) {
			t.Fatalf("error %v is %T, not *DecodeError", err, err)
		}
		if strings.Contains(de.Reason, "internal error") {
			t.Fatalf("panic: %v", de.Reason)
		}
		if de.Topic != rec.Topic || de.Partition != rec.Partition || de.Offset != rec.Offset || de.Reason == "" {
			t.Fatalf("error without the record's coordinates or a reason: %+v", de)
		}
		if got.Event != nil {
			t.Fatal("error with an event")
		}
		return
	}
	switch got.Kind {
	case KindChange:
		e := got.Event
		if e == nil || e.Seq == "" || e.Key == "" || e.Image() == nil || got.RawOp != e.Op.String() || !e.Op.IsUpsert() && e.Op != cdc.OpDelete {
			t.Fatalf("inconsistent change %+v %+v", got, e)
		}
		if e.Origin != (cdc.Origin{Topic: rec.Topic, Partition: rec.Partition, Offset: rec.Offset}) {
			t.Fatalf("origin %+v", e.Origin)
		}
		for _, r := range []*cdc.Row{e.Before, e.After} {
			if r == nil {
				continue
			}
			if len(r.Vals) != r.Cols.Len() {
				t.Fatalf("row with %d values for %d columns", len(r.Vals), r.Cols.Len())
			}
			for i, v := range r.Vals {
				if v.Kind == cdc.KindList && v.Elems() == nil && v.S != "" {
					t.Fatalf("column %s: malformed list", r.Cols.Names[i])
				}
				if e.Schema != nil && i < len(e.Schema) && r.Cols.Names[i] == e.Schema[i].Name {
					if c, err := Coerce(v, e.Schema[i].Type); err != nil || !c.Equal(v) {
						t.Fatalf("column %s: %+v is not a %v: %v", e.Schema[i].Name, v, e.Schema[i].Type, err)
					}
				}
			}
		}
		InferColumns([]*cdc.Event{e})
	case KindTruncate:
		if got.Event == nil || got.Event.Op != cdc.OpTruncate || got.Event.Seq == "" {
			t.Fatalf("inconsistent truncate %+v", got)
		}
	case KindTombstone, KindTxMetadata:
		if got.Event != nil {
			t.Fatalf("%v with an event", got.Kind)
		}
	}
}

// fuzzAvroEnv is a registry with the test schemas, and a decoder whose
// compiled schemas new decoders copy (no HTTP per fuzz input).
type fuzzAvroEnv struct {
	ids      []int
	template *Decoder
	frames   [][]byte // a valid record per schema, for seeds
}

var (
	fuzzAvroOnce sync.Once
	fuzzAvro     *fuzzAvroEnv
)

func avroFuzzEnv(t testing.TB) *fuzzAvroEnv {
	fuzzAvroOnce.Do(func() {
		f := newAvroFixture(t)
		flatID, flatS := f.tr.register(t, "flat-value", `{"type":"record","name":"Value","namespace":"f","fields":[
		 {"name":"id","type":"int"},{"name":"v","type":["null","string"],"default":null},{"name":"__op","type":["null","string"],"default":null},
		 {"name":"__lsn","type":["null","long"],"default":null},{"name":"__deleted","type":["null","string"],"default":null}]}`)
		env := &fuzzAvroEnv{ids: []int{f.valueID, f.keyID, flatID}}
		env.frames = [][]byte{
			f.value(t, pgEnvelope("u", pgRow(1, map[string]any{"s": "a", "dec": big.NewRat(1, 4), "arr": []any{"x"}}), pgRow(1, map[string]any{"vsd": map[string]any{"io.debezium.data.VariableScaleDecimal": map[string]any{"scale": int32(1), "value": []byte{5}}}}), 10)),
			f.key(t, 1),
			wire(t, flatID, flatS, map[string]any{"id": int32(1), "v": "x", "__op": "c", "__lsn": int64(5), "__deleted": "false"}),
		}
		env.template = NewDecoder(DecoderOptions{Registry: f.tr.client, KeyColumns: []string{"id"}})
		for _, fr := range env.frames {
			if _, err := env.template.Decode(Record{Key: env.frames[1], Value: fr}); err != nil && !strings.Contains(err.Error(), "no Kafka key") {
				t.Logf("seed: %v", err)
			}
		}
		fuzzAvro = env
	})
	if fuzzAvro == nil {
		t.Skip("no Avro fuzz environment")
	}
	return fuzzAvro
}

// decoder returns a fresh decoder sharing the template's compiled schemas.
func (e *fuzzAvroEnv) decoder() *Decoder {
	d := NewDecoder(DecoderOptions{KeyColumns: []string{"id"}})
	d.avro.nodes = maps.Clone(e.template.avro.nodes)
	d.avro.values = maps.Clone(e.template.avro.values)
	d.avro.keys = maps.Clone(e.template.avro.keys)
	return d
}

// FuzzDecodeAvro decodes mutated Avro bodies framed with each registered
// schema id, as values and as keys.
func FuzzDecodeAvro(f *testing.F) {
	env := avroFuzzEnv(f)
	for i, fr := range env.frames {
		f.Add(uint8(i), fr[5:], env.frames[1][5:])
	}
	f.Add(uint8(0), []byte{2, 0, 0, 0}, []byte{})
	f.Add(uint8(2), []byte{0x02, 0xff, 0xff, 0xff, 0xff, 0x0f}, []byte{0x80})
	f.Fuzz(func(t *testing.T, which uint8, body, keyBody []byte) {
		id := env.ids[int(which)%len(env.ids)]
		frame := func(b []byte) []byte {
			return append([]byte{0, byte(id >> 24), byte(id >> 16), byte(id >> 8), byte(id)}, b...)
		}
		key := append([]byte{0, byte(env.ids[1] >> 24), byte(env.ids[1] >> 16), byte(env.ids[1] >> 8), byte(env.ids[1])}, keyBody...)
		d := env.decoder()
		rec := Record{Topic: "fuzz-avro", Partition: 1, Offset: 99, Key: key, Value: frame(body)}
		fuzzCheck(t, d, rec)
		fuzzCheck(t, d, rec) // cached plans, reused reader
		// Key columns learned from the (mutated) Avro key.
		d2 := env.decoder()
		d2.keyCols = nil
		fuzzCheck(t, d2, rec)
		if _, err := d2.DecodeKey(key); err != nil && strings.Contains(err.Error(), "internal error") {
			t.Fatal(err)
		}
	})
}

// FuzzDecodeFlattened decodes ExtractNewRecordState-style JSON values
// with the options that change how they are read.
func FuzzDecodeFlattened(f *testing.F) {
	dir := filepath.Join("..", "testdata", "debezium", "debezium-server-iceberg", "unwrap-with-schema.json")
	if b, err := os.ReadFile(dir); err == nil {
		f.Add(b, []byte(nil), "")
	}
	for _, s := range []string{
		`{"id":1,"v":"a","__op":"d","__lsn":200,"__source_sequence":"[\"100\",\"200\"]","__source_ts_ms":1700000000000,"__source_txId":42,"__deleted":"true"}`,
		`{"id":1,"v":"a","__op":"d","__source_file":"mysql-bin.000012","__source_pos":392,"__source_row":2,"__source_gtid":"x:1","__deleted":true}`,
		`{"id":1,"v":"a","__op":"u","__source_commit_lsn":"0000002b:00000588:0003","__source_change_lsn":"0000002b:00000580:0002","__source_event_serial_no":1}`,
		`{"id":1,"v":"a","__op":"c","__source_scn":"2993741","__source_commit_scn":"2993750","__source_rs_id":" 0x00000d.00012a4f.0010 ","__source_ssn":0}`,
		`{"schema":{"type":"struct","fields":[{"type":"int32","field":"id"},{"type":"string","optional":true,"field":"__op"},{"type":"int64","optional":true,"field":"__lsn"}]},"payload":{"id":1,"__op":"r","__lsn":3}}`,
		`{"id":1,"cdc_file":"binlog.000002","cdc_pos":10,"cdc_row":0}`,
	} {
		f.Add([]byte(s), []byte(`{"id":1}`), "__lsn=7")
	}
	f.Fuzz(func(t *testing.T, value, key []byte, header string) {
		var hdrs []Header
		if k, v, ok := strings.Cut(header, "="); ok {
			hdrs = []Header{{Key: k, Value: []byte(v)}}
		}
		rec := Record{Topic: "fuzz-flat", Partition: 2, Offset: 5, Key: key, Value: value, Headers: hdrs}
		for _, opts := range []DecoderOptions{
			{KeyColumns: []string{"id"}},
			{KeyColumns: []string{"id"}, Flattened: FlattenAlways, Connector: "postgresql"},
			{AddFieldsPrefix: "cdc_", Flattened: FlattenAlways},
			{KeyColumns: []string{"id"}, Columns: []cdc.Column{{Name: "id", Type: cdc.TypeInt}, {Name: "v", Type: cdc.ListType(cdc.DecimalType(5, 2))}}, UnavailablePlaceholder: "hex:00ff"},
		} {
			d := NewDecoder(opts)
			fuzzCheck(t, d, rec)
			fuzzCheck(t, d, rec)
		}
	})
}
