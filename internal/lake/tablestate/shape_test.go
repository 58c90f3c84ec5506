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
