package activities

import (
	"errors"
	"strings"
	"testing"

	"github.com/lakemirror/lakemirror/internal/lake"
)

const (
	// an unconstrained PostgreSQL numeric key: the table holds it as text
	fVarKey = `{"type":"struct","fields":[{"type":"int32","optional":false,"field":"scale"},{"type":"bytes","optional":false,"field":"value"}],"optional":false,"name":"io.debezium.data.VariableScaleDecimal","version":1,"field":"order_id"}`
	// the same key after ALTER COLUMN order_id TYPE numeric(10,2)
	fDecKey     = `{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2","connect.decimal.precision":"10"},"field":"order_id"}`
	fUUIDKey    = `{"type":"string","optional":false,"name":"io.debezium.data.Uuid","version":1,"field":"order_id"}`
	fVarcharKey = `{"type":"string","optional":false,"field":"order_id"}`
)

// A key column the table holds as text whose events change type cannot
// be evolved (a breaker's finding, 2026-12-04): evolving wrote the key
// 1.5 of a VariableScaleDecimal as "1.5" and, after the column became
// numeric(10,2), the same key as "1.50", a second live row. The block
// says so, an evolve stays blocked with the reason, and skipping is still
// possible.
func TestKeyHeldAsTextRefusesEvolve(t *testing.T) {
	c1 := pgSchemaW("c", "null", `{"order_id":{"scale":1,"value":"Dw=="},"status":"a"}`, 100, fVarKey+","+fStatus)
	u2 := pgSchemaW("u", "null", `{"order_id":"AJY=","status":"c"}`, 300, fDecKey+","+fStatus)
	w := newWrun(t, TableSpec{})
	w.apply([]wev{c1}, false)
	mirror, _ := w.colTables("order_id", "status")
	var sb *lake.SchemaBlockedError
	if _, err := w.apply([]wev{u2}, true); !errors.As(err, &sb) || !strings.HasPrefix(err.Error(), "schema change needs a decision (skip; evolve is refused: ") {
		t.Fatalf("the key's type change: %v", err)
	}
	w.decision = lake.DecisionEvolve
	_, err := w.apply([]wev{u2}, true)
	if !errors.As(err, &sb) || !strings.Contains(err.Error(), "evolve is refused: key column order_id is held as string") {
		t.Fatalf("evolve: %v", err)
	}
	if m, _ := w.colTables("order_id", "status"); m != mirror || !strings.HasPrefix(m, "1.5 a ") || strings.Count(m, "\n") != 0 {
		t.Fatalf("mirror after the refused evolve:\n%s", m)
	}
	w.decision = lake.DecisionSkip
	res, err := w.apply([]wev{u2}, true)
	if err != nil || res.Quarantined != 1 {
		t.Fatalf("skip: %v, %d quarantined", err, res.Quarantined)
	}
	if m, _ := w.colTables("order_id", "status"); m != mirror {
		t.Fatalf("mirror after skip:\n%s", m)
	}
}

// A uuid key column whose source became varchar cannot be evolved either
// (a second breaker's finding, 2026-12-04): read into the uuid column,
// the upper-case varchar key of another source row became the lower-case
// key of the first, merging the two rows.
func TestUUIDKeyToVarcharRefusesEvolve(t *testing.T) {
	const id = "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"
	c1 := pgSchemaW("c", "null", `{"order_id":"`+id+`","status":"a"}`, 100, fUUIDKey+","+fStatus)
	c3 := pgSchemaW("c", "null", `{"order_id":"`+strings.ToUpper(id)+`","status":"c"}`, 400, fVarcharKey+","+fStatus)
	w := newWrun(t, TableSpec{})
	w.apply([]wev{c1}, false)
	mirror, _ := w.colTables("order_id", "status")
	w.decision = lake.DecisionEvolve
	_, err := w.apply([]wev{c3}, true)
	var sb *lake.SchemaBlockedError
	if !errors.As(err, &sb) || !strings.Contains(err.Error(), "evolve is refused: key column order_id is held as uuid") {
		t.Fatalf("evolve: %v", err)
	}
	if m, _ := w.colTables("order_id", "status"); m != mirror {
		t.Fatalf("mirror after the refused evolve:\n%s", m)
	}
}
