package lake

import (
	"bytes"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

func randValue(r *rand.Rand) cdc.Value {
	switch r.IntN(12) {
	case 0:
		return cdc.Null()
	case 1:
		return cdc.Bool(r.IntN(2) == 1)
	case 2:
		return cdc.Int(r.Int64() - r.Int64())
	case 3:
		return cdc.Float(r.NormFloat64())
	case 4:
		return cdc.String(string(bytes.Repeat([]byte{byte('a' + r.IntN(26))}, r.IntN(40))))
	case 5:
		return cdc.Bytes([]byte{0, byte(r.IntN(256)), 0xff})
	case 6:
		return cdc.Decimal(r.Int64N(1e12)-5e11, int16(r.IntN(6)))
	case 7:
		return cdc.BigDecimal("123456789012345678901234567890", 4)
	case 8:
		return cdc.TimestampTZ(r.Int64N(1 << 52))
	case 9:
		return cdc.Unavailable()
	case 10:
		return cdc.List(cdc.Int(1), cdc.String("x"))
	}
	return cdc.Value{Kind: cdc.KindUUID, S: string(bytes.Repeat([]byte{7}, 16))}
}

func randRow(r *rand.Rand, cols *cdc.Columns) *cdc.Row {
	row := &cdc.Row{Cols: cols, Vals: make([]cdc.Value, cols.Len())}
	for i := range row.Vals {
		row.Vals[i] = randValue(r)
	}
	return row
}

// Chain records survive the log byte for byte: every value kind, events
// with and without images, history rows with hex and odd hashes, and
// sections skipped when not asked for.
func TestChainRecordRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	c := newCodec()
	layouts := []*cdc.Columns{cdc.NewColumns([]string{"id", "a", "b"}), cdc.NewColumns([]string{"id", "a", "b", "c"})}
	l, err := openStateLog(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	type want struct {
		ref uint64
		rec chainRec
	}
	var all []want
	atRow := 0 // records whose open version refers to a row (openAtRow)
	w := recWriter{c: c}
	for i := 0; i < 1000; i++ {
		cols := layouts[r.IntN(2)]
		rec := chainRec{prev: uint64(r.IntN(1000)), batch: int64(r.IntN(1 << 30)), flags: uint8(r.IntN(32))}
		k := cdc.Key("key")
		if rec.flags&recEvents != 0 {
			for j := 0; j < r.IntN(4); j++ {
				e := &cdc.Event{Op: cdc.Op(r.IntN(5)), Seq: cdc.SeqOf(r.Uint64(), r.Uint64()), Key: k, SourceTs: r.Int64N(1 << 50),
					TxID: "tx", Snapshot: cdc.SnapshotMark(r.IntN(4)), Origin: cdc.Origin{Topic: "t" + string(rune('a'+r.IntN(3))), Partition: int32(r.IntN(8)), Offset: r.Int64N(1 << 40)}}
				if r.IntN(2) == 0 {
					e.Before = randRow(r, cols)
				}
				if r.IntN(2) == 0 {
					e.After = randRow(r, cols)
				}
				if r.IntN(4) == 0 { // a key change's create (its old key) or delete (its new key)
					if e.Op == cdc.OpDelete {
						e.NewKey = "new"
					} else {
						e.OldKey = "old"
					}
				}
				rec.events = append(rec.events, e)
			}
			if rec.events == nil {
				rec.events = []*cdc.Event{}
			}
		}
		if rec.flags&recMirror != 0 {
			rec.mirror = randRow(r, cols)
			for _, e := range rec.events { // after images equal to the mirror row are stored as references to it
				if e.After != nil && r.IntN(2) == 0 {
					e.After = &cdc.Row{Cols: cols, Vals: slices.Clone(rec.mirror.Vals)}
				}
			}
		}
		hr := func() histRow {
			h := histRow{seq: cdc.SeqOf(r.Uint64(), 1), from: r.Int64N(1 << 50), hash: "0123456789abcdef0123456789abcdef", file: int32(r.IntN(9)), pos: r.Int64N(1 << 30)}
			if r.IntN(2) == 0 {
				h.toSeq, h.to, h.tx = cdc.SeqOf(r.Uint64(), 2), r.Int64N(1<<50), "77"
			}
			if r.IntN(5) == 0 {
				h.hash = "NOT-HEX"
			}
			return h
		}
		if rec.flags&recRows != 0 {
			for j := 0; j < r.IntN(3); j++ {
				rec.rows = append(rec.rows, hr())
			}
			for j := 0; j < r.IntN(2); j++ {
				rec.removed = append(rec.removed, rowLoc{File: int32(r.IntN(9)), Pos: r.Int64N(1 << 30)})
			}
		}
		openAt := -1 // the open version is rows[openAt] (stored as a reference to it when its values are the mirror's)
		if rec.flags&recOpen != 0 && r.IntN(3) > 0 {
			h := hr()
			if len(rec.rows) > 0 && r.IntN(2) == 0 {
				openAt = r.IntN(len(rec.rows))
				h = rec.rows[openAt]
			}
			rec.open, rec.openVal = &h, randRow(r, cols)
			if rec.mirror != nil && r.IntN(2) == 0 {
				rec.openVal = &cdc.Row{Cols: cols, Vals: slices.Clone(rec.mirror.Vals)}
			}
		}
		w.begin(rec.prev, rec.batch, rec.flags)
		if rec.flags&recEvents != 0 {
			w.events(rec.events, rec.mirror)
			for _, e := range rec.events { // an upsert's before image is not kept, but a key-change create's as it came
				if e.Op.IsUpsert() && (e.OldKey == "" || !hasUnavailable(e.Before)) {
					e.Before = nil
				}
			}
		}
		if rec.flags&recMirror != 0 {
			w.mirrorRow(rec.mirror)
		}
		if rec.flags&recRows != 0 {
			w.rows(rec.rows, rec.removed)
		}
		if rec.flags&recOpen != 0 {
			w.openVersion(rec.open, openAt, rec.openVal, rec.mirror)
		}
		if rec.flags&recOpen != 0 && openAt >= 0 && rec.mirror != nil && sameRow(rec.openVal, rec.mirror) {
			atRow++
		}
		ref, err := l.append(w.buf)
		if err != nil {
			t.Fatal(err)
		}
		if i%50 == 0 {
			if err := l.flush(); err != nil {
				t.Fatal(err)
			}
		}
		all = append(all, want{ref, rec})
	}
	var buf []byte
	for i, x := range all {
		b, next, err := l.read(x.ref, buf)
		buf = next
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.decodeRec(b, "key", wantEvents|wantMirror|wantRows|wantOpen)
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if !reflect.DeepEqual(got, x.rec) {
			t.Fatalf("record %d differs:\ngot  %+v\nwant %+v", i, got, x.rec)
		}
		only, err := c.decodeRec(b, "key", wantOpen)
		if err != nil || only.events != nil || only.mirror != nil || only.rows != nil || !reflect.DeepEqual(only.open, x.rec.open) ||
			!reflect.DeepEqual(only.openVal, x.rec.openVal) {
			t.Fatalf("record %d: open-only decode %+v, %v", i, only, err)
		}
		// rows referred to from several sections are never shared
		for _, e := range got.events {
			if got.mirror != nil && e.After == got.mirror || got.openVal != nil && e.After == got.openVal {
				t.Fatalf("record %d: an after image shares its row with another section", i)
			}
		}
		if got.mirror != nil && got.openVal == got.mirror {
			t.Fatalf("record %d: the open version shares its row with the mirror section", i)
		}
	}
	if atRow < 5 {
		t.Fatalf("only %d records refer to a row for their open version", atRow)
	}
	if _, err := c.decodeRec([]byte{1, 2, 3}, "key", wantEvents); err == nil {
		t.Fatal("a truncated record decoded")
	}
}

// A log written before deletes kept their new key holds "" in the key
// slot of every delete: it loads with no new key, and a create's old
// key loads as before.
func TestChainRecordKeySlot(t *testing.T) {
	c := newCodec()
	w := recWriter{c: c}
	cols := cdc.NewColumns([]string{"id", "a"})
	row := &cdc.Row{Cols: cols, Vals: []cdc.Value{cdc.Int(1), cdc.String("x")}}
	raw := &cdc.Row{Cols: cols, Vals: []cdc.Value{cdc.Int(1), cdc.Unavailable()}}
	events := []*cdc.Event{
		{Op: cdc.OpDelete, Seq: cdc.SeqOf(1, 1), Key: "k", Before: row, NewKey: "n"},
		{Op: cdc.OpDelete, Seq: cdc.SeqOf(2, 2), Key: "k", Before: row}, // as an older log has it
		{Op: cdc.OpCreate, Seq: cdc.SeqOf(3, 3), Key: "k", Before: raw, After: row, OldKey: "o"},
		{Op: cdc.OpCreate, Seq: cdc.SeqOf(4, 4), Key: "k", Before: row, After: row},
	}
	w.begin(0, 1, recEvents)
	w.events(events, nil)
	got, err := c.decodeRec(w.buf, "k", wantEvents)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.events) != 4 {
		t.Fatalf("%d events", len(got.events))
	}
	g := got.events
	if g[0].NewKey != "n" || g[0].OldKey != "" || g[1].NewKey != "" || g[1].OldKey != "" {
		t.Errorf("deletes: new keys %q %q, old keys %q %q", g[0].NewKey, g[1].NewKey, g[0].OldKey, g[1].OldKey)
	}
	if g[2].OldKey != "o" || g[2].NewKey != "" || !reflect.DeepEqual(g[2].Before, raw) || !reflect.DeepEqual(g[2].After, row) {
		t.Errorf("key-change create: %+v", g[2])
	}
	if g[3].Before != nil {
		t.Errorf("a create's before image without placeholders was kept: %+v", g[3].Before)
	}
}
