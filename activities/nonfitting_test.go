package activities

// Written from a breaker's run (2026-12-04): values that do not fit the
// column types a table was created with.

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/schemas"
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
// bytes (decimal.handling.mode=precise) or as text (string mode) and
// dates as day counts read by the table's types, on the
// worker that created the table and on a restarted one. Before, they were
// quarantined ("cannot convert string "BOI=" to decimal(10,2)").
func TestSchemalessOnTypedTable(t *testing.T) {
	const fAmount = fAmount2
	const fDay = `{"type":"int32","optional":true,"name":"io.debezium.time.Date","version":1,"field":"day"}`
	typed := pgSchemaW("c", "null", `{"order_id":1,"amount":"AMg=","day":20000}`, 100, fID+","+fAmount+","+fDay)
	base64Mode := pgw("c", "null", `{"order_id":2,"amount":"BOI=","day":20001}`, 200)
	stringMode := pgw("u", "null", `{"order_id":1,"amount":"12.50","day":20002}`, 300)
	del := pgw("d", `{"order_id":2,"amount":"BOI=","day":20001}`, "null", 400)
	late := pgw("u", "null", `{"order_id":1,"amount":"BOI=","day":20003}`, 250)
	cols := []string{"order_id", "amount", "day"}
	// one batch: the table is created by its first event, and the
	// schemaless ones are decoded again with the table's types
	clean := newWrun(t, TableSpec{})
	if res, _ := clean.apply([]wev{typed, base64Mode, late, stringMode, del}, false); res.Quarantined != 0 {
		t.Fatalf("one batch: %d quarantined", res.Quarantined)
	}
	wm, wh := clean.colTables(cols...)
	want := "1 12.50 2024-10-06 000000000000012c000000000000012c false\n" +
		"2 12.50 2024-10-05 00000000000001900000000000000190 true"
	if wm != want || !strings.Contains(wh, "1 12.50 2024-10-07 00000000000000fa00000000000000fa") {
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

// A source column named like a system column (_is_deleted, in any ASCII
// case) blocks the table as a schema change naming it, where it creates
// the table and where it appears later; it never retries forever or
// vanishes. The operator's evolve leaves the column out of the tables
// from then on (recorded: later batches carrying it apply without a
// decision); skip quarantines the changes that carry it.
func TestReservedSourceColumn(t *testing.T) {
	first := []wev{pgw("c", "null", `{"order_id":1,"status":"a","_is_deleted":true}`, 100)}
	later := []wev{pgw("c", "null", `{"order_id":1,"status":"a"}`, 100), pgw("u", "null", `{"order_id":1,"status":"b","_Is_Deleted":false}`, 200)}
	next := []wev{pgw("u", "null", `{"order_id":1,"status":"c","_is_deleted":true}`, 300), pgw("u", "null", `{"order_id":1,"status":"c","_Is_Deleted":true}`, 300)}
	for name, c := range map[string]struct {
		evs              []wev
		decision, wantM  string
		quarantined, col int
	}{
		"creating, evolve": {first, lake.DecisionEvolve, "1 c " + pgs(300, 300) + " false", 0, 0},
		"creating, skip":   {first, lake.DecisionSkip, "", 1, 0},
		"later, evolve":    {later, lake.DecisionEvolve, "1 c " + pgs(300, 300) + " false", 0, 1},
		"later, skip":      {later, lake.DecisionSkip, "1 a " + pgs(100, 100) + " false", 1, 1},
	} {
		w := newWrun(t, TableSpec{})
		if c.col == 1 {
			w.apply(c.evs[:1], false)
		}
		blocked := c.evs[c.col:]
		_, err := w.apply(blocked, true)
		var ae *temporal.ApplicationError
		if !errors.As(err, &ae) || !ae.NonRetryable() || ae.Type() != ErrTypeSchemaBlocked || !strings.Contains(err.Error(), "has the name of the system column _is_deleted") {
			t.Errorf("%s: got %v, want a schema block naming _is_deleted", name, err)
			continue
		}
		w.decision = c.decision
		res, _ := w.apply(blocked, false)
		if res.Quarantined != c.quarantined {
			t.Errorf("%s: quarantined %d, want %d", name, res.Quarantined, c.quarantined)
		}
		if c.decision == lake.DecisionSkip {
			if c.wantM != "" {
				if m, _ := w.colTables("order_id", "status"); m != c.wantM {
					t.Errorf("%s: mirror:\n%s\nwant:\n%s", name, m, c.wantM)
				}
			}
			continue
		}
		// left out from now on: a later batch carrying it applies
		if _, err := w.apply(next[c.col:c.col+1], true); err != nil {
			t.Errorf("%s: the next batch: %v", name, err)
			continue
		}
		if m, _ := w.colTables("order_id", "status"); m != c.wantM {
			t.Errorf("%s: mirror:\n%s\nwant:\n%s", name, m, c.wantM)
		}
	}
}

// The next batch's records decoded ahead (a prefetch) before the batch
// that creates the typed table applied: they are decoded again with the
// table's types instead of being quarantined.
func TestPrefetchedBeforeTableTypes(t *testing.T) {
	typed := pgSchemaW("c", "null", `{"order_id":1,"amount":"AMg="}`, 100, fID+","+fAmount2)
	next := pgw("c", "null", `{"order_id":2,"amount":"BOI="}`, 200)
	w := newWrun(t, TableSpec{})
	ctx := context.Background()
	st, name, _ := w.a.state(w.spec)
	recs := []schemas.Record{{Topic: w.spec.Topic, Offset: 1, Value: next.m.Value}}
	st.mu.Lock()
	if err := st.settleTypes(ctx, w.a, name); err != nil {
		t.Fatal(err)
	}
	pre, err := decodeAll(st.decoders, recs)
	st.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	w.apply([]wev{typed}, false)
	st.mu.Lock()
	b := lake.Batch{ID: "b2", Seq: 2, Topic: w.spec.Topic, Ranges: []lake.Range{{From: 1, To: 2}}, EndOffsets: lake.Offsets{0: 2}}
	stage := ""
	res, _, err := w.a.applyRecords(ctx, st, name, w.spec, b, recs, &pre, "", &stage)
	st.mu.Unlock()
	m, _ := w.colTables("order_id", "amount")
	want := "1 2.00 00000000000000640000000000000064 false\n2 12.50 00000000000000c800000000000000c8 false"
	if err != nil || res.Quarantined != 0 || m != want {
		t.Errorf("err %v quarantined %d, mirror:\n%s\nwant:\n%s", err, res.Quarantined, m, want)
	}
}

// The table's types read only records without the envelope: a source
// column turned into an unconstrained numeric (VariableScaleDecimal) still
// blocks the table as a type change, on the worker that typed it and on a
// restarted one.
func TestVariableScaleOnTypedTableBlocks(t *testing.T) {
	const fVar = `{"type":"struct","fields":[{"type":"int32","optional":false,"field":"scale"},{"type":"bytes","optional":false,"field":"value"}],"optional":true,"name":"io.debezium.data.VariableScaleDecimal","version":1,"field":"amount"}`
	typed := pgSchemaW("c", "null", `{"order_id":1,"amount":"AMg="}`, 100, fID+","+fAmount2)
	v := pgSchemaW("u", "null", `{"order_id":1,"amount":{"scale":3,"value":"MDk="}}`, 200, fID+","+fVar) // 12.345
	for _, restart := range []bool{false, true} {
		w := newWrun(t, TableSpec{})
		w.apply([]wev{typed}, false)
		if restart {
			w.restart()
		}
		_, err := w.apply([]wev{v}, true)
		if err == nil || !strings.Contains(err.Error(), `column "amount" type-changed from decimal(10,2) to string`) {
			t.Errorf("restart %v: got %v, want the type change to block", restart, err)
		}
	}
}

// fAmount2 is a Connect Decimal field amount of decimal(10,2).
const fAmount2 = `{"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2","connect.decimal.precision":"10"},"field":"amount"}`

// The batch that creates the typed table decodes its schemaless records
// again with the table's types even when nothing was rejected: a JSON
// number read without them goes through float64 and would still fit the
// decimal column, losing digits (12345678901234568.00).
func TestCreatingBatchDecimalExact(t *testing.T) {
	const fBig = `{"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2","connect.decimal.precision":"38"},"field":"amount"}`
	typed := pgSchemaW("c", "null", `{"order_id":1,"amount":"AMg="}`, 100, fID+","+fBig)
	big := pgw("c", "null", `{"order_id":2,"amount":12345678901234567.89}`, 200)
	w := newWrun(t, TableSpec{})
	res, _ := w.apply([]wev{typed, big}, false)
	m, _ := w.colTables("order_id", "amount")
	want := "1 2.00 00000000000000640000000000000064 false\n2 12345678901234567.89 00000000000000c800000000000000c8 false"
	if m != want || res.Quarantined != 0 {
		t.Errorf("quarantined %d, mirror:\n%s\nwant:\n%s", res.Quarantined, m, want)
	}
}

// A key column named like a system column cannot be left out: the table
// stops with a non-retryable error saying so, whatever the decision.
func TestReservedKeyColumn(t *testing.T) {
	for _, decision := range []string{"", lake.DecisionEvolve, lake.DecisionSkip} {
		w := newWrun(t, TableSpec{})
		w.spec.KeyColumns = []string{"_Seq"}
		w.decision = decision
		_, err := w.apply([]wev{pgw("c", "null", `{"_Seq":1,"status":"a"}`, 100)}, true)
		var ae *temporal.ApplicationError
		if !errors.As(err, &ae) || !ae.NonRetryable() || ae.Type() != ErrTypeBadSpec || !strings.Contains(err.Error(), `key column "_Seq" has the name of the system column _seq`) {
			t.Errorf("decision %q: got %v, want a non-retryable %s error", decision, err, ErrTypeBadSpec)
		}
	}
}

// Only the columns that type schemaless values (decimal, uuid, date)
// change the decoders: a table inferred from schemaless values (long,
// string) or one adding such columns never re-decodes its batch; a typed
// column does, once.
func TestTableTypesGeneration(t *testing.T) {
	w := newWrun(t, TableSpec{})
	st, _, _ := w.a.state(w.spec)
	w.apply([]wev{pgw("c", "null", `{"order_id":1,"status":"a"}`, 100)}, false)
	w.apply([]wev{pgw("u", "null", `{"order_id":1,"status":"b","qty":5}`, 200)}, false)
	if g := st.decoders.generation(); g != 0 {
		t.Fatalf("generation %d after untyped columns, want 0", g)
	}
	w.apply([]wev{pgSchemaW("u", "null", `{"order_id":1,"status":"c","qty":5,"amount":"AMg="}`, 300, fID+","+fStatus+","+fQty64+","+fAmount2)}, false)
	w.apply([]wev{pgw("u", "null", `{"order_id":1,"status":"d","qty":5,"amount":"BOI="}`, 400)}, false)
	if g := st.decoders.generation(); g != 1 {
		t.Fatalf("generation %d after a decimal column, want 1", g)
	}
	if m, _ := w.colTables("order_id", "amount"); m != "1 12.50 "+pgs(400, 400)+" false" {
		t.Errorf("mirror:\n%s", m)
	}
}
