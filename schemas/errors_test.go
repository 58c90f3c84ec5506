package schemas

import (
	"strings"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// A Debezium 2.x PostgreSQL update without the schema envelope.
const pgUpdate = `{"before":null,"after":{"id":1,"name":"a"},"source":{"version":"2.5.0.Final","connector":"postgresql","name":"pg","ts_ms":1700000000123,"snapshot":"false","db":"db","sequence":"[\"100\",\"200\"]","schema":"public","table":"t","txId":42,"lsn":200,"xmin":null},"op":"u","ts_ms":1700000000200,"transaction":null}`

// A Debezium MySQL create without the schema envelope.
const myCreate = `{"before":null,"after":{"id":1},"source":{"version":"1.9.5.Final","connector":"mysql","name":"m","ts_ms":1661328018000,"snapshot":"false","db":"inventory","sequence":null,"table":"t","server_id":1,"gtid":"3E11FA47-71CA-11E1-9E33-C80AA9429562:23","file":"mysql-bin.000012","pos":392,"row":2,"thread":12,"query":null},"op":"c","ts_ms":1661328018647,"transaction":null}`

func decodeOne(t *testing.T, opts DecoderOptions, value string) (Decoded, error) {
	t.Helper()
	return NewDecoder(opts).Decode(Record{Topic: "db.t", Partition: 1, Offset: 42, Value: []byte(value)})
}

var idKey = DecoderOptions{KeyColumns: []string{"id"}}

func TestPostgresPosition(t *testing.T) {
	got, err := decodeOne(t, idKey, pgUpdate)
	if err != nil {
		t.Fatal(err)
	}
	e := got.Event
	if e.Seq != cdc.PostgresSeq(200, 200) || e.TxID != "42" || e.SourceTs != 1700000000123000 || e.Snapshot != cdc.SnapshotNone {
		t.Errorf("seq %v tx %q ts %d snap %d", e.Seq, e.TxID, e.SourceTs, e.Snapshot)
	}
	// A lastCommitLsn above the change's lsn (its transaction began before
	// the previous one committed) is the first word.
	got, err = decodeOne(t, idKey, strings.Replace(pgUpdate, `"sequence":"[\"100\",\"200\"]",`, `"sequence":"[\"300\",\"200\"]",`, 1))
	if err != nil || got.Event.Seq != cdc.PostgresSeq(300, 200) {
		t.Errorf("interleaved: %v %v", err, got.Event)
	}
	// source.ts_ms 0 or missing (unknown): the envelope's ts_ms.
	for _, src := range []string{`"ts_ms":0,`, ``} {
		got, err = decodeOne(t, idKey, strings.Replace(pgUpdate, `"ts_ms":1700000000123,`, src, 1))
		if err != nil || got.Event.SourceTs != 1700000000200000 {
			t.Errorf("source ts %q: %v %v", src, err, got.Event)
		}
	}
	// ts_us wins over ts_ms.
	got, err = decodeOne(t, idKey, strings.Replace(pgUpdate, `"ts_ms":1700000000123,`, `"ts_ms":1700000000123,"ts_us":1700000000123456,`, 1))
	if err != nil || got.Event.SourceTs != 1700000000123456 {
		t.Errorf("ts_us: %v %v", err, got.Event)
	}
	// A null or absent sequence, or a null first element: a streamed change
	// takes its lsn as the commit word; a source snapshot read takes 0.
	for _, seq := range []string{`"sequence":null,`, ``, `"sequence":"[null,\"200\"]",`, `"sequence":" [ null , 200 ] ",`} {
		got, err = decodeOne(t, idKey, strings.Replace(pgUpdate, `"sequence":"[\"100\",\"200\"]",`, seq, 1))
		if err != nil || got.Event.Seq != cdc.PostgresSeq(200, 200) {
			t.Errorf("sequence %s: %v %v", seq, err, got.Event)
		}
		read := strings.Replace(strings.Replace(pgUpdate, `"op":"u"`, `"op":"r"`, 1), `"snapshot":"false"`, `"snapshot":"true"`, 1)
		got, err = decodeOne(t, idKey, strings.Replace(read, `"sequence":"[\"100\",\"200\"]",`, seq, 1))
		if err != nil || got.Event.Seq != cdc.PostgresSeq(0, 200) || got.Event.Snapshot != cdc.SnapshotRow {
			t.Errorf("read, sequence %s: %v %v", seq, err, got.Event)
		}
	}
	// source.lsn null (Debezium 3.x incremental source snapshot reads): the
	// lsn is the sequence's second element.
	incr := strings.Replace(strings.Replace(pgUpdate, `"op":"u"`, `"op":"r"`, 1), `"snapshot":"false"`, `"snapshot":"incremental"`, 1)
	got, err = decodeOne(t, idKey, strings.Replace(incr, `"lsn":200,`, `"lsn":null,`, 1))
	if err != nil || got.Event.Seq != cdc.PostgresSeq(200, 200) || got.Event.Snapshot != cdc.SnapshotIncremental {
		t.Errorf("incremental read without lsn: %v %v", err, got.Event)
	}
	got, err = decodeOne(t, idKey, strings.Replace(pgUpdate, `"lsn":200,`, ``, 1))
	if err != nil || got.Event.Seq != cdc.PostgresSeq(200, 200) {
		t.Errorf("change without lsn: %v %v", err, got.Event)
	}
}

func TestMySQLPosition(t *testing.T) {
	got, err := decodeOne(t, idKey, myCreate)
	if err != nil {
		t.Fatal(err)
	}
	e := got.Event
	if e.Seq != cdc.MySQLSeq(12, 392, 2) || e.TxID != "3E11FA47-71CA-11E1-9E33-C80AA9429562:23" || e.SourceTs != 1661328018000000 {
		t.Errorf("seq %v tx %q ts %d", e.Seq, e.TxID, e.SourceTs)
	}
	got, err = decodeOne(t, idKey, strings.Replace(myCreate, `"connector":"mysql"`, `"connector":"mariadb"`, 1))
	if err != nil || got.Event.Seq != cdc.MySQLSeq(12, 392, 2) {
		t.Errorf("mariadb: %v", err)
	}
}

func TestSnapshotMarks(t *testing.T) {
	for in, want := range map[string]cdc.SnapshotMark{
		`"true"`: cdc.SnapshotRow, `"first"`: cdc.SnapshotRow, `"first_in_data_collection"`: cdc.SnapshotRow,
		`"last_in_data_collection"`: cdc.SnapshotLast, `"last"`: cdc.SnapshotLast, `"incremental"`: cdc.SnapshotIncremental,
		`"false"`: cdc.SnapshotNone, `null`: cdc.SnapshotNone, `true`: cdc.SnapshotRow, `false`: cdc.SnapshotNone,
	} {
		got, err := decodeOne(t, idKey, strings.Replace(pgUpdate, `"snapshot":"false"`, `"snapshot":`+in, 1))
		if err != nil || got.Event.Snapshot != want {
			t.Errorf("snapshot %s: %v %+v, want %d", in, err, got.Event, want)
		}
	}
}

func TestTombstones(t *testing.T) {
	d := NewDecoder(idKey)
	for _, v := range [][]byte{nil, {}, []byte("null"), []byte(" null \n"), []byte(`{"schema":{"type":"struct","fields":[]},"payload":null}`), []byte(`{"schema":null,"payload":null}`)} {
		got, err := d.Decode(Record{Value: v})
		if err != nil || got.Kind != KindTombstone || got.Event != nil || got.RawOp != "" {
			t.Errorf("%q: %+v %v", v, got, err)
		}
	}
}

func TestTruncate(t *testing.T) {
	v := `{"before":null,"after":null,"source":{"version":"2.5.0.Final","connector":"postgresql","name":"pg","ts_ms":1700000000123,"snapshot":"false","db":"db","sequence":"[\"100\",\"300\"]","schema":"public","table":"t","txId":43,"lsn":300,"xmin":null},"op":"t","ts_ms":1700000000200,"transaction":null}`
	got, err := decodeOne(t, DecoderOptions{}, v) // no key needed
	if err != nil {
		t.Fatal(err)
	}
	e := got.Event
	if got.Kind != KindTruncate || got.RawOp != "t" || e.Op != cdc.OpTruncate || e.Key != "" || e.Before != nil || e.After != nil {
		t.Errorf("%+v %+v", got, e)
	}
	if e.Seq != cdc.PostgresSeq(300, 300) || e.TxID != "43" || e.Origin.Offset != 42 {
		t.Errorf("seq %v tx %q origin %+v", e.Seq, e.TxID, e.Origin)
	}
}

func TestDeleteKeyOnlyBefore(t *testing.T) {
	// PostgreSQL default replica identity: the before image has the key
	// and NULLs.
	v := strings.Replace(strings.Replace(pgUpdate, `"before":null,"after":{"id":1,"name":"a"}`, `"before":{"id":7,"name":null},"after":null`, 1), `"op":"u"`, `"op":"d"`, 1)
	got, err := decodeOne(t, idKey, v)
	if err != nil {
		t.Fatal(err)
	}
	if got.Event.Key != mustKey(t, cdc.Int(7)) || got.Event.Before.HasValuesBeyond([]string{"id"}) {
		t.Errorf("%+v", got.Event)
	}
}

func TestToastPlaceholder(t *testing.T) {
	v := strings.Replace(pgUpdate, `"name":"a"`, `"name":"__debezium_unavailable_value","tags":["__debezium_unavailable_value"]`, 1)
	got, err := decodeOne(t, idKey, v)
	if err != nil {
		t.Fatal(err)
	}
	wantValue(t, "name", get(t, got.Event.After, "name"), cdc.Unavailable())
	wantValue(t, "tags", get(t, got.Event.After, "tags"), cdc.Unavailable())
}

func TestStringsAndInference(t *testing.T) {
	v := strings.Replace(pgUpdate, `"name":"a"`, `"name":"a\"b\u00e9\n","big":18446744073709551616,"neg":-9223372036854775808,"f":-1.5e3,"ok":true,"obj":{"k":[1,"x\u0001",null]},"nil":null`, 1)
	got, err := decodeOne(t, idKey, v)
	if err != nil {
		t.Fatal(err)
	}
	a := got.Event.After
	wantValue(t, "name", get(t, a, "name"), cdc.String("a\"bé\n"))
	wantValue(t, "big", get(t, a, "big"), cdc.BigDecimal("18446744073709551616", 0))
	wantValue(t, "neg", get(t, a, "neg"), cdc.Int(-9223372036854775808))
	wantValue(t, "f", get(t, a, "f"), cdc.Float(-1500))
	wantValue(t, "ok", get(t, a, "ok"), cdc.Bool(true))
	wantValue(t, "obj", get(t, a, "obj"), cdc.String(`{"k":[1,"x\u0001",null]}`))
	wantValue(t, "nil", get(t, a, "nil"), cdc.Null())
}

func TestDecodeErrors(t *testing.T) {
	cases := []struct {
		name, value, reason string
		opts                DecoderOptions
	}{
		{"malformed JSON", `{"before":null,`, "malformed JSON", idKey},
		{"trailing garbage", pgUpdate + ` x`, "malformed JSON", idKey},
		{"not an object", `[1,2]`, "value is an array", idKey},
		{"unknown op", strings.Replace(pgUpdate, `"op":"u"`, `"op":"x"`, 1), `unknown op "x"`, idKey},
		{"op is a number", strings.Replace(pgUpdate, `"op":"u"`, `"op":5`, 1), "op: want a string, got a number", idKey},
		{"no op", strings.Replace(pgUpdate, `"op":"u",`, ``, 1), `no "op" field`, idKey},
		{"null key", strings.Replace(pgUpdate, `"after":{"id":1,`, `"after":{"id":null,`, 1), `key column "id" is NULL in the after image`, idKey},
		{"missing lsn", strings.Replace(strings.Replace(pgUpdate, `"lsn":200,`, ``, 1), `"sequence":"[\"100\",\"200\"]",`, ``, 1), "source.lsn is missing", idKey},
		{"null lsn", strings.Replace(strings.Replace(pgUpdate, `"lsn":200,`, `"lsn":null,`, 1), `"sequence":"[\"100\",\"200\"]",`, `"sequence":"[\"100\",null]",`, 1), "source.lsn is missing", idKey},
		{"lsn is text", strings.Replace(pgUpdate, `"lsn":200,`, `"lsn":"abc",`, 1), "source.lsn: want an integer, got a string", idKey},
		{"lsn negative", strings.Replace(pgUpdate, `"lsn":200,`, `"lsn":-1,`, 1), "source.lsn: -1 is not a non-negative", idKey},
		{"lsn fraction", strings.Replace(pgUpdate, `"lsn":200,`, `"lsn":2.5,`, 1), "source.lsn: 2.5 is not", idKey},
		{"lsn too big", strings.Replace(pgUpdate, `"lsn":200,`, `"lsn":99999999999999999999,`, 1), "source.lsn", idKey},
		{"bad sequence", strings.Replace(pgUpdate, `"sequence":"[\"100\",\"200\"]"`, `"sequence":"[\"100\""`, 1), "source.sequence", idKey},
		{"sequence not a string", strings.Replace(pgUpdate, `"sequence":"[\"100\",\"200\"]"`, `"sequence":["100","200"]`, 1), "source.sequence: want a JSON-encoded string", idKey},
		{"sequence one element", strings.Replace(pgUpdate, `"sequence":"[\"100\",\"200\"]"`, `"sequence":"[\"100\"]"`, 1), "want two elements", idKey},
		{"after is a string", strings.Replace(pgUpdate, `"after":{"id":1,"name":"a"}`, `"after":"x"`, 1), "after: want an object or null, got a string", idKey},
		{"update without after", strings.Replace(pgUpdate, `"after":{"id":1,"name":"a"}`, `"after":null`, 1), "op u without an after image", idKey},
		{"delete with after", strings.Replace(pgUpdate, `"op":"u"`, `"op":"d"`, 1), "op d with a non-null after image", idKey},
		{"no source", strings.Replace(pgUpdate, `"source":`, `"src":`, 1), "no source block", idKey},
		{"source not object", strings.Replace(pgUpdate, `"source":{`, `"source":7,"x":{`, 1), "source: want an object", idKey},
		{"unknown connector", strings.Replace(pgUpdate, `"connector":"postgresql"`, `"connector":"db2"`, 1), `source.connector "db2" is not supported`, idKey},
		{"no connector", strings.Replace(pgUpdate, `"connector":"postgresql",`, ``, 1), "source.connector is missing", idKey},
		{"no ts", strings.Replace(strings.Replace(pgUpdate, `"ts_ms":1700000000123,`, ``, 1), `"ts_ms":1700000000200,`, ``, 1), "source.ts_ms is missing", idKey},
		{"unknown snapshot", strings.Replace(pgUpdate, `"snapshot":"false"`, `"snapshot":"maybe"`, 1), `source.snapshot "maybe"`, idKey},
		{"txId text", strings.Replace(pgUpdate, `"txId":42`, `"txId":"42"`, 1), "source.txId: want an integer", idKey},
		{"mysql file without index", strings.Replace(myCreate, `"mysql-bin.000012"`, `"mysql-bin"`, 1), "has no numeric suffix", idKey},
		{"mysql no pos", strings.Replace(myCreate, `"pos":392,`, ``, 1), "source.pos is missing", idKey},
		{"mysql no row", strings.Replace(myCreate, `"row":2,`, ``, 1), "source.row is missing", idKey},
		{"mysql no file", strings.Replace(myCreate, `"file":"mysql-bin.000012",`, ``, 1), "source.file is missing", idKey},
		{"missing key column", pgUpdate, `key column "nope" is missing from the after image`, DecoderOptions{KeyColumns: []string{"nope"}}},
		{"no key columns, no key", pgUpdate, "no key columns configured and the record has no Kafka key", DecoderOptions{}},
		{"schema change", `{"source":{"connector":"mysql"},"ddl":"CREATE TABLE t (id INT)","tableChanges":[]}`, "schema change event on a data topic", idKey},
		{"invalid UTF-8", strings.Replace(pgUpdate, `"name":"a"`, "\"name\":\"\xff\"", 1), "after.name: string is not valid UTF-8", idKey},
		{"duplicate field", strings.Replace(pgUpdate, `"name":"a"`, `"id":2`, 1), `duplicate field "id"`, idKey},
		{"bad number", strings.Replace(pgUpdate, `"name":"a"`, `"n":1-2`, 1), "after.n", idKey},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := decodeOne(t, c.opts, c.value)
			if err == nil {
				t.Fatalf("no error, got %+v", got)
			}
			de := asDecodeError(t, err)
			if de.Topic != "db.t" || de.Partition != 1 || de.Offset != 42 {
				t.Errorf("coordinates %+v", de)
			}
			if !strings.Contains(de.Reason, c.reason) {
				t.Errorf("reason %q does not mention %q", de.Reason, c.reason)
			}
			if !strings.Contains(err.Error(), "db.t[1]@42") {
				t.Errorf("Error() = %q", err.Error())
			}
		})
	}
}

// A decoder keeps working after errors, and learned key columns persist.
func TestDecoderRecoversAfterErrors(t *testing.T) {
	d := NewDecoder(DecoderOptions{})
	if _, err := d.Decode(Record{Value: []byte(`{"op":`)}); err == nil {
		t.Fatal("want an error")
	}
	got, err := d.Decode(Record{Key: []byte(`{"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"}],"optional":false,"name":"k"},"payload":{"id":1}}`), Value: []byte(pgUpdate)})
	if err != nil || got.Event.Key != mustKey(t, cdc.Int(1)) {
		t.Fatalf("%v %+v", err, got)
	}
	// Later records need no key.
	got, err = d.Decode(Record{Value: []byte(strings.Replace(pgUpdate, `"id":1`, `"id":2`, 1))})
	if err != nil || got.Event.Key != mustKey(t, cdc.Int(2)) {
		t.Fatalf("%v %+v", err, got)
	}
	wantValue(t, "name", get(t, got.Event.After, "name"), cdc.String("a"))
}

// DropUpsertBefore leaves the before image of creates, updates and reads
// undecoded (nil) and keeps a delete's; without it every image is decoded.
func TestDropUpsertBefore(t *testing.T) {
	rec := func(op, before, after string) string {
		return `{"before":` + before + `,"after":` + after + `,"source":{"version":"2.7.0.Final","connector":"postgresql","name":"pg","ts_ms":1,"snapshot":"false","db":"db","sequence":"[null, \"10\"]","schema":"public","table":"orders","txId":3,"lsn":10},"op":"` + op + `","ts_ms":2}`
	}
	full := `{"id":1,"status":"new"}`
	for _, tc := range []struct {
		op, before, after string
		drop, wantBefore  bool
	}{
		{"u", full, `{"id":1,"status":"paid"}`, true, false},
		{"u", full, `{"id":1,"status":"paid"}`, false, true},
		{"c", "null", full, true, false},
		{"r", "null", full, true, false},
		{"d", full, "null", true, true},
		{"d", `{"id":1}`, "null", true, true},
	} {
		dec, err := decodeOne(t, DecoderOptions{KeyColumns: []string{"id"}, DropUpsertBefore: tc.drop}, rec(tc.op, tc.before, tc.after))
		if err != nil {
			t.Fatalf("%s drop=%v: %v", tc.op, tc.drop, err)
		}
		if got := dec.Event.Before != nil; got != tc.wantBefore {
			t.Errorf("%s drop=%v: before image decoded %v, want %v", tc.op, tc.drop, got, tc.wantBefore)
		}
		if string(dec.Event.Key) == "" || (tc.op != "d" && dec.Event.After == nil) {
			t.Errorf("%s drop=%v: key %q after %v", tc.op, tc.drop, dec.Event.Key, dec.Event.After)
		}
	}
	// the image is still checked: a before image that is not an object is an error
	if _, err := decodeOne(t, DecoderOptions{KeyColumns: []string{"id"}, DropUpsertBefore: true}, rec("u", `[1]`, full)); err == nil {
		t.Error("an update whose before image is an array decoded")
	}
}
