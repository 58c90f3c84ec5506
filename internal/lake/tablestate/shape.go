package tablestate

import (
	"fmt"
	"slices"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/cdc/typing"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
)

// Shape is a mirror table's source-column layout: the columns in schema
// order with their types, used to align and type every row image before
// the merge rules see it. ConformEvent is not safe for concurrent use.
type Shape struct {
	Cols    []cdc.Column
	Names   *cdc.Columns
	keyCols []string
	// softDelete is the mirror's soft-delete column (lakecat.SoftDeleteColumn).
	SoftDelete string
	// ids is the Iceberg field id of every column of the schema, by name.
	ids map[string]int
	// lastCols is the image layout conform aligned last and lastPos the
	// position of each of its columns in Cols (-1: not the table's):
	// decoders share one *cdc.Columns between the images of a layout, so
	// a batch looks its names up once
	lastCols *cdc.Columns
	lastPos  []int
	// vals and rows are the unused rest of the blocks conformed images
	// are cut from (one allocation for conformSlab images)
	vals []cdc.Value
	rows []cdc.Row
}

// conformSlab is how many conformed images share one allocation.
const conformSlab = 256

// positions returns the position in Cols of each column of cols (-1:
// not a column of the table).
func (s *Shape) positions(cols *cdc.Columns) []int {
	if cols == s.lastCols {
		return s.lastPos
	}
	pos := make([]int, len(cols.Names))
	for i, name := range cols.Names {
		pos[i] = s.Names.Index(name)
	}
	s.lastCols, s.lastPos = cols, pos
	return pos
}

// newRow returns a row of the table's columns, every value NULL.
func (s *Shape) newRow() *cdc.Row {
	n := len(s.Cols)
	if len(s.vals) < n {
		s.vals = make([]cdc.Value, n*conformSlab)
	}
	if len(s.rows) == 0 {
		s.rows = make([]cdc.Row, conformSlab)
	}
	out := &s.rows[0]
	s.rows = s.rows[1:]
	out.Cols, out.Vals = s.Names, s.vals[:n:n]
	s.vals = s.vals[n:]
	return out
}

// ShapeOf derives the layout from the mirror's Iceberg schema.
func ShapeOf(sc *iceberg.Schema, keyCols []string) (*Shape, error) {
	s := &Shape{keyCols: keyCols}
	var names []string
	sys, err := lakecat.SystemColumnsOf(sc)
	if err != nil {
		return nil, err
	}
	s.SoftDelete = sys.SoftDelete
	s.ids = map[string]int{}
	for _, f := range sc.Fields() {
		s.ids[f.Name] = f.ID
	}
	if s.Cols, err = lakecat.SourceColumns(sc, sys); err != nil {
		return nil, err
	}
	for _, c := range s.Cols {
		names = append(names, c.Name)
	}
	s.Names = cdc.NewColumns(names)
	return s, nil
}

// conform returns img aligned to the table's columns (missing columns are
// NULL) with every value converted to its column's type, and the names of
// image columns the table does not have. TOAST placeholders pass through.
// A value that does not fit its column is an error naming the column,
// unless carry is set (a delete's before image, see ConformEvent): then a
// non-key value that does not fit becomes an unavailable-value
// placeholder, which the merge rules fill with the key's last known value
// (design.md rule 4), and carried counts it.
func (s *Shape) conform(img *cdc.Row, carry bool, carried *int) (*cdc.Row, []string, error) {
	if img == nil {
		return nil, nil, nil
	}
	out := s.newRow()
	var unknown []string
	for i, j := range s.positions(img.Cols) {
		name := img.Cols.Names[i]
		if j < 0 {
			if !img.Vals[i].IsNull() {
				unknown = append(unknown, name)
			}
			continue
		}
		v, err := typing.Coerce(img.Vals[i], s.Cols[j].Type)
		if err != nil && carry && !slices.Contains(s.keyCols, name) {
			v, err = cdc.Unavailable(), nil
			*carried++
		}
		if err != nil {
			// "schemas: " is the prefix these texts had when the rules lived
			// in package schemas; kept so that quarantined rows' reasons
			// (and filters on them) stay as they were.
			return nil, nil, fmt.Errorf("column %q: schemas: %w", name, err)
		}
		out.Vals[j] = v
	}
	return out, unknown, nil
}

// ConformEvent aligns both images of e and recomputes its key from the
// typed values, so that keys match those read back from the table. It
// returns the image columns the table does not have and the number of a
// delete's before-image values that did not fit their column: a delete
// needs only its key and position, so such values take the key's last
// known value instead of rejecting the delete (the breaker case: an
// update quarantined for a value the inferred column cannot hold, then
// the row's delete carrying the same value, must still delete the row).
// Errors: a value of an upsert's image, or a key value, that does not fit
// its column.
func (s *Shape) ConformEvent(e *cdc.Event) ([]string, int, error) {
	carried := 0
	before, u1, err := s.conform(e.Before, e.Op == cdc.OpDelete, &carried)
	if err != nil {
		return nil, 0, fmt.Errorf("before image: %w", err)
	}
	after, u2, err := s.conform(e.After, false, &carried)
	if err != nil {
		return nil, 0, fmt.Errorf("after image: %w", err)
	}
	e.Before, e.After = before, after
	if img := e.Image(); img != nil {
		k, err := cdc.KeyOf(img, s.keyCols)
		if err != nil {
			return nil, 0, err
		}
		e.Key = k
	}
	return append(u1, u2...), carried, nil
}

// MirrorColumns returns a mirror table's source columns (the system
// columns left out) in schema order, typed from its Iceberg schema.
// Errors: a column type with no cdc equivalent.
func MirrorColumns(tbl *table.Table) ([]cdc.Column, error) {
	sh, err := ShapeOf(tbl.Schema(), nil)
	if err != nil {
		return nil, err
	}
	return sh.Cols, nil
}
