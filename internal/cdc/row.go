package cdc

// Columns is the ordered list of column names of a row image. Decoders
// share one *Columns between all images of the same layout, so rows cost
// only their values.
type Columns struct {
	Names []string
	index map[string]int
}

// NewColumns returns the column list for names (kept, not copied).
func NewColumns(names []string) *Columns {
	idx := make(map[string]int, len(names))
	for i, n := range names {
		idx[n] = i
	}
	return &Columns{Names: names, index: idx}
}

// Index returns the position of column name, or -1.
func (c *Columns) Index(name string) int {
	if i, ok := c.index[name]; ok {
		return i
	}
	return -1
}

// Len is the number of columns.
func (c *Columns) Len() int { return len(c.Names) }

// Row is one row image (a Debezium before or after struct): values aligned
// with Cols.Names.
type Row struct {
	Cols *Columns
	Vals []Value
}

// Get returns the value of column name and whether the image has it.
func (r *Row) Get(name string) (Value, bool) {
	if r == nil {
		return Value{}, false
	}
	i := r.Cols.Index(name)
	if i < 0 {
		return Value{}, false
	}
	return r.Vals[i], true
}

// HasValuesBeyond reports whether any column not in keyCols is non-NULL.
// A Debezium delete from PostgreSQL with the default replica identity has
// a before image with only the key columns set; such an image carries no
// values to keep.
func (r *Row) HasValuesBeyond(keyCols []string) bool {
	if r == nil {
		return false
	}
outer:
	for i, v := range r.Vals {
		if v.Kind == KindNull {
			continue
		}
		for _, k := range keyCols {
			if r.Cols.Names[i] == k {
				continue outer
			}
		}
		return true
	}
	return false
}
