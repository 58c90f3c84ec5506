package lake

import (
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/payload"
)

// TestSetBronzeKeys: every row change's key lands on the bronze row of
// its record, the last of several events of one record wins, an event
// without a key leaves the row alone, and events out of record order or
// of records not in bronze give the same rows as the map lookup.
func TestSetBronzeKeys(t *testing.T) {
	rows := func() []BronzeRecord {
		return []BronzeRecord{{Record: payload.Record{Partition: 0, Offset: 10}}, {Record: payload.Record{Partition: 0, Offset: 11}}, {Record: payload.Record{Partition: 1, Offset: 10}},
			{Record: payload.Record{Partition: 1, Offset: 12}}, {Record: payload.Record{Partition: 0, Offset: 12}}}
	}
	ev := func(p int32, o int64, k string) *cdc.Event {
		return &cdc.Event{Key: cdc.Key(k), Origin: cdc.Origin{Partition: p, Offset: o}}
	}
	cases := []struct {
		name   string
		events []*cdc.Event
		want   []string
	}{
		{"in order", []*cdc.Event{ev(0, 10, "a"), ev(1, 10, "b"), ev(0, 12, "c")}, []string{"a", "", "b", "", "c"}},
		{"two events of one record", []*cdc.Event{ev(0, 11, "old"), ev(0, 11, "new"), ev(1, 12, "d")}, []string{"", "new", "", "d", ""}},
		{"event without a key", []*cdc.Event{ev(0, 10, "a"), ev(0, 10, ""), ev(0, 11, "")}, []string{"a", "", "", "", ""}},
		{"out of order", []*cdc.Event{ev(1, 12, "d"), ev(0, 10, "a"), ev(0, 12, "c")}, []string{"a", "", "", "d", "c"}},
		{"record not in bronze", []*cdc.Event{ev(0, 10, "a"), ev(7, 1, "x"), ev(0, 12, "c")}, []string{"a", "", "", "", "c"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			walked, mapped := rows(), rows()
			setBronzeKeys(walked, c.events)
			setBronzeKeysByMap(mapped, c.events)
			for i := range walked {
				if string(walked[i].PK) != c.want[i] || mapped[i].PK != walked[i].PK {
					t.Fatalf("row %d: PK %q (map lookup %q), want %q", i, walked[i].PK, mapped[i].PK, c.want[i])
				}
			}
		})
	}
}
