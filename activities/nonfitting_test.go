package activities

// Written from a breaker's run (2026-12-04): values that do not fit the
// column types a table was created with.

import (
	"errors"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"
)

// A schemaless table whose price column was inferred as long from the
// first batch: the update setting 3.14 is quarantined (the mirror keeps
// 100), and the row's delete, whose before image carries the same 3.14,
// still deletes the row, keeping the last applied price. In one batch, in
// separate batches and with the delete late.
func TestDeleteWithNonFittingBefore(t *testing.T) {
	c1 := pgw("c", "null", `{"order_id":1,"price":100}`, 100)
	c2 := pgw("c", "null", `{"order_id":2,"price":200}`, 110)
	u1 := pgw("u", "null", `{"order_id":1,"price":3.14}`, 200)
	d1 := pgw("d", `{"order_id":1,"price":3.14}`, "null", 300)
	for name, batches := range map[string][][]wev{
		"split":     {{c1, c2}, {u1}, {d1}},
		"one batch": {{c1, c2}, {u1, d1}},
		"late":      {{c1, c2}, {d1}, {u1}},
	} {
		w := newWrun(t, TableSpec{})
		quarantined, carried := 0, 0
		for _, b := range batches {
			res, _ := w.apply(b, false)
			quarantined += res.Quarantined
			carried += res.CarriedDeleteValues
		}
		m, h := w.colTables("order_id", "price")
		wantM := "1 100 000000000000012c000000000000012c true\n2 200 000000000000006e000000000000006e false"
		if m != wantM {
			t.Errorf("%s: mirror:\n%s\nwant:\n%s", name, m, wantM)
		}
		wantH := "1 100 00000000000000640000000000000064 000000000000012c000000000000012c false\n" +
			"2 200 000000000000006e000000000000006e <nil> true"
		if h != wantH {
			t.Errorf("%s: history:\n%s\nwant:\n%s", name, h, wantH)
		}
		if quarantined != 1 || carried != 1 {
			t.Errorf("%s: quarantined %d carried %d, want 1 and 1", name, quarantined, carried)
		}
	}
}

// A table created with typed columns (here from events with the schema
// envelope, as a direct load creates it from the source's catalog), then
// streamed without the envelope: decimals as Debezium's base64 unscaled
// bytes (decimal.handling.mode=precise) or as text (string mode), binary
// as base64 and dates as day counts read by the table's types, on the
// worker that created the table and on a restarted one. Before, they were
// quarantined ("cannot convert string "BOI=" to decimal(10,2)").
func TestSchemalessOnTypedTable(t *testing.T) {
	const fAmount = `{"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2","connect.decimal.precision":"10"},"field":"amount"}`
	const fBlob = `{"type":"bytes","optional":true,"field":"blob"}`
	const fDay = `{"type":"int32","optional":true,"name":"io.debezium.time.Date","version":1,"field":"day"}`
	typed := pgSchemaW("c", "null", `{"order_id":1,"amount":"AMg=","blob":"YWI=","day":20000}`, 100, fID+","+fAmount+","+fBlob+","+fDay)
	base64Mode := pgw("c", "null", `{"order_id":2,"amount":"BOI=","blob":"Y2Q=","day":20001}`, 200)
	stringMode := pgw("u", "null", `{"order_id":1,"amount":"12.50","blob":null,"day":20002}`, 300)
	del := pgw("d", `{"order_id":2,"amount":"BOI=","blob":"Y2Q=","day":20001}`, "null", 400)
	late := pgw("u", "null", `{"order_id":1,"amount":"BOI=","blob":"YWI=","day":20003}`, 250)
	cols := []string{"order_id", "amount", "blob", "day"}
	// one batch: the table is created by its first event, and the
	// schemaless ones are decoded again with the table's types
	clean := newWrun(t, TableSpec{})
	if res, _ := clean.apply([]wev{typed, base64Mode, late, stringMode, del}, false); res.Quarantined != 0 {
		t.Fatalf("one batch: %d quarantined", res.Quarantined)
	}
	wm, wh := clean.colTables(cols...)
	want := "1 12.50 <nil> 2024-10-06 000000000000012c000000000000012c false\n" +
		"2 12.50 cd 2024-10-05 00000000000001900000000000000190 true"
	if wm != want || !strings.Contains(wh, "1 12.50 ab 2024-10-07 00000000000000fa00000000000000fa") {
		t.Fatalf("one batch: mirror:\n%s\nwant:\n%s\nhistory:\n%s", wm, want, wh)
	}
	for _, restart := range []bool{false, true} {
		w := newWrun(t, TableSpec{})
		w.apply([]wev{typed}, false)
		if restart {
			w.restart()
		}
		quarantined := 0
		for i, b := range [][]wev{{base64Mode}, {stringMode, del}, {late}} {
			if restart && i == 2 {
				w.restart() // the late key's past changes are read back from bronze
			}
			res, _ := w.apply(b, false)
			quarantined += res.Quarantined
		}
		m, h := w.colTables(cols...)
		if m != wm || h != wh || quarantined != 0 {
			t.Errorf("restart %v: quarantined %d, mirror:\n%s\nwant:\n%s\nhistory:\n%s\nwant:\n%s", restart, quarantined, m, wm, h, wh)
		}
	}
}

// A source column named like a system column (_deleted, in any case)
// blocks the table with a non-retryable error naming it, when it creates
// the table and when it appears later; it never retries forever or
// vanishes.
func TestReservedSourceColumn(t *testing.T) {
	for name, batches := range map[string][][]wev{
		"creating": {{pgw("c", "null", `{"order_id":1,"_deleted":true}`, 100)}},
		"later":    {{pgw("c", "null", `{"order_id":1,"status":"a"}`, 100)}, {pgw("u", "null", `{"order_id":1,"status":"a","_Deleted":false}`, 200)}},
	} {
		w := newWrun(t, TableSpec{})
		var err error
		for _, b := range batches {
			if _, err = w.apply(b, true); err != nil {
				break
			}
		}
		var ae *temporal.ApplicationError
		if !errors.As(err, &ae) || !ae.NonRetryable() || ae.Type() != ErrTypeBadSpec || !strings.Contains(err.Error(), "has the name of the system column _deleted") {
			t.Errorf("%s: got %v, want a non-retryable %s error naming _deleted", name, err, ErrTypeBadSpec)
		}
	}
}
