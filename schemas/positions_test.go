package schemas

import (
	"strconv"
	"strings"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// SQL Server and Oracle source blocks, shaped as the Debezium connector
// docs show them ("Change event values" → source).

const ssCreate = `{"before":null,"after":{"id":1005,"email":"john.doe@example.org"},"source":{"version":"2.7.0.Final","connector":"sqlserver","name":"server1","ts_ms":1559729468470,"snapshot":"false","db":"testDB","sequence":null,"schema":"dbo","table":"customers","change_lsn":"00000027:00000758:0003","commit_lsn":"00000027:00000758:0005","event_serial_no":1},"op":"c","ts_ms":1559729471739,"transaction":null}`

const oraCreate = `{"before":null,"after":{"ID":1004,"EMAIL":"annek@noanswer.org"},"source":{"version":"2.7.0.Final","connector":"oracle","name":"server1","ts_ms":1520085154000,"snapshot":"false","db":"ORCLPDB1","sequence":null,"schema":"DEBEZIUM","table":"CUSTOMERS","txId":"6.28.807","scn":"2122185","commit_scn":"2122190","rs_id":" 0x00000d.00012a4f.0010 ","ssn":3,"redo_thread":1,"user_name":"DEBEZIUM"},"op":"c","ts_ms":1532592105975,"transaction":{"id":"6.28.807","total_order":2,"data_collection_order":1}}`

func TestSQLServerPosition(t *testing.T) {
	got, err := decodeOne(t, idKey, ssCreate)
	if err != nil {
		t.Fatal(err)
	}
	commit, _ := cdc.ParseSQLServerLSN("00000027:00000758:0005")
	change, _ := cdc.ParseSQLServerLSN("00000027:00000758:0003")
	e := got.Event
	if e.Seq != cdc.SQLServerSeq(commit, change, 1) || e.SourceTs != 1559729468470000 || e.TxID != "" || e.Key != mustKey(t, cdc.Int(1005)) {
		t.Errorf("%+v", e)
	}
	if w := e.Seq.Words(); len(w) != 5 || w[0] != 0x27<<32|0x758 || w[1] != 5 || w[3] != 3 || w[4] != 1 {
		t.Errorf("words %x", w)
	}
	// A snapshot read: change_lsn and event_serial_no are null.
	snap := strings.NewReplacer(`"snapshot":"false"`, `"snapshot":"true"`, `"change_lsn":"00000027:00000758:0003"`, `"change_lsn":null`,
		`"event_serial_no":1`, `"event_serial_no":null`, `"op":"c"`, `"op":"r"`).Replace(ssCreate)
	got, err = decodeOne(t, idKey, snap)
	if err != nil || got.Event.Seq != cdc.SQLServerSeq(commit, cdc.SQLServerLSN{}, 0) || got.Event.Snapshot != cdc.SnapshotRow {
		t.Errorf("snapshot: %v %+v", err, got.Event)
	}
	for _, c := range []struct{ from, to, want string }{
		{`"commit_lsn":"00000027:00000758:0005",`, ``, "source.commit_lsn is missing"},
		{`"change_lsn":"00000027:00000758:0003"`, `"change_lsn":null`, "source.change_lsn is missing"},
		{`"commit_lsn":"00000027:00000758:0005"`, `"commit_lsn":"27:758:5"`, "source.commit_lsn: SQL Server LSN \"27:758:5\" is not of the form"},
		{`"commit_lsn":"00000027:00000758:0005"`, `"commit_lsn":12`, "source.commit_lsn: want an LSN string, got a number"},
		{`"event_serial_no":1`, `"event_serial_no":"1"`, "source.event_serial_no: want an integer"},
	} {
		_, err := decodeOne(t, idKey, strings.Replace(ssCreate, c.from, c.to, 1))
		if de := asDecodeError(t, err); !strings.Contains(de.Reason, c.want) {
			t.Errorf("%s: %q, want %q", c.to, de.Reason, c.want)
		}
	}
}

func TestOraclePosition(t *testing.T) {
	opts := DecoderOptions{KeyColumns: []string{"ID"}}
	got, err := decodeOne(t, opts, oraCreate)
	if err != nil {
		t.Fatal(err)
	}
	e := got.Event
	rs := cdc.OracleRSID{LogSeq: 0xd, BlockOffset: 0x12a4f<<16 | 0x10}
	if e.Seq != cdc.OracleSeq(2122190, 2122185, rs, 3, 2) || e.TxID != "6.28.807" || e.SourceTs != 1520085154000000 {
		t.Errorf("%+v", e)
	}
	// A snapshot read: scn only; commit_scn, rs_id, ssn absent.
	snap := strings.NewReplacer(`"commit_scn":"2122190",`, ``, `"rs_id":" 0x00000d.00012a4f.0010 ",`, ``, `"ssn":3,`, ``,
		`"snapshot":"false"`, `"snapshot":"last"`, `"op":"c"`, `"op":"r"`, `"transaction":{"id":"6.28.807","total_order":2,"data_collection_order":1}`, `"transaction":null`).Replace(oraCreate)
	got, err = decodeOne(t, opts, snap)
	if err != nil || got.Event.Seq != cdc.OracleSeq(2122185, 2122185, cdc.OracleRSID{}, 0, 0) || got.Event.Snapshot != cdc.SnapshotLast {
		t.Errorf("snapshot: %v %+v", err, got.Event)
	}
	for _, c := range []struct{ from, to, want string }{
		{`"scn":"2122185",`, ``, "source.scn is missing"},
		{`"scn":"2122185"`, `"scn":"-5"`, `source.scn: "-5" is not a non-negative 64-bit integer`},
		{`"scn":"2122185"`, `"scn":true`, "source.scn: want a decimal string"},
		{`"rs_id":" 0x00000d.00012a4f.0010 "`, `"rs_id":"zz"`, "source.rs_id: Oracle RS_ID"},
		{`"total_order":2`, `"total_order":-2`, "transaction.total_order: -2 is not a non-negative"},
	} {
		_, err := decodeOne(t, opts, strings.Replace(oraCreate, c.from, c.to, 1))
		if de := asDecodeError(t, err); !strings.Contains(de.Reason, c.want) {
			t.Errorf("%s: %q, want %q", c.to, de.Reason, c.want)
		}
	}
	// An SCN as a JSON number is accepted too.
	if got, err = decodeOne(t, opts, strings.Replace(oraCreate, `"scn":"2122185"`, `"scn":2122185`, 1)); err != nil || got.Event.Seq != e.Seq {
		t.Errorf("numeric scn: %v", err)
	}
}

// The XStream adapter sets source.lcr_position (hex) and no rs_id or ssn:
// the LCR position follows the SCN words (cdc.OracleLCRSeq), so two
// changes of one transaction at one SCN keep their order; a null
// lcr_position is the LogMiner layout.
func TestOracleXStreamPosition(t *testing.T) {
	opts := DecoderOptions{KeyColumns: []string{"ID"}}
	xs := func(lcr string) string {
		return strings.NewReplacer(`"rs_id":" 0x00000d.00012a4f.0010 ","ssn":3,`, `"lcr_position":`+lcr+`,`,
			`"transaction":{"id":"6.28.807","total_order":2,"data_collection_order":1}`, `"transaction":null`).Replace(oraCreate)
	}
	seqOf := func(lcr string) cdc.Seq {
		got, err := decodeOne(t, opts, xs(lcr))
		if err != nil {
			t.Fatalf("%s: %v", lcr, err)
		}
		return got.Event.Seq
	}
	raw := []byte{0, 0, 0, 0, 0, 0x20, 0x61, 0xce, 0, 0, 0, 0, 0, 0x20, 0x61, 0xc9, 1}
	want, err := cdc.OracleLCRSeq(2122190, 2122185, 0, raw)
	if err != nil {
		t.Fatal(err)
	}
	first, second := seqOf(`"00000000002061ce00000000002061c901"`), seqOf(`"00000000002061ce00000000002061c902"`)
	if first != want || !(first < second) {
		t.Errorf("got %s and %s, want %s below the second", first.Hex(), second.Hex(), want.Hex())
	}
	if got := seqOf(`null`); got != cdc.OracleSeq(2122190, 2122185, cdc.OracleRSID{}, 0, 0) {
		t.Errorf("null lcr_position: %s", got.Hex())
	}
	for _, c := range []struct{ lcr, want string }{
		{`"zz"`, `source.lcr_position "zz": encoding/hex`},
		{`7`, "source.lcr_position: want a hex string, got a number"},
		{`""`, "source.lcr_position \"\": Oracle LCR position of 0 bytes (want 1 to 64)"},
		{`"` + strings.Repeat("ab", 65) + `"`, "Oracle LCR position of 65 bytes (want 1 to 64)"},
	} {
		_, err := decodeOne(t, opts, xs(c.lcr))
		if de := asDecodeError(t, err); !strings.Contains(de.Reason, c.want) {
			t.Errorf("%s: %q, want %q", c.lcr, de.Reason, c.want)
		}
	}
}

// Primary-key change headers: the delete of the old key carries
// __debezium.newkey, the create of the new key __debezium.oldkey; both are
// exposed raw and decode to the keys the events carry.
func TestKeyChangeHeaders(t *testing.T) {
	keySchema := `{"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"}],"optional":false,"name":"pg.public.t.Key"},"payload":{"id":%d}}`
	key := func(id int) []byte { return []byte(strings.Replace(keySchema, "%d", strconv.Itoa(id), 1)) }
	d := NewDecoder(DecoderOptions{})
	del := strings.Replace(strings.Replace(pgUpdate, `"before":null,"after":{"id":1,"name":"a"}`, `"before":{"id":1,"name":"a"},"after":null`, 1), `"op":"u"`, `"op":"d"`, 1)
	got, err := d.Decode(Record{Key: key(1), Value: []byte(del), Headers: []Header{{Key: HeaderNewKey, Value: key(2)}}})
	if err != nil {
		t.Fatal(err)
	}
	if string(got.NewKey) != string(key(2)) || got.OldKey != nil {
		t.Errorf("delete headers: old %q new %q", got.OldKey, got.NewKey)
	}
	create := strings.Replace(strings.Replace(pgUpdate, `"id":1,`, `"id":2,`, 1), `"op":"u"`, `"op":"c"`, 1)
	got2, err := d.Decode(Record{Key: key(2), Value: []byte(create), Headers: []Header{{Key: "other", Value: []byte("x")}, {Key: HeaderOldKey, Value: key(1)}}})
	if err != nil {
		t.Fatal(err)
	}
	if string(got2.OldKey) != string(key(1)) || got2.NewKey != nil || len(got2.Headers) != 2 || got2.Headers[0].Key != "other" {
		t.Errorf("create headers: old %q new %q", got2.OldKey, got2.NewKey)
	}
	newKey, err := d.DecodeKey(got.NewKey)
	if err != nil || newKey != got2.Event.Key {
		t.Errorf("DecodeKey(newkey) = %x, %v; the create's key is %x", newKey, err, got2.Event.Key)
	}
	oldKey, err := d.DecodeKey(got2.OldKey)
	if err != nil || oldKey != got.Event.Key {
		t.Errorf("DecodeKey(oldkey) = %x, %v; the delete's key is %x", oldKey, err, got.Event.Key)
	}
	if _, err := d.DecodeKey([]byte(`{"nope":1}`)); err == nil {
		t.Error("a key without the key column")
	}
	if _, err := d.DecodeKey(nil); err == nil {
		t.Error("an empty key")
	}
	// Headers ride along on tombstones too.
	tomb, err := d.Decode(Record{Key: key(1), Headers: []Header{{Key: HeaderNewKey, Value: key(2)}}})
	if err != nil || tomb.Kind != KindTombstone || string(tomb.NewKey) != string(key(2)) {
		t.Errorf("tombstone: %v %+v", err, tomb)
	}
}
