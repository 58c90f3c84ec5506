package merge

import (
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// Key-change creates onto a live key are counted; onto a deleted,
// truncated or unseen key, stale ones and plain creates are not.
func TestMovedOntoLive(t *testing.T) {
	ev := func(op cdc.Op, seq uint64, oldKey cdc.Key) *cdc.Event {
		return &cdc.Event{Key: "k2", Op: op, Seq: cdc.PostgresSeq(seq, seq), OldKey: oldKey}
	}
	at := func(seq uint64) cdc.Seq { return cdc.PostgresSeq(seq, seq) }
	for _, c := range []struct {
		name   string
		stored Stored
		events []*cdc.Event
		want   int
	}{
		{"swap: onto the stored live row", Stored{Found: true, Seq: at(110)}, []*cdc.Event{ev(cdc.OpCreate, 200, "k1"), ev(cdc.OpDelete, 210, "")}, 1},
		{"swap in one batch: onto the batch's row", Stored{}, []*cdc.Event{ev(cdc.OpCreate, 110, ""), ev(cdc.OpCreate, 200, "k1"), ev(cdc.OpDelete, 210, "")}, 1},
		{"onto a read", Stored{}, []*cdc.Event{ev(cdc.OpRead, 110, ""), ev(cdc.OpCreate, 200, "k1")}, 1},
		{"onto a deleted stored row", Stored{Found: true, Seq: at(110), Deleted: true}, []*cdc.Event{ev(cdc.OpCreate, 200, "k1")}, 0},
		{"onto an unseen key", Stored{}, []*cdc.Event{ev(cdc.OpCreate, 200, "k1")}, 0},
		{"after the key's delete", Stored{Found: true, Seq: at(110)}, []*cdc.Event{ev(cdc.OpDelete, 150, ""), ev(cdc.OpCreate, 200, "k1")}, 0},
		{"after a truncate", Stored{Found: true, Seq: at(110)}, []*cdc.Event{ev(cdc.OpTruncate, 150, ""), ev(cdc.OpCreate, 200, "k1")}, 0},
		{"a plain create onto a live row (an upsert)", Stored{Found: true, Seq: at(110)}, []*cdc.Event{ev(cdc.OpCreate, 200, "")}, 0},
		{"stale: at or below the stored row", Stored{Found: true, Seq: at(200)}, []*cdc.Event{ev(cdc.OpCreate, 200, "k1")}, 0},
		{"a chain through the key: 1 → 2 → 3", Stored{}, []*cdc.Event{ev(cdc.OpCreate, 200, "k1"), ev(cdc.OpDelete, 300, "")}, 0},
		{"two in a row", Stored{Found: true, Seq: at(110)}, []*cdc.Event{ev(cdc.OpCreate, 200, "k1"), ev(cdc.OpCreate, 300, "k3")}, 2},
	} {
		if got := MovedOntoLive(c.stored, Group{Key: "k2", Events: c.events}); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}
