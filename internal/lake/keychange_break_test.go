package lake

// A breaker's cases of key-change creates with TOAST placeholders
// (mirror_keychange.go).

import (
	"testing"

	"github.com/lakemirror/lakemirror/internal/lake/scd2"
	"github.com/lakemirror/lakemirror/internal/merge"
	"github.com/lakemirror/lakemirror/schemas"
)

func newDocsPipeline(t *testing.T) *lakePipeline {
	p := newLakePipeline(t, merge.HistoryOptions{})
	p.dec = schemas.NewDecoder(schemas.DecoderOptions{KeyColumns: []string{"id"}})
	p.mirror = NewMirrorWriter(p.cat, p.name, []string{"id"})
	p.history = scd2.NewHistoryWriter(p.cat, p.name, []string{"id"}, merge.HistoryOptions{})
	return p
}

// Debezium's delete and create of one primary-key update share the
// change record's position (one WAL record; see
// activities/connectors_random_test.go, "a key change's create shares its
// delete's change record"). With REPLICA IDENTITY FULL the delete's before
// image holds the row just before the update, TOASTed body included
// (PostgreSQL flattens the old tuple). The old key was never seen before
// (a connector started without a snapshot): the delete's before image is
// the only change that knows the body, and it is at the create's
// position, not below it, so fillFromChanges passes it over and the body
// is lost (NULL).
func TestBreakKeyChangeSamePositionFullBefore(t *testing.T) {
	p := newDocsPipeline(t)
	delete1 := schemas.Record{Key: []byte(`{"id":1}`), Value: docValue("d", 200, `{"id":1,"title":"t","body":"b1"}`, ""),
		Headers: []schemas.Header{{Key: schemas.HeaderNewKey, Value: []byte(`{"id":2}`)}}}
	create2 := schemas.Record{Key: []byte(`{"id":2}`), Value: docValue("c", 200, "", `{"id":2,"title":"t","body":"__debezium_unavailable_value"}`),
		Headers: []schemas.Header{{Key: schemas.HeaderOldKey, Value: []byte(`{"id":1}`)}}}
	applyDocs(t, p, []schemas.Record{delete1, create2})
	want := "1 t b1 deleted=true\n2 t b1 deleted=false"
	if got := docsMirror(t, p); got != want {
		t.Errorf("mirror\n%s\nwant\n%s", got, want)
	}
}

// The same, the old key seen before with its body: the delete at the
// create's position is passed over, the older change below knows the
// body (the same value), so this one holds.
func TestBreakKeyChangeSamePositionSeenBefore(t *testing.T) {
	p := newDocsPipeline(t)
	create1 := schemas.Record{Key: []byte(`{"id":1}`), Value: docValue("c", 100, "", `{"id":1,"title":"t","body":"b1"}`)}
	delete1 := schemas.Record{Key: []byte(`{"id":1}`), Value: docValue("d", 200, `{"id":1,"title":"t","body":"b1"}`, ""),
		Headers: []schemas.Header{{Key: schemas.HeaderNewKey, Value: []byte(`{"id":2}`)}}}
	create2 := schemas.Record{Key: []byte(`{"id":2}`), Value: docValue("c", 200, "", `{"id":2,"title":"t","body":"__debezium_unavailable_value"}`),
		Headers: []schemas.Header{{Key: schemas.HeaderOldKey, Value: []byte(`{"id":1}`)}}}
	applyDocs(t, p, []schemas.Record{create1, delete1, create2})
	want := "1 t b1 deleted=true\n2 t b1 deleted=false"
	if got := docsMirror(t, p); got != want {
		t.Errorf("mirror\n%s\nwant\n%s", got, want)
	}
}
