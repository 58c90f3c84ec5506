package tablestate

import (
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// A value that does not fit its column is rejected with the text the
// quarantine has always stored: the column, then Coerce's reason with the
// "schemas: " prefix of the time the rules lived in package schemas.
func TestConformErrorText(t *testing.T) {
	s := &Shape{Cols: []cdc.Column{{Name: "id", Type: cdc.TypeLong}, {Name: "n", Type: cdc.TypeInt}},
		Names: cdc.NewColumns([]string{"id", "n"}), keyCols: []string{"id"}}
	img := &cdc.Row{Cols: cdc.NewColumns([]string{"id", "n"}), Vals: []cdc.Value{cdc.Int(1), cdc.Int(4294967295)}}
	_, _, err := s.ConformEvent(&cdc.Event{Op: cdc.OpCreate, After: img})
	want := `after image: column "n": schemas: cannot convert integer 4294967295 to int: out of int range`
	if err == nil || err.Error() != want {
		t.Errorf("conformEvent: %v\nwant %s", err, want)
	}
	out, _, err := s.conform(&cdc.Row{Cols: cdc.NewColumns([]string{"n", "id"}), Vals: []cdc.Value{cdc.Int(7), cdc.Int(2)}}, false, nil)
	if err != nil || !out.Vals[0].Equal(cdc.Int(2)) || !out.Vals[1].Equal(cdc.Int(7)) {
		t.Errorf("conform: %+v, %v", out, err)
	}
}

// Images of two layouts in turn (the positions cached per layout), with a
// column the table lacks: each is aligned by name, and the conformed rows
// do not share their values.
func TestConformLayouts(t *testing.T) {
	s := &Shape{Cols: []cdc.Column{{Name: "id", Type: cdc.TypeLong}, {Name: "n", Type: cdc.TypeLong}},
		Names: cdc.NewColumns([]string{"id", "n"}), keyCols: []string{"id"}}
	ab := cdc.NewColumns([]string{"id", "n"})
	ba := cdc.NewColumns([]string{"x", "n", "id"})
	var outs []*cdc.Row
	for i := range int64(3 * conformSlab) {
		img := &cdc.Row{Cols: ab, Vals: []cdc.Value{cdc.Int(i), cdc.Int(-i)}}
		if i%3 == 1 {
			img = &cdc.Row{Cols: ba, Vals: []cdc.Value{cdc.String("y"), cdc.Int(-i), cdc.Int(i)}}
		}
		out, unknown, err := s.conform(img, false, nil)
		if err != nil || out.Cols != s.Names || len(out.Vals) != 2 || cap(out.Vals) != 2 {
			t.Fatalf("row %d: %+v, %v", i, out, err)
		}
		if want := i%3 == 1; want != (len(unknown) == 1 && unknown[0] == "x") {
			t.Fatalf("row %d: unknown columns %v", i, unknown)
		}
		outs = append(outs, out)
	}
	for i, out := range outs {
		if !out.Vals[0].Equal(cdc.Int(int64(i))) || !out.Vals[1].Equal(cdc.Int(-int64(i))) {
			t.Fatalf("row %d: %+v", i, out.Vals)
		}
	}
}

// BenchmarkConformEvent conforms the after image of an update of the
// benchmark workload's six columns (scripts/bench), as Prepare does for
// every row change.
func BenchmarkConformEvent(b *testing.B) {
	names := []string{"order_id", "customer_id", "status", "amount", "note", "updated_at"}
	s := &Shape{Cols: []cdc.Column{{Name: "order_id", Type: cdc.TypeLong}, {Name: "customer_id", Type: cdc.TypeLong},
		{Name: "status", Type: cdc.TypeString}, {Name: "amount", Type: cdc.TypeString}, {Name: "note", Type: cdc.TypeString},
		{Name: "updated_at", Type: cdc.TypeLong}}, Names: cdc.NewColumns(names), keyCols: []string{"order_id"}}
	cols := cdc.NewColumns(names)
	vals := []cdc.Value{cdc.Int(84393), cdc.Int(55425), cdc.String("paid"), cdc.String("6770.28"),
		cdc.String("second priority wrap leave wrap back"), cdc.Int(1793491200000000)}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		e := &cdc.Event{Op: cdc.OpUpdate, After: &cdc.Row{Cols: cols, Vals: vals}}
		if _, _, err := s.ConformEvent(e); err != nil {
			b.Fatal(err)
		}
	}
}
