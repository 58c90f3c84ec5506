package schemas

import (
	"strconv"
	"strings"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// pgTextKey is a PostgreSQL create of a table keyed by the text column id.
func pgTextKey(idJSON string) string {
	return strings.Replace(strings.Replace(pgUpdate, `"after":{"id":1,"name":"a"}`, `"after":{"id":`+idJSON+`,"name":"a"}`, 1), `"op":"u"`, `"op":"c"`, 1)
}

// The issue 34 item 4 reproduction: a key holding the invalid escape
// \ud800 (a lone surrogate) decoded to the six characters "D800", the
// key of a different source row that really holds them. Now the first
// record is a DecodeError naming the escape (the pipeline quarantines it)
// and the second keeps its own text.
func TestLoneSurrogateKeyDoesNotCollide(t *testing.T) {
	_, err := decodeOne(t, idKey, pgTextKey(`"g\ud800"`))
	de := asDecodeError(t, err)
	want := `malformed JSON: offset 31: a \u escape of U+D800, a lone UTF-16 surrogate, not a character: ` +
		`the source text is not Unicode text (a Java string the JSON converter wrote as it was) ` +
		`and has no exact UTF-8 form for an Iceberg string`
	if de.Reason != want || de.Topic != "db.t" || de.Partition != 1 || de.Offset != 42 {
		t.Errorf("lone surrogate key: %+v\nwant reason %s", de, want)
	}
	got, err := decodeOne(t, idKey, pgTextKey(`"g\\ud800"`))
	if err != nil {
		t.Fatal(err)
	}
	wantValue(t, "literal text key", get(t, got.Event.After, "id"), cdc.String(`g\ud800`))
	if got.Event.Key != mustKey(t, cdc.String(`g\ud800`)) {
		t.Errorf("literal text key %q", got.Event.Key)
	}
}

// Every escape that fastjson decodes best-effort is refused with its
// offset; a surrogate pair decodes to its character, the same key as the
// character sent as UTF-8.
func TestStringEscapes(t *testing.T) {
	lone := func(off int, esc string) string {
		return "malformed JSON: offset " + itoa(off) + `: a \u escape of U+` + esc + `, a lone UTF-16 surrogate, not a character: ` +
			`the source text is not Unicode text (a Java string the JSON converter wrote as it was) ` +
			`and has no exact UTF-8 form for an Iceberg string`
	}
	for _, c := range []struct{ id, reason string }{
		{`"g\ud800A"`, lone(31, "D800")},
		{`"g\ud800\u0041"`, lone(31, "D800")}, // fastjson: U+FFFD, the A lost
		{`"g\uDBFF\uDBFF"`, lone(31, "DBFF")},
		{`"g\udc00"`, lone(31, "DC00")},
		{`"g\udc00\ud800"`, lone(31, "DC00")},
		{`"g\ud800"`, lone(31, "D800")},
		{`"\ud800"`, lone(30, "D800")},
		{`"g\x"`, `malformed JSON: offset 31: unknown escape (a backslash before another character than "\/bfnrtu)`},
		{`"g\u12"`, `malformed JSON: offset 31: invalid \u escape`},
		{`"g\u12G4"`, `malformed JSON: offset 31: invalid \u escape`},
	} {
		_, err := decodeOne(t, idKey, pgTextKey(c.id))
		if de := asDecodeError(t, err); de.Reason != c.reason {
			t.Errorf("%s: %q\nwant %q", c.id, de.Reason, c.reason)
		}
	}
	for _, id := range []string{`"g\ud83d\ude42"`, `"g\uD83D\uDE42"`, `"g🙂"`} {
		got, err := decodeOne(t, idKey, pgTextKey(id))
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		if got.Event.Key != mustKey(t, cdc.String("g🙂")) {
			t.Errorf("%s: key %q", id, got.Event.Key)
		}
	}
	// The escape may sit anywhere in the record: a column name, a
	// non-key column, the schema-less image of DecodeImage, the Kafka key
	// a delete without a before image is keyed by.
	_, err := decodeOne(t, idKey, strings.Replace(pgTextKey(`"g"`), `"name":"a"`, `"name\udfff":"a"`, 1))
	if de := asDecodeError(t, err); de.Reason != lone(38, "DFFF") {
		t.Errorf("column name: %q", de.Reason)
	}
	if _, err := DecodeImage([]byte(`{"x":"\u0000\ud800"}`), nil); err == nil || err.Error() != "schemas: "+lone(12, "D800") {
		t.Errorf("DecodeImage: %v", err)
	}
	del := strings.Replace(strings.Replace(pgUpdate, `"before":null,"after":{"id":1,"name":"a"}`, `"before":null,"after":null`, 1), `"op":"u"`, `"op":"d"`, 1)
	_, err = NewDecoder(idKey).Decode(Record{Topic: "db.t", Partition: 1, Offset: 42, Key: []byte(`{"id":"g\ud800"}`), Value: []byte(del)})
	want := `delete without a before image: the Kafka key is not JSON (offset 8: a \u escape of U+D800, a lone UTF-16 surrogate, not a character: ` +
		`the source text is not Unicode text (a Java string the JSON converter wrote as it was) ` +
		`and has no exact UTF-8 form for an Iceberg string)`
	if de := asDecodeError(t, err); de.Reason != want {
		t.Errorf("Kafka key: %q", de.Reason)
	}
	got, err := NewDecoder(idKey).Decode(Record{Topic: "db.t", Partition: 1, Offset: 42, Key: []byte(`{"id":"g\\ud800"}`), Value: []byte(del)})
	if err != nil || got.Event.Key != mustKey(t, cdc.String(`g\ud800`)) {
		t.Errorf("Kafka key with the literal text: %v %+v", err, got.Event)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
