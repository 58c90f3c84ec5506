package lake

// A breaker's cases of key-only delete images (schemas.keyOnlyImage) as
// they reach the mirror: soft deletes (rule 4) and key-change TOAST fills.

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/schemas"
)

// pricedFields is a PostgreSQL table docs(id bigint primary key, title
// text, body text NOT NULL, price numeric(10,2) NOT NULL DEFAULT 9.99)
// in JsonConverter form: Debezium gives the numeric default as the
// Connect Decimal's base64 unscaled bytes (999 = 0x03e7 = "A+c=").
const pricedFields = `{"type":"int64","optional":false,"field":"id"},` +
	`{"type":"string","optional":true,"field":"title"},` +
	`{"type":"string","optional":false,"field":"body"},` +
	`{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2","connect.decimal.precision":"10"},"default":"A+c=","field":"price"}`

// pricedValue is a Debezium PostgreSQL change of docs with the schema
// envelope.
func pricedValue(op string, lsn int, before, after string) []byte {
	if before == "" {
		before = "null"
	}
	if after == "" {
		after = "null"
	}
	schema := `{"type":"struct","fields":[` +
		`{"type":"struct","fields":[` + pricedFields + `],"optional":true,"field":"before"},` +
		`{"type":"struct","fields":[` + pricedFields + `],"optional":true,"field":"after"},` +
		`{"type":"struct","fields":[{"type":"string","optional":false,"field":"connector"},{"type":"int64","optional":false,"field":"ts_ms"},{"type":"string","optional":true,"field":"sequence"},{"type":"int64","optional":true,"field":"txId"},{"type":"int64","optional":true,"field":"lsn"}],"optional":false,"field":"source"},` +
		`{"type":"string","optional":false,"field":"op"},{"type":"int64","optional":true,"field":"ts_ms"}],"optional":false}`
	payload := fmt.Sprintf(`{"before":%s,"after":%s,"source":{"connector":"postgresql","ts_ms":%d,"sequence":"[\"%d\",\"%d\"]","txId":%d,"lsn":%d},"op":%q,"ts_ms":%d}`,
		before, after, 1_700_000_000_000+lsn, lsn-1, lsn, lsn, lsn, op, 1_700_000_000_000+lsn)
	return []byte(`{"schema":` + schema + `,"payload":` + payload + `}`)
}

func pricedMirror(t *testing.T, p *lakePipeline) string {
	t.Helper()
	tbl, err := p.cat.LoadTable(context.Background(), p.name.Mirror())
	if err != nil {
		t.Fatal(err)
	}
	rows, _, err := ReadRows(context.Background(), tbl, []string{"id"})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rows {
		body := fmt.Sprint(r["body"])
		if len(body) > 12 {
			body = body[:12] + "…"
		}
		out = append(out, fmt.Sprintf("%v %v %q %v deleted=%v", r["id"], r["title"], body, r["price"], r[lakecat.ColDeleted]))
	}
	return strings.Join(out, "\n")
}

// UPDATE docs SET id = 2 WHERE id = 1 under the default replica
// identity, the row's price at its default and its body TOASTed.
// PostgreSQL logs the old key only; Debezium fills the delete's before
// image's left-out required columns with their default (price 9.99) or
// their type's fallback (body ""), and the create's body is the TOAST
// placeholder. keyOnlyImage does not parse a decimal default, so the
// image is taken for a full one, and fillFromChanges fills the new key's
// body from the delete at the create's position: "" instead of the
// body. The source holds row 2 with the long body (a live row, not a
// soft-deleted one, loses its value), and row 1's soft delete should
// keep its last known values (rule 4), not body "".
//
// Fixed in 03e1ecc: every JsonConverter default is decoded
// (Decoder.decodeDefault), and a delete image's empty value fills no
// placeholder.
func TestBreakKeyChangeToastDecimalDefaultKeyOnlyDelete(t *testing.T) {
	p := newDocsPipeline(t)
	long := strings.Repeat("L", 40)
	create1 := schemas.Record{Key: []byte(`{"id":1}`), Value: pricedValue("c", 100, "", `{"id":1,"title":"t","body":"`+long+`","price":"A+c="}`)}
	applyDocs(t, p, []schemas.Record{create1})
	delete1 := schemas.Record{Key: []byte(`{"id":1}`), Value: pricedValue("d", 200, `{"id":1,"title":null,"body":"","price":"A+c="}`, ""),
		Headers: []schemas.Header{{Key: schemas.HeaderNewKey, Value: []byte(`{"id":2}`)}}}
	create2 := schemas.Record{Key: []byte(`{"id":2}`), Value: pricedValue("c", 200, "", `{"id":2,"title":"t","body":"__debezium_unavailable_value","price":"A+c="}`),
		Headers: []schemas.Header{{Key: schemas.HeaderOldKey, Value: []byte(`{"id":1}`)}}}
	applyDocs(t, p, []schemas.Record{delete1, create2})
	want := `1 t "LLLLLLLLLLLL…" 9.99 deleted=true` + "\n" + `2 t "LLLLLLLLLLLL…" 9.99 deleted=false`
	if got := pricedMirror(t, p); got != want {
		t.Errorf("mirror\n%s\nwant\n%s", got, want)
	}
}

// The same key change on schema-less JSON (the connector's
// value.converter.schemas.enable=false, as the real stack's items):
// body is NOT NULL, so the key-only image holds body "" (Debezium's
// fallback for a required text column), not NULL. The NULL guard of
// c428853 did not apply and the new key's live row took body "" (fixed:
// a delete image's empty value fills no placeholder either).
func TestBreakKeyChangeToastSchemalessRequiredColumn(t *testing.T) {
	p := newDocsPipeline(t)
	long := strings.Repeat("L", 40)
	applyDocs(t, p, []schemas.Record{{Key: []byte(`{"id":1}`), Value: docValue("c", 100, "", `{"id":1,"title":"t","body":"`+long+`"}`)}})
	delete1 := schemas.Record{Key: []byte(`{"id":1}`), Value: docValue("d", 200, `{"id":1,"title":null,"body":""}`, ""),
		Headers: []schemas.Header{{Key: schemas.HeaderNewKey, Value: []byte(`{"id":2}`)}}}
	create2 := schemas.Record{Key: []byte(`{"id":2}`), Value: docValue("c", 200, "", `{"id":2,"title":"t","body":"__debezium_unavailable_value"}`),
		Headers: []schemas.Header{{Key: schemas.HeaderOldKey, Value: []byte(`{"id":1}`)}}}
	applyDocs(t, p, []schemas.Record{delete1, create2})
	// the live row takes the old key's body (a TOASTed value is never
	// empty); the soft delete keeps the image's "": schema-less JSON does
	// not say body is required (docs/design.md, rule 4)
	want := "1 <nil>  deleted=true\n2 t " + long + " deleted=false"
	if got := docsMirror(t, p); got != want {
		t.Errorf("mirror\n%s\nwant\n%s", got, want)
	}
}

// REPLICA IDENTITY FULL (or MySQL's full binlog image): the row is
// deleted with title NULL and body "" (a real, NOT NULL empty text) and
// price at its value 0.00. The key was never seen by the mirror (the
// connector started with snapshot.mode=no_data, or the row was created
// before the table was mirrored). The image is full: the source row was
// (1, NULL, "", 0.00). keyOnlyImage takes it for a key-only one and
// clears it, so the soft-deleted row holds NULL in the NOT NULL columns
// body and price, where main before 050ad2a kept "" and 0.00.
func TestBreakFullImageLooksKeyOnlyUnseenKey(t *testing.T) {
	p := newDocsPipeline(t)
	delete1 := schemas.Record{Key: []byte(`{"id":1}`), Value: pricedValue("d", 200, `{"id":1,"title":null,"body":"","price":"AA=="}`, "")}
	applyDocs(t, p, []schemas.Record{delete1})
	// the trade-off docs/design.md rule 4 states: such an image is taken
	// for a key-only one, and a key the mirror never held is stored
	// deleted with NULLs (main before 050ad2a kept "" and 0.00)
	want := `1 <nil> "<nil>" <nil> deleted=true`
	if got := pricedMirror(t, p); got != want {
		t.Errorf("mirror\n%s\nwant\n%s", got, want)
	}
}
