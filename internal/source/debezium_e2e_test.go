//go:build e2e

package source

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/schemas"
)

// TestDebeziumRoundTrip: rows of every supported type, rendered as
// Debezium snapshot reads, decode with the schemas decoder to exactly the
// values ReadChunk produced, at cdc.PostgresSeq(0, lsn), with the Schema
// Describe reported and the key of the row.
func TestDebeziumRoundTrip(t *testing.T) {
	info, rows, final, lsn := allTypesSnapshot(t, 2)
	if got := info.ColumnList(); !reflect.DeepEqual(got, allTypesColumns) {
		t.Fatalf("Describe columns:\n got %+v\nwant %+v", got, allTypesColumns)
	}

	const server = "dbserver1"
	const ts = int64(1_700_000_000_123_456)
	withKeyCols := schemas.NewDecoder(schemas.DecoderOptions{KeyColumns: info.Key})
	fromKafkaKey := schemas.NewDecoder(schemas.DecoderOptions{})
	renderer, err := NewRenderer(info, server)
	if err != nil {
		t.Fatal(err)
	}
	for i, row := range rows {
		value, err := RowToDebeziumJSON(info, row, lsn, server, ts, final[i])
		if err != nil {
			t.Fatal(err)
		}
		again, err := renderer.Value(row, lsn, ts, final[i])
		if err != nil || string(again) != string(value) {
			t.Fatalf("Renderer.Value differs from RowToDebeziumJSON (%v)", err)
		}
		key, err := KeyToDebeziumJSON(info, row, server)
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(value) || !json.Valid(key) {
			t.Fatalf("row %d: invalid JSON:\n%s\n%s", i, key, value)
		}
		wantKey, err := cdc.KeyOf(row, info.Key)
		if err != nil {
			t.Fatal(err)
		}
		for _, dec := range []*schemas.Decoder{withKeyCols, fromKafkaKey} {
			out, err := dec.Decode(schemas.Record{Topic: info.Topic(server), Offset: int64(i), Key: key, Value: value})
			if err != nil {
				t.Fatalf("row %d: decode: %v\n%s", i, err, value)
			}
			ev := out.Event
			if out.Kind != schemas.KindChange || out.RawOp != "r" || ev.Op != cdc.OpRead || ev.Before != nil {
				t.Fatalf("row %d: kind %v op %q before %v", i, out.Kind, out.RawOp, ev.Before)
			}
			if ev.Seq != cdc.PostgresSeq(0, lsn) {
				t.Errorf("row %d: Seq %s, want %s", i, ev.Seq, cdc.PostgresSeq(0, lsn))
			}
			wantMark := cdc.SnapshotRow
			if final[i] {
				wantMark = cdc.SnapshotLast
			}
			if ev.Snapshot != wantMark || ev.SourceTs != ts || ev.TxID != "" {
				t.Errorf("row %d: snapshot %v ts %d tx %q", i, ev.Snapshot, ev.SourceTs, ev.TxID)
			}
			if ev.Key != wantKey {
				t.Errorf("row %d: key %x, want %x", i, ev.Key, wantKey)
			}
			if !reflect.DeepEqual(ev.Schema, info.ColumnList()) {
				t.Errorf("row %d: decoded schema\n %+v\nwant %+v", i, ev.Schema, info.ColumnList())
			}
			if !reflect.DeepEqual(ev.After.Cols.Names, row.Cols.Names) {
				t.Fatalf("row %d: columns %v, want %v", i, ev.After.Cols.Names, row.Cols.Names)
			}
			for j, c := range info.Columns {
				if got, want := ev.After.Vals[j], row.Vals[j]; !got.Equal(want) {
					t.Errorf("row %d column %s (%s): decoded %s, read %s", i, c.Name, c.PGType, show(got), show(want))
				}
			}
		}

		// the re-snapshot's delete of the row as a ghost at (P, 0): op d,
		// the key columns in the before image, every other column null
		const p = uint64(0x1_0000_2000)
		ghost, err := renderer.GhostDeleteValue(row, p, ts)
		if err != nil {
			t.Fatal(err)
		}
		out, err := withKeyCols.Decode(schemas.Record{Topic: info.Topic(server) + "#L@4294975488#ghosts", Offset: int64(i), Key: key, Value: ghost})
		if err != nil {
			t.Fatalf("row %d: decode the ghost delete: %v\n%s", i, err, ghost)
		}
		ev := out.Event
		if out.Kind != schemas.KindChange || out.RawOp != "d" || ev.Op != cdc.OpDelete || ev.After != nil || ev.Key != wantKey ||
			ev.Seq != cdc.PostgresSeq(p, 0) || ev.SourceTs != ts || ev.Snapshot != cdc.SnapshotNone {
			t.Fatalf("row %d: ghost delete kind %v op %q after %v key %x seq %s ts %d snapshot %v", i, out.Kind, out.RawOp, ev.After, ev.Key, ev.Seq, ev.SourceTs, ev.Snapshot)
		}
		if ev.Before.HasValuesBeyond(info.Key) {
			t.Errorf("row %d: the ghost delete's before image has values beyond the key: %v", i, ev.Before.Vals)
		}
		for _, k := range info.Key {
			got, _ := ev.Before.Get(k)
			want, _ := row.Get(k)
			if !got.Equal(want) {
				t.Errorf("row %d: ghost delete key column %s %s, want %s", i, k, show(got), show(want))
			}
		}
	}
}

// TestRendererEventMatchesDecoder: the event Renderer.Event builds from a
// row read from PostgreSQL is exactly (every field, deep) the event the
// schemas decoder gives for the record ValueAt renders of it, for rows of
// every supported type, at an initial load's position (0, P) and a
// re-snapshot's (P, 0), the last read included. A direct load without
// bronze takes the first instead of the second.
func TestRendererEventMatchesDecoder(t *testing.T) {
	info, rows, final, lsn := allTypesSnapshot(t, 3)
	const server = "dbserver1"
	const ts = int64(1_700_000_000_123_456)
	topic := info.Topic(server) + "#L1"
	renderer, err := NewRenderer(info, server)
	if err != nil {
		t.Fatal(err)
	}
	dec := schemas.NewDecoder(schemas.DecoderOptions{KeyColumns: info.Key})
	for _, pos := range []struct{ commit, lsn uint64 }{{0, lsn}, {lsn, 0}, {0x1_0000_2000, 0x1_0000_1000}} {
		for i, row := range rows {
			value, err := renderer.ValueAt(row, pos.commit, pos.lsn, ts, final[i])
			if err != nil {
				t.Fatal(err)
			}
			key, err := renderer.Key(row)
			if err != nil {
				t.Fatal(err)
			}
			out, err := dec.Decode(schemas.Record{Topic: topic, Offset: int64(40 + i), Key: key, Value: value})
			if err != nil {
				t.Fatalf("row %d: decode: %v", i, err)
			}
			got, err := renderer.Event(row, pos.commit, pos.lsn, ts, final[i], topic, int64(40+i))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, out.Event) {
				t.Errorf("position %x/%x row %d: Event\n %+v\nthe decoder's\n %+v", pos.commit, pos.lsn, i, *got, *out.Event)
			}
		}
	}
}

// TestRendererEventRejectsMismatch: Event refuses what ValueAt refuses, a
// value of another kind than its column's or a decimal of another scale,
// and a row of other columns.
func TestRendererEventRejectsMismatch(t *testing.T) {
	info, rows, _, _ := allTypesSnapshot(t, 10)
	row := rows[0]
	renderer, err := NewRenderer(info, "s")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := renderer.Event(row, 0, 1, 0, false, "t", 0); err != nil {
		t.Fatalf("the row as read: %v", err)
	}
	for name, bad := range map[string]func(r *cdc.Row){
		"kind":    func(r *cdc.Row) { r.Vals[r.Cols.Index("i4")] = cdc.String("1") },
		"scale":   func(r *cdc.Row) { r.Vals[r.Cols.Index("n102")] = cdc.Decimal(2550, 3) },
		"columns": func(r *cdc.Row) { r.Vals = r.Vals[:3] },
	} {
		r := &cdc.Row{Cols: row.Cols, Vals: append([]cdc.Value(nil), row.Vals...)}
		bad(r)
		_, evErr := renderer.Event(r, 0, 1, 0, false, "t", 0)
		_, valErr := renderer.ValueAt(r, 0, 1, 0, false)
		if evErr == nil || valErr == nil {
			t.Errorf("%s: Event error %v, ValueAt error %v: want both refused", name, evErr, valErr)
		}
	}
}

// allTypesSnapshot creates the all-types table in a new database and
// reads it with Snapshot in chunks of chunk rows: its description, its 4
// rows in key order, whether each is the snapshot's last, and the
// snapshot's LSN.
func allTypesSnapshot(t *testing.T, chunk int) (TableInfo, []*cdc.Row, []bool, uint64) {
	t.Helper()
	db := newDB(t)
	ctx := ctxT(t)
	db.exec(t, allTypesDDL)
	info, err := db.src.Describe(ctx, "public", "all_types", nil)
	if err != nil {
		t.Fatal(err)
	}
	var rows []*cdc.Row
	var final []bool
	lsn, err := db.src.Snapshot(ctx, info, chunk, func(c Chunk) error {
		for i, r := range c.Rows {
			rows = append(rows, r)
			final = append(final, c.Final && i == len(c.Rows)-1)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 || !final[3] || final[2] {
		t.Fatalf("snapshot: %d rows, final marks %v", len(rows), final)
	}
	return info, rows, final, lsn
}
