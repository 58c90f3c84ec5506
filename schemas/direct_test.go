package schemas

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/valyala/fastjson"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// The direct path (direct.go) against the general one: every record is
// decoded by two decoders with the same options, in the same order, one
// with the direct path and one without (noDirect), and the results must
// be identical: the same Decoded, deeply, and the same error.

// diffPair is a decoder with the direct path and its twin without it.
type diffPair struct {
	direct, general *Decoder
	hits, records   int
}

func newDiffPair(opts DecoderOptions) *diffPair {
	p := &diffPair{direct: NewDecoder(opts), general: NewDecoder(opts)}
	p.general.noDirect = true
	return p
}

// check decodes rec with both decoders and fails the test on any
// difference.
func (p *diffPair) check(t testing.TB, what string, rec Record) (Decoded, error) {
	t.Helper()
	before := p.direct.directHits
	got, gotErr := p.direct.Decode(rec)
	want, wantErr := p.general.Decode(rec)
	p.records++
	if p.direct.directHits > before {
		p.hits++
	}
	if (gotErr == nil) != (wantErr == nil) || gotErr != nil && (gotErr.Error() != wantErr.Error() || !reflect.DeepEqual(gotErr, wantErr)) {
		t.Fatalf("%s: value %q key %q:\ndirect error  %v\ngeneral error %v", what, rec.Value, rec.Key, gotErr, wantErr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: value %q key %q:\ndirect  %s\ngeneral %s", what, rec.Value, rec.Key, describe(got), describe(want))
	}
	return want, wantErr
}

func describe(d Decoded) string {
	s, _ := json.Marshal(d)
	return string(s)
}

// diffOptions are the decoder options the differential tests use: the
// ones that change how images and positions are read.
func diffOptions(t testing.TB) []DecoderOptions {
	def, err := LoadTableDefinition(filepath.Join("examples", "orders.table.json"))
	if err != nil {
		t.Fatal(err)
	}
	orders := def.Options()
	return []DecoderOptions{
		{KeyColumns: []string{"id"}},
		{}, // key columns from the Kafka key
		{KeyColumns: []string{"id"}, DropUpsertBefore: true},
		{KeyColumns: []string{"id"}, Columns: []cdc.Column{{Name: "id", Type: cdc.TypeInt}, {Name: "weight", Type: cdc.DecimalType(10, 3)}}},
		{KeyColumns: []string{"id"}, TableColumns: []cdc.Column{{Name: "weight", Type: cdc.DecimalType(10, 3)}, {Name: "name", Type: cdc.TypeUUID}, {Name: "order_date", Type: cdc.TypeDate}}},
		{KeyColumns: []string{"id"}, UnavailablePlaceholder: "hex:00ff", BitsLeastSignificantFirst: true},
		{KeyColumns: []string{"order_number"}, Flattened: FlattenNever},
		{KeyColumns: []string{"order_id"}},
		orders,
		{KeyColumns: []string{"id"}, Flattened: FlattenAlways, Connector: "postgresql"},
		{AddFieldsPrefix: "cdc_"},
	}
}

// captureRecords returns every record of the real captures (the repo's
// testdata/debezium and, when present, the team's shared copy
// ../shared/fixtures/debezium): values split as SplitValues does and as
// KEY^VALUE lines, the inner events of wrapper objects (flink-cdc), and
// the key files as keys.
func captureRecords(t testing.TB) (values, keys [][]byte) {
	dirs := []string{filepath.Join("..", "testdata", "debezium"), filepath.Join("..", "..", "shared", "fixtures", "debezium")}
	keys = [][]byte{nil, []byte(`{"id":1}`), []byte(`****`)}
	for _, dir := range dirs {
		files, _ := filepath.Glob(filepath.Join(dir, "*", "*"))
		if len(files) == 0 {
			if dir == dirs[0] {
				t.Fatalf("no captures under %s", dir)
			}
			continue
		}
		for _, file := range files {
			if strings.HasSuffix(file, ".md") {
				continue
			}
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(filepath.Base(file), "-key-") {
				keys = append(keys, data)
			}
			vals, _ := SplitValues(data)
			for _, v := range vals {
				values = append(values, v)
				var p fastjson.Parser
				if o, err := p.ParseBytes(v); err == nil && o.Type() == fastjson.TypeObject && o.Get("op") == nil && o.Get("payload") == nil {
					obj, _ := o.Object()
					obj.Visit(func(_ []byte, inner *fastjson.Value) {
						if inner.Type() == fastjson.TypeObject {
							values = append(values, inner.MarshalTo(nil))
						}
					})
				}
			}
			for _, line := range bytes.Split(data, []byte("\n")) {
				if k, v, ok := bytes.Cut(line, []byte("^")); ok {
					values = append(values, v)
					keys = append(keys, k)
				}
			}
		}
	}
	return values, keys
}

// seedRecords are the records of the package's own tests and fuzz seeds.
func seedRecords() [][]byte {
	ss := []string{
		pgUpdate, myCreate, ssCreate, oraCreate, benchPGUpdate, benchEnvelope(),
		envelopeRecord(allTypeFields, "null", allTypeAfter, "c"),
		strings.Replace(pgUpdate, `"op":"u"`, `"op":"d"`, 1),
		`{"schema":null,"payload":{"op":"t","source":{"connector":"postgresql","lsn":1,"ts_ms":1}}}`,
		envelopeRecord(moreTypeFields, "null", `{"id":1,"zt":"23:30:00.25-01:00","vsd":{"scale":3,"value":"/gw="},"ints":[1,null],"decs":["AJY="],"geog":{"wkb":"AQ==","srid":1}}`, "c"),
		`{"id":1,"v":"a","__op":"d","__source_commit_lsn":"0000002b:00000588:0003","__source_change_lsn":"0000002b:00000580:0002","__source_event_serial_no":1,"__deleted":"true"}`,
		`{"id":1,"v":"a","__op":"d","__lsn":200,"__source_sequence":"[\"100\",\"200\"]","__source_ts_ms":1700000000000,"__source_txId":42,"__deleted":"true"}`,
		pgTextKey(`"g\ud800"`), pgTextKey(`"g\\ud800"`), pgTextKey(`"g\ud83d\ude00"`), pgTextKey(`"g\u00e9\n\"\/"`),
		pgTextKey(`"g\ud800\u0041"`), pgTextKey(`"g\x"`), pgTextKey(`"\u0000"`), pgTextKey(`"__debezium_unavailable_value"`),
		strings.Replace(pgUpdate, `"op":"u"`, `"op":"u","op":"c"`, 1),
		strings.Replace(pgUpdate, `"after":{"id":1,"name":"a"}`, `"after":{"name":"a","id":1}`, 1),
		strings.Replace(pgUpdate, `"after":{"id":1,"name":"a"}`, `"after":{"id":1,"name":"a","id":2}`, 1),
		strings.Replace(pgUpdate, `"after":{"id":1,"name":"a"}`, `"after":{"id":1.5e3,"name":[1,{"a":"\u00e9"}]}`, 1),
		strings.Replace(pgUpdate, `"after":{"id":1,"name":"a"}`, `"after":{"id":18446744073709551616,"name":-0.0}`, 1),
		strings.Replace(pgUpdate, `"source":{`, `"source":{"lsn":"x",`, 1),
		strings.Replace(pgUpdate, `"transaction":null`, `"transaction":{"id":"1","total_order":3,"total_order":4,"data_collection_order":1}`, 1),
		strings.Replace(pgUpdate, `"transaction":null`, `"transaction":"x","status":"END","id":1`, 1),
		strings.Replace(pgUpdate, `"name":"a"`, "\"name\":\"a\x01\"", 1),
		strings.Replace(pgUpdate, `"name":"a"`, "\"name\":\"a\xff\"", 1),
		strings.Replace(pgUpdate, `"name":"a"`, `"n\u0061me":"a"`, 1),
		`{"schema":{"type":"struct","fields":[{"type":"int32","field":"id"}]},"payload":` + pgUpdate + `}`,
		`{"payload":` + pgUpdate + `,"schema":null}`,
		`{"schema":null,"payload":` + pgUpdate + `,"x":1}`,
		` {"schema" : null , "payload" : ` + pgUpdate + " } \n",
		pgUpdate + " x",
		strings.Repeat("[", 40) + strings.Repeat("]", 40),
		strings.Replace(pgUpdate, `"ts_ms":1700000000200`, `"ts_ms":`+strings.Repeat("[", 40)+strings.Repeat("]", 40), 1),
	}
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

// variants are deterministic mutations of a record: each op, without its
// before image, pretty-printed, and cut short.
func variants(v []byte) [][]byte {
	out := [][]byte{v}
	for _, op := range []string{"c", "u", "d", "r", "t", "x"} {
		for _, from := range []string{`"op":"c"`, `"op":"u"`, `"op":"d"`, `"op":"r"`} {
			if bytes.Contains(v, []byte(from)) {
				out = append(out, bytes.Replace(v, []byte(from), []byte(`"op":"`+op+`"`), 1))
			}
		}
	}
	var ind bytes.Buffer
	if json.Indent(&ind, v, "", "  ") == nil {
		out = append(out, ind.Bytes())
	}
	if i := bytes.Index(v, []byte(`"before":{`)); i >= 0 {
		if e, err := skipValue(v, i+len(`"before":`), 0); err == nil {
			out = append(out, append(append(append([]byte(nil), v[:i]...), `"before":null`...), v[e:]...))
		}
	}
	if len(v) > 10 {
		out = append(out, v[:len(v)/2], v[:len(v)-1])
	}
	return out
}

// TestDirectMatchesGeneral decodes every capture record, the package's
// seed records and their variants through both paths.
func TestDirectMatchesGeneral(t *testing.T) {
	values, keys := captureRecords(t)
	values = append(values, seedRecords()...)
	for oi, opts := range diffOptions(t) {
		p := newDiffPair(opts)
		for vi, v := range values {
			for wi, w := range variants(v) {
				for _, key := range [][]byte{nil, keys[(vi+wi)%len(keys)]} {
					rec := Record{Topic: "t", Partition: 1, Offset: int64(vi), Key: key, Value: w, Timestamp: 1700000000000000}
					p.check(t, "options "+itoa(oi), rec)
					p.check(t, "options "+itoa(oi)+" again", rec) // cached schema and layout
				}
			}
		}
		t.Logf("options %d: %d records, %d by the direct path", oi, p.records, p.hits)
		if oi == 0 && p.hits == 0 {
			t.Error("the direct path decoded none")
		}
	}
}

// TestDirectCaptures checks that every capture record that decodes to a
// change event (keyed by id or order_number) takes the direct path (the
// point of it), flattened records aside, and that its result is the
// general path's.
func TestDirectCaptures(t *testing.T) {
	values, _ := captureRecords(t)
	changes, hits := 0, 0
	for _, key := range []string{"id", "order_number"} {
		p := newDiffPair(DecoderOptions{KeyColumns: []string{key}})
		for i, v := range values {
			before := p.hits
			out, err := p.check(t, "capture", Record{Offset: int64(i), Value: v})
			flat := bytes.Contains(v, []byte(`"__op"`)) // ExtractNewRecordState output: the general path's
			if err == nil && out.Kind == KindChange && !flat {
				changes++
				if p.hits == before {
					t.Errorf("capture record %d did not take the direct path: %.300s", i, v)
				}
			}
		}
		hits += p.hits
	}
	t.Logf("%d capture records, %d decode to change events, %d by the direct path", len(values), changes, hits)
}

// FuzzDirectMatchesGeneral is the differential test on mutated inputs.
func FuzzDirectMatchesGeneral(f *testing.F) {
	values, _ := captureRecords(f)
	for _, v := range append(values, seedRecords()...) {
		f.Add(v, []byte(`{"id":1}`), uint8(0))
	}
	opts := diffOptions(f)
	seed := []byte(envelopeRecord(allTypeFields, "null", allTypeAfter, "c"))
	f.Fuzz(func(t *testing.T, value, key []byte, o uint8) {
		p := newDiffPair(opts[int(o)%len(opts)])
		rec := Record{Topic: "fuzz", Partition: 3, Offset: 77, Key: key, Value: value}
		p.check(t, "first", rec)
		p.check(t, "again", rec)
		p.check(t, "seed", Record{Value: seed, Key: key})
		p.check(t, "after the seed", rec)
	})
}

// TestPlainWord checks the eight-byte test against strPlain.
func TestPlainWord(t *testing.T) {
	var b [8]byte
	for pos := range 8 {
		for c := range 256 {
			for i := range b {
				b[i] = 'a'
			}
			b[pos] = byte(c)
			w := uint64(0)
			for i := 7; i >= 0; i-- {
				w = w<<8 | uint64(b[i])
			}
			if got := plainWord(w); got != strPlain[c] {
				t.Fatalf("byte %#x at %d: plainWord %v, strPlain %v", c, pos, got, strPlain[c])
			}
		}
	}
	// every pair of bytes among the interesting ones
	special := []byte{0, 0x1f, 0x20, '"', '\\', 0x7f, 0x80, 0xff, '!', '#', '[', ']'}
	for _, x := range special {
		for _, y := range special {
			for i := range b {
				b[i] = ' '
			}
			b[2], b[5] = x, y
			w := uint64(0)
			for i := 7; i >= 0; i-- {
				w = w<<8 | uint64(b[i])
			}
			if got := plainWord(w); got != (strPlain[x] && strPlain[y]) {
				t.Fatalf("bytes %#x %#x: plainWord %v", x, y, got)
			}
		}
	}
}
