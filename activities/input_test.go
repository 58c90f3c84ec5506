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
