package localstate

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
	c := NewCodec()
	layouts := []*cdc.Columns{cdc.NewColumns([]string{"id", "a", "b"}), cdc.NewColumns([]string{"id", "a", "b", "c"})}
	l, err := OpenLog(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	type want struct {
		ref uint64
		rec ChainRec
	}
	var all []want
	atRow := 0 // records whose open version refers to a row (openAtRow)
	w := RecWriter{C: c}
	for i := 0; i < 1000; i++ {
		cols := layouts[r.IntN(2)]
		rec := ChainRec{Prev: uint64(r.IntN(1000)), Batch: int64(r.IntN(1 << 30)), Flags: uint8(r.IntN(32))}
		k := cdc.Key("key")
		if rec.Flags&RecEvents != 0 {
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
				rec.Events = append(rec.Events, e)
			}
			if rec.Events == nil {
				rec.Events = []*cdc.Event{}
			}
		}
		if rec.Flags&RecMirror != 0 {
			rec.Mirror = randRow(r, cols)
			for _, e := range rec.Events { // after images equal to the mirror row are stored as references to it
				if e.After != nil && r.IntN(2) == 0 {
					e.After = &cdc.Row{Cols: cols, Vals: slices.Clone(rec.Mirror.Vals)}
				}
			}
		}
		hr := func() HistRow {
			h := HistRow{Seq: cdc.SeqOf(r.Uint64(), 1), From: r.Int64N(1 << 50), Hash: "0123456789abcdef0123456789abcdef", File: int32(r.IntN(9)), Pos: r.Int64N(1 << 30)}
			if r.IntN(2) == 0 {
				h.ToSeq, h.To, h.Tx = cdc.SeqOf(r.Uint64(), 2), r.Int64N(1<<50), "77"
			}
			if r.IntN(5) == 0 {
				h.Hash = "NOT-HEX"
			}
			return h
		}
		if rec.Flags&RecRows != 0 {
			for j := 0; j < r.IntN(3); j++ {
				rec.Rows = append(rec.Rows, hr())
			}
			for j := 0; j < r.IntN(2); j++ {
				rec.Removed = append(rec.Removed, rowLoc{File: int32(r.IntN(9)), Pos: r.Int64N(1 << 30)})
			}
		}
		openAt := -1 // the open version is rows[openAt] (stored as a reference to it when its values are the mirror's)
		if rec.Flags&RecOpen != 0 && r.IntN(3) > 0 {
			h := hr()
			if len(rec.Rows) > 0 && r.IntN(2) == 0 {
				openAt = r.IntN(len(rec.Rows))
				h = rec.Rows[openAt]
			}
			rec.Open, rec.OpenVal = &h, randRow(r, cols)
			if rec.Mirror != nil && r.IntN(2) == 0 {
				rec.OpenVal = &cdc.Row{Cols: cols, Vals: slices.Clone(rec.Mirror.Vals)}
			}
		}
		w.Begin(rec.Prev, rec.Batch, rec.Flags)
		if rec.Flags&RecEvents != 0 {
			w.Events(rec.Events, rec.Mirror)
			for _, e := range rec.Events { // an upsert's before image is not kept, but a key-change create's as it came
				if e.Op.IsUpsert() && (e.OldKey == "" || !HasUnavailable(e.Before)) {
					e.Before = nil
				}
			}
		}
		if rec.Flags&RecMirror != 0 {
			w.MirrorRow(rec.Mirror)
		}
		if rec.Flags&RecRows != 0 {
			w.Rows(rec.Rows, rec.Removed)
		}
		if rec.Flags&RecOpen != 0 {
			w.OpenVersion(rec.Open, openAt, rec.OpenVal, rec.Mirror)
		}
		if rec.Flags&RecOpen != 0 && openAt >= 0 && rec.Mirror != nil && sameRow(rec.OpenVal, rec.Mirror) {
			atRow++
		}
		ref, err := l.Append(w.Buf)
		if err != nil {
			t.Fatal(err)
		}
		if i%50 == 0 {
			if err := l.Flush(); err != nil {
				t.Fatal(err)
			}
		}
		all = append(all, want{ref, rec})
	}
	var buf []byte
	for i, x := range all {
		b, next, err := l.Read(x.ref, buf)
		buf = next
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.DecodeRec(b, "key", WantEvents|WantMirror|WantRows|WantOpen)
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if !reflect.DeepEqual(got, x.rec) {
			t.Fatalf("record %d differs:\ngot  %+v\nwant %+v", i, got, x.rec)
		}
		only, err := c.DecodeRec(b, "key", WantOpen)
		if err != nil || only.Events != nil || only.Mirror != nil || only.Rows != nil || !reflect.DeepEqual(only.Open, x.rec.Open) ||
			!reflect.DeepEqual(only.OpenVal, x.rec.OpenVal) {
			t.Fatalf("record %d: open-only decode %+v, %v", i, only, err)
		}
		// rows referred to from several sections are never shared
		for _, e := range got.Events {
			if got.Mirror != nil && e.After == got.Mirror || got.OpenVal != nil && e.After == got.OpenVal {
				t.Fatalf("record %d: an after image shares its row with another section", i)
			}
		}
		if got.Mirror != nil && got.OpenVal == got.Mirror {
			t.Fatalf("record %d: the open version shares its row with the mirror section", i)
		}
	}
	if atRow < 5 {
		t.Fatalf("only %d records refer to a row for their open version", atRow)
	}
	if _, err := c.DecodeRec([]byte{1, 2, 3}, "key", WantEvents); err == nil {
		t.Fatal("a truncated record decoded")
	}
}

// A log written before deletes kept their new key holds "" in the key
// slot of every delete: it loads with no new key, and a create's old
// key loads as before.
func TestChainRecordKeySlot(t *testing.T) {
	c := NewCodec()
	w := RecWriter{C: c}
	cols := cdc.NewColumns([]string{"id", "a"})
	row := &cdc.Row{Cols: cols, Vals: []cdc.Value{cdc.Int(1), cdc.String("x")}}
	raw := &cdc.Row{Cols: cols, Vals: []cdc.Value{cdc.Int(1), cdc.Unavailable()}}
	events := []*cdc.Event{
		{Op: cdc.OpDelete, Seq: cdc.SeqOf(1, 1), Key: "k", Before: row, NewKey: "n"},
		{Op: cdc.OpDelete, Seq: cdc.SeqOf(2, 2), Key: "k", Before: row}, // as an older log has it
		{Op: cdc.OpCreate, Seq: cdc.SeqOf(3, 3), Key: "k", Before: raw, After: row, OldKey: "o"},
		{Op: cdc.OpCreate, Seq: cdc.SeqOf(4, 4), Key: "k", Before: row, After: row},
	}
	w.Begin(0, 1, RecEvents)
	w.Events(events, nil)
	got, err := c.DecodeRec(w.Buf, "k", WantEvents)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Events) != 4 {
		t.Fatalf("%d events", len(got.Events))
	}
	g := got.Events
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
