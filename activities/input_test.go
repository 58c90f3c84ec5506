package activities

import (
	"context"
	"fmt"
	"testing"

	"github.com/lakemirror/lakemirror/internal/lake"
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
	want := `0 decode schemas: cannot decode shop.public.orders[0]@0: malformed JSON: offset 37: \ud800 is a lone UTF-16 surrogate, ` +
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
