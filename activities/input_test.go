package activities

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/names"
	"github.com/lakemirror/lakemirror/internal/sample"
	"github.com/lakemirror/lakemirror/schemas"
)

// Issue 34 item 4 through the pipeline: the key "g\ud800" (a JSON lone
// surrogate) and the key that really holds the six characters `g\ud800`
// were one mirror row (the second change updated the first's row). Now the
// first is quarantined, its reason naming the escape, and the second is a
// row of its own.
func TestLoneSurrogateKeyQuarantined(t *testing.T) {
	w := newWrun(t, TableSpec{})
	res, _ := w.apply([]wev{
		pgw("c", "null", `{"order_id":"g\ud800","status":"lone"}`, 100),
		pgw("c", "null", `{"order_id":"g\\ud800","status":"text"}`, 200),
	}, false)
	if res.Quarantined != 1 {
		t.Errorf("quarantined %d, want 1", res.Quarantined)
	}
	m, _ := w.colTables("order_id", "status")
	if want := `g\ud800 text 00000000000000c800000000000000c8 false`; m != want {
		t.Errorf("mirror:\n%s\nwant:\n%s", m, want)
	}
	ctx := context.Background()
	tbl, err := w.cat.LoadTable(ctx, lake.TableName{Namespace: "shop", Name: "orders"}.Quarantine())
	if err != nil {
		t.Fatal(err)
	}
	rows, _, err := lake.ReadRows(ctx, tbl, []string{lake.BronzeOffset})
	if err != nil {
		t.Fatal(err)
	}
	got := ""
	for _, r := range rows {
		got += fmt.Sprintf("%v %v %v\n", r[lake.BronzeOffset], r[lake.ColStage], r[lake.ColReason])
	}
	want := `0 decode schemas: cannot decode shop.public.orders[0]@0: malformed JSON: offset 37: a \u escape of U+D800, a lone UTF-16 surrogate, ` +
		`not a character: the source text is not Unicode text (a Java string the JSON converter wrote as it was) and has no exact UTF-8 form for an Iceberg string` + "\n"
	if got != want {
		t.Errorf("quarantine:\n%s\nwant:\n%s", got, want)
	}
}

// Issue 34 item 5 through the pipeline: a BIT(16) key and column hold
// 0x0180, which Debezium sends least significant byte first (80 01,
// "gAE="). A new mirror stores the database's order (01 80, "AYA=") and
// records it (lake.PropBitsOrder). A mirror created before (no property;
// simulated by a first batch whose column carries the same bytes
// without the Bits name, as the old decoder stored them, and the property
// removed) keeps Debezium's order, on a restarted worker too, so the
// update of the same source row lands on its row instead of opening a
// second row under the reversed key.
func TestBitsStoredInDatabaseOrder(t *testing.T) {
	const (
		bitsKey  = `{"type":"bytes","optional":false,"name":"io.debezium.data.Bits","version":1,"parameters":{"length":"16"},"field":"order_id"}`
		bitsCol  = `{"type":"bytes","optional":true,"name":"io.debezium.data.Bits","version":1,"parameters":{"length":"16"},"field":"flags"}`
		plainKey = `{"type":"bytes","optional":false,"field":"order_id"}`
		plainCol = `{"type":"bytes","optional":true,"field":"flags"}`
	)
	ctx := context.Background()
	name := lake.TableName{Namespace: "shop", Name: "orders"}
	mirrorProp := func(w *wrun) (string, bool) {
		tbl, err := w.cat.LoadTable(ctx, name.Mirror())
		if err != nil {
			t.Fatal(err)
		}
		v, ok := tbl.Properties()[lake.PropBitsOrder]
		return v, ok
	}

	w := newWrun(t, TableSpec{})
	w.apply([]wev{pgSchemaW("c", "null", `{"order_id":"gAE=","flags":"gAE="}`, 100, bitsKey+","+bitsCol)}, false)
	w.apply([]wev{pgSchemaW("u", "null", `{"order_id":"gAE=","flags":"gAI="}`, 200, bitsKey+","+bitsCol)}, false)
	m, _ := w.colTables("order_id", "flags")
	if want := "AYA= AoA= 00000000000000c800000000000000c8 false"; m != want {
		t.Errorf("new table: mirror:\n%s\nwant:\n%s", m, want)
	}
	if v, ok := mirrorProp(w); v != lake.BitsMostSignificantFirst || !ok {
		t.Errorf("new table: %s = %q %v", lake.PropBitsOrder, v, ok)
	}

	old := newWrun(t, TableSpec{})
	old.apply([]wev{pgSchemaW("c", "null", `{"order_id":"gAE=","flags":"gAE="}`, 100, plainKey+","+plainCol)}, false)
	tbl, err := old.cat.LoadTable(ctx, name.Mirror())
	if err != nil {
		t.Fatal(err)
	}
	tx := tbl.NewTransaction()
	if err := tx.RemoveProperties([]string{lake.PropBitsOrder}); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	old.restart()
	old.apply([]wev{pgSchemaW("u", "null", `{"order_id":"gAE=","flags":"gAI="}`, 200, bitsKey+","+bitsCol)}, false)
	m, _ = old.colTables("order_id", "flags")
	if want := "gAE= gAI= 00000000000000c800000000000000c8 false"; m != want {
		t.Errorf("table created before: mirror:\n%s\nwant:\n%s", m, want)
	}
	if v, ok := mirrorProp(old); ok {
		t.Errorf("table created before: %s = %q", lake.PropBitsOrder, v)
	}
}

// Issue 34 item 6: the error of a batch over the quarantine limit goes to
// the workflow's status and Temporal history; it showed the first
// record's content (`unparsed tail: "garbage 0"`). It now names the first
// record's coordinates, stage and reason without its values, and the
// commands that go on.
func TestQuarantineLimitErrorHidesContent(t *testing.T) {
	w := newWrun(t, TableSpec{})
	w.apply([]wev{pgw("c", "null", `{"order_id":1,"price":100,"note":"x"}`, 100)}, false)
	w.spec.MaxQuarantine = 2
	_, err := w.apply([]wev{
		{m: sample.Message{Value: []byte("garbage 0")}},
		pgw("u", "null", `{"order_id":1,"price":"S3CRET-TEXT","note":"x"}`, 200),
		pgw("u", "null", `{"order_id":1,"price":3.14159,"note":"x"}`, 300),
		pgw("u", "null", `{"order_id":"g\ud800","price":1,"note":"x"}`, 400),
	}, true)
	want := `4 records of batch b2 cannot be applied (limit 2 per batch); first: ` +
		`shop.public.orders/0@1 (decode): malformed JSON: cannot parse JSON: cannot parse number: unexpected char: "…"; unparsed tail: "…". ` +
		`To keep them in the quarantine and go on: starter settings shop.orders --max-quarantine 4 && starter retry shop.orders; ` +
		`then starter dump shop.orders --quarantine shows them with their reasons (type: QuarantineLimit, retryable: false)`
	if err == nil || err.Error() != want {
		t.Errorf("error:\n%v\nwant:\n%s", err, want)
	}
	for _, secret := range []string{"garbage", "S3CRET", "3.14159", "\\ud800"} {
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("the error shows %q", secret)
		}
	}
}

// The non-retryable errors of a record that stops a table (classify):
// message, details and cause reach Temporal history, so none holds the
// record's values.
func TestClassifiedRecordErrorsHideContent(t *testing.T) {
	_, derr := schemas.NewDecoder(schemas.DecoderOptions{KeyColumns: []string{"id"}}).Decode(schemas.Record{Topic: "shop.public.orders", Partition: 2, Offset: 7, Value: []byte(`{"id":"S3CRET-ID","x":garbage}`)})
	err := classify(derr)
	want := `record shop.public.orders/2@7 cannot be decoded: malformed JSON: cannot parse JSON: cannot parse object: cannot parse object value: ` +
		`cannot parse number: unexpected char: "…"; unparsed tail: "…" (type: UndecodableRecord, retryable: false)`
	if err == nil || err.Error() != want {
		t.Errorf("decode error:\n%v\nwant:\n%s", err, want)
	}
	var ae *temporal.ApplicationError
	if !errors.As(err, &ae) {
		t.Fatalf("%T", err)
	}
	var details map[string]any
	if err := ae.Details(&details); err != nil {
		t.Fatal(err)
	}
	if ae.Unwrap() != nil || fmt.Sprint(details) != `map[offset:7 partition:2 reason:malformed JSON: cannot parse JSON: cannot parse object: cannot parse object value: cannot parse number: unexpected char: "…"; unparsed tail: "…" topic:shop.public.orders]` {
		t.Errorf("cause %v, details %v", ae.Unwrap(), details)
	}

	cerr := &lake.ConformError{Origin: cdc.Origin{Topic: "shop.public.orders", Partition: 1, Offset: 9}, Stage: lake.StageConform,
		Err: errors.New(`after image: column "price": schemas: cannot convert string "S3CRET" to long: not a number`)}
	err = classify(fmt.Errorf("prepare: %w", cerr))
	want = `record shop.public.orders/1@9 does not fit the mirror table: after image: column "price": schemas: cannot convert string "…" to long: not a number (type: ValueDoesNotFit, retryable: false)`
	if err == nil || err.Error() != want || errors.Unwrap(err) != nil {
		t.Errorf("conform error:\n%v\nwant:\n%s", err, want)
	}
}

// redactRecordContent on the value forms reasons hold.
func TestRedactRecordContent(t *testing.T) {
	for in, want := range map[string]string{
		`after.price: 3.14 does not fit decimal(8,4): has more digits than the precision`: `after.price: … does not fit decimal(…,…): has more digits than the precision`,
		`i: 4294967295 out of range [-2147483648, 2147483647]`:                            `i: … out of range […, …]`,
		`column "amount": cannot convert integer -5 to date: x`:                           `column "amount": cannot convert integer … to date: x`,
		`cannot convert uuid deadbeef-0000-4000-8000-000000000000 to string: no`:          `cannot convert uuid … to string: no`,
		`cannot convert list [1,"a b",null] to int: no`:                                   `cannot convert list … to int: no`,
		`cannot convert boolean true to long: no`:                                         `cannot convert boolean … to long: no`,
		`unknown op "x\"y"`:   `unknown op "…"`,
		`unparsed tail: "abc`: `unparsed tail: "…"`,
		`the key was purged at position 00000000000000c8 and this change is at 0000000000000064, at or below it`: `the key was purged at position … and this change is at …, at or below it`,
		`column "col1" of timestamp type: time zone`:                                                             `column "col1" of timestamp type: time zone`,
	} {
		if got := redactRecordContent(in); got != want {
			t.Errorf("%s:\n got %s\nwant %s", in, got, want)
		}
	}
}

// Issue 34 item 6: a table workflow started with a name the rule refuses
// (by an older starter, or by hand) kept retrying: the activities now
// refuse the spec as InvalidTableSpec (not retried), naming the rule.
func TestBadTableNameIsBadSpec(t *testing.T) {
	a := New(mustCatalog(t), nil)
	a.StateDir = t.TempDir()
	ctx := context.Background()
	for name, why := range map[string]string{
		"../../esc.t1":  `table name "../../esc.t1" has "/" at byte 2 (a path separator)`,
		"a..b.t5":       `table name "a..b.t5" has an empty part (a dot at an end, or two in a row)`,
		"ns.tëst_表_🙂":   `table name "ns.tëst_表_🙂" has "ë" at byte 4 (not ASCII)`,
		"Shop.Orders ":  `table name "Shop.Orders " has "S" at byte 0 (upper case)`,
		"ns.a%2Fb":      `table name "ns.a%2Fb" has "%" at byte 4 (an escape)`,
		"shop.orders\t": `table name "shop.orders\t" has "\t" at byte 11 (white space)`,
	} {
		spec := TableSpec{Table: name, Topic: "shop.public.orders", KeyColumns: []string{"order_id"}}
		msg := "lake: " + why + "; " + names.TableRule
		want := msg + " (type: " + ErrTypeBadSpec + ", retryable: false): " + msg
		_, err := a.Recover(ctx, spec)
		if err == nil || err.Error() != want {
			t.Errorf("Recover %q:\n got %v\nwant %s", name, err, want)
		}
		_, err = a.ApplyBatch(ctx, ApplyRequest{Spec: spec, Batch: lake.Batch{ID: "b1", Seq: 1, Topic: spec.Topic}})
		if err == nil || err.Error() != want {
			t.Errorf("ApplyBatch %q:\n got %v\nwant %s", name, err, want)
		}
	}
}
