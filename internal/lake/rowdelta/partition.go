package rowdelta

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/parquetio"
)

// Partitioned and sorted data files (docs/design.md, "Layout of the
// tables"). A batch's rows are built as one Arrow record in the order the
// write path decided them; WriteRecord splits it into one data file per
// partition of the table's current spec (Iceberg spec, "Partitioning"),
// each sorted by the table's sort order, and returns where every input
// row landed (file and position), which is what the key index and the
// local state record. An unpartitioned, unsorted table gets one file in
// input order, exactly as before.

// FileOut is one data file written from a record: the file, its
// partition (spec id and values by partition field id) and its rows
// (input row numbers, in file order).
type FileOut struct {
	DF     iceberg.DataFile
	SpecID int
	Values map[int]any
}

// partCol is one partition field bound to a record's column.
type partCol struct {
	fieldID   int
	col       int // column in the record
	srcType   iceberg.Type
	transform iceberg.Transform
	// fast, when set, is partitionValue for this field's common
	// transforms (fastPartitionValue): the same value from the column
	// without an Iceberg literal per row
	fast func(col arrow.Array, i int) (any, bool)
}

// sortCol is one sort field bound to a record's column.
type sortCol struct {
	col        int
	desc       bool
	nullsFirst bool
}

// RecordLayout binds tbl's current partition spec and sort order to the
// columns of records of schema sc. It is nil for an unpartitioned and
// unsorted table. Errors: a partition or sort source column the record
// does not have.
type RecordLayout struct {
	Spec  iceberg.PartitionSpec
	parts []partCol
	sorts []sortCol
}

func BindLayout(tbl *table.Table, sc *arrow.Schema) (*RecordLayout, error) {
	spec := tbl.Spec()
	order := tbl.SortOrder()
	if spec.IsUnpartitioned() && order.IsUnsorted() {
		return nil, nil
	}
	l := &RecordLayout{Spec: spec}
	isc := tbl.Schema()
	colOf := func(sourceID int) (int, iceberg.Type, error) {
		f, ok := isc.FindFieldByID(sourceID)
		if !ok {
			return 0, nil, fmt.Errorf("lake: %s: layout source column id %d is not in the schema", tbl.Identifier(), sourceID)
		}
		idx := sc.FieldIndices(f.Name)
		if len(idx) == 0 {
			return 0, nil, fmt.Errorf("lake: %s: layout column %q is not in the rows written", tbl.Identifier(), f.Name)
		}
		return idx[0], f.Type, nil
	}
	for _, f := range spec.Fields() {
		c, t, err := colOf(f.SourceID())
		if err != nil {
			return nil, err
		}
		l.parts = append(l.parts, partCol{fieldID: f.FieldID, col: c, srcType: t, transform: f.Transform, fast: fastPartitionValue(t, f.Transform)})
	}
	for _, f := range order.Fields() {
		if _, ok := f.Transform.(iceberg.IdentityTransform); !ok {
			continue // only identity sort fields order the rows; others are recorded, not applied
		}
		c, _, err := colOf(f.SourceID())
		if err != nil {
			return nil, err
		}
		l.sorts = append(l.sorts, sortCol{col: c, desc: f.Direction == table.SortDESC, nullsFirst: f.NullOrder == table.NullsFirst})
	}
	return l, nil
}

// RowLocation is where one input row of WriteRecord landed.
type RowLocation struct {
	File int32 // index into the returned files
	Pos  int64
}

// WriteRecord writes rec as tbl's data files named <prefix>-<uuid>.parquet
// (under the partition's directory when partitioned) and returns them
// with each input row's location. The caller keeps rec. Errors: a value
// the table's partition transform cannot take, the writers'.
func WriteRecord(ctx context.Context, tbl *table.Table, prefix string, rec arrow.RecordBatch) ([]FileOut, []RowLocation, error) {
	l, err := BindLayout(tbl, rec.Schema())
	if err != nil {
		return nil, nil, err
	}
	n := int(rec.NumRows())
	if l == nil {
		df, err := parquetio.WriteDataFile(ctx, tbl, prefix, rec, lakecat.UniqueColumns...)
		if err != nil {
			return nil, nil, err
		}
		locs := make([]RowLocation, n)
		for i := range locs {
			locs[i].Pos = int64(i)
		}
		spec := tbl.Spec()
		return []FileOut{{DF: df, SpecID: spec.ID()}}, locs, nil
	}
	groups, err := l.Group(rec)
	if err != nil {
		return nil, nil, err
	}
	locs := make([]RowLocation, n)
	out := make([]FileOut, 0, len(groups))
	for gi, g := range groups {
		for p, row := range g.Rows {
			locs[row] = RowLocation{File: int32(gi), Pos: int64(p)}
		}
		part, release, err := TakeRows(ctx, rec, g.Rows)
		if err != nil {
			return nil, nil, err
		}
		path, err := l.NewPath(tbl, prefix, g.Values)
		if err != nil {
			release()
			return nil, nil, err
		}
		df, err := parquetio.WriteFile(ctx, tbl, path, part, parquetio.FileSpec{Schema: tbl.Schema(), Content: iceberg.EntryContentData,
			Unique: lakecat.UniqueColumns, Spec: &l.Spec, Partition: g.Values, SortOrderID: tbl.SortOrder().OrderID()})
		release()
		if err != nil {
			return nil, nil, err
		}
		out = append(out, FileOut{DF: df, SpecID: l.Spec.ID(), Values: g.Values})
	}
	return out, locs, nil
}

// TakeRows returns rec's rows in the given order (rec itself when that is
// every row in order) and the function that releases it.
func TakeRows(ctx context.Context, rec arrow.RecordBatch, rows []int) (arrow.RecordBatch, func(), error) {
	inOrder := len(rows) == int(rec.NumRows())
	for i, r := range rows {
		if r != i {
			inOrder = false
			break
		}
	}
	if inOrder {
		return rec, func() {}, nil
	}
	if lo, hi := rows[0], rows[len(rows)-1]; hi-lo+1 == len(rows) && slices.IsSorted(rows) {
		s := rec.NewSlice(int64(lo), int64(hi+1))
		return s, s.Release, nil
	}
	b := array.NewInt64Builder(memory.DefaultAllocator)
	b.Reserve(len(rows))
	for _, r := range rows {
		b.Append(int64(r))
	}
	idx := b.NewArray()
	b.Release()
	defer idx.Release()
	d, err := compute.Take(ctx, *compute.DefaultTakeOptions(), compute.NewDatum(rec), compute.NewDatum(idx))
	if err != nil {
		return nil, nil, fmt.Errorf("lake: order rows by partition: %w", err)
	}
	r := d.(*compute.RecordDatum).Value
	return r, r.Release, nil
}

// RowGroup is the rows of one partition, in file order.
type RowGroup struct {
	Key    string
	Values map[int]any
	Rows   []int
}

// Group splits rec's rows by partition (in order of first appearance,
// so a batch's files come out in a stable order) and orders each
// partition's rows by the sort order (stable: equal rows keep their
// order).
func (l *RecordLayout) Group(rec arrow.RecordBatch) ([]*RowGroup, error) {
	n := int(rec.NumRows())
	var groups []*RowGroup
	if len(l.parts) == 0 {
		g := &RowGroup{Rows: make([]int, n)}
		for i := range g.Rows {
			g.Rows[i] = i
		}
		groups = []*RowGroup{g}
	} else {
		byKey := map[string]*RowGroup{}
		var key []byte
		vals := make([]any, len(l.parts))
		for i := 0; i < n; i++ {
			key = key[:0]
			for j, p := range l.parts {
				col := rec.Column(p.col)
				v, ok := any(nil), false
				if p.fast != nil {
					v, ok = p.fast(col, i)
				}
				if !ok {
					var err error
					if v, err = partitionValue(col, i, p.srcType, p.transform); err != nil {
						return nil, fmt.Errorf("lake: partition %s of row %d: %w", p.transform, i, err)
					}
				}
				vals[j] = v
				key = appendKeyValue(key, v)
			}
			g := byKey[string(key)]
			if g == nil {
				g = &RowGroup{Key: string(key), Values: make(map[int]any, len(l.parts))}
				for j, p := range l.parts {
					g.Values[p.fieldID] = vals[j]
				}
				byKey[g.Key] = g
				groups = append(groups, g)
			}
			g.Rows = append(g.Rows, i)
		}
	}
	if len(l.sorts) > 0 {
		for _, g := range groups {
			slices.SortStableFunc(g.Rows, func(a, b int) int { return l.compareRows(rec, a, b) })
		}
	}
	return groups, nil
}

// compareRows orders rows a and b of rec by the sort fields.
func (l *RecordLayout) compareRows(rec arrow.RecordBatch, a, b int) int {
	for _, s := range l.sorts {
		col := rec.Column(s.col)
		an, bn := col.IsNull(a), col.IsNull(b)
		var c int
		switch {
		case an && bn:
			c = 0
		case an || bn: // one null: placed by the null order, whatever the direction
			if an == s.nullsFirst {
				return -1
			}
			return 1
		default:
			c = compareAt(col, a, b)
			if s.desc {
				c = -c
			}
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

// compareAt compares two non-null values of one column.
func compareAt(col arrow.Array, a, b int) int {
	switch x := col.(type) {
	case *array.Int32:
		return cmp.Compare(x.Value(a), x.Value(b))
	case *array.Int64:
		return cmp.Compare(x.Value(a), x.Value(b))
	case *array.Float32:
		return cmp.Compare(x.Value(a), x.Value(b))
	case *array.Float64:
		return cmp.Compare(x.Value(a), x.Value(b))
	case *array.String:
		return strings.Compare(x.Value(a), x.Value(b))
	case *array.Binary:
		return strings.Compare(x.ValueString(a), x.ValueString(b))
	case *array.Date32:
		return cmp.Compare(x.Value(a), x.Value(b))
	case *array.Time64:
		return cmp.Compare(x.Value(a), x.Value(b))
	case *array.Timestamp:
		return cmp.Compare(x.Value(a), x.Value(b))
	case *array.Decimal128:
		return x.Value(a).Cmp(x.Value(b))
	case *array.Boolean:
		av, bv := x.Value(a), x.Value(b)
		switch {
		case av == bv:
			return 0
		case !av:
			return -1
		}
		return 1
	case *array.FixedSizeBinary:
		return strings.Compare(string(x.Value(a)), string(x.Value(b)))
	}
	return 0
}

// partitionValue is the partition value of row i of col under transform
// (nil for a null source value): the Go value iceberg-go records in a
// manifest's partition struct (int32 for bucket, year, month, hour;
// iceberg.Date for day; the source's type for identity and truncate).
func partitionValue(col arrow.Array, i int, srcType iceberg.Type, t iceberg.Transform) (any, error) {
	if col.IsNull(i) {
		return nil, nil
	}
	lit, err := literalAt(col, i, srcType)
	if err != nil {
		return nil, err
	}
	out := t.Apply(iceberg.Optional[iceberg.Literal]{Valid: true, Val: lit})
	if !out.Valid {
		return nil, nil
	}
	return out.Val.Any(), nil
}

// fastPartitionValue returns partitionValue for the transforms most
// layouts use, computed with iceberg-go's own per-value transform
// functions instead of a literal per row: bucket[N] of a long or int
// column, day of a timestamp column (µs), identity of a
// long or int column. It returns nil for any other field; the function
// returns ok false for a column of another Arrow type than expected (the
// caller then takes partitionValue) and (nil, true) for a null value.
func fastPartitionValue(srcType iceberg.Type, t iceberg.Transform) func(col arrow.Array, i int) (any, bool) {
	isTs := false
	switch srcType.(type) {
	case iceberg.TimestampType, iceberg.TimestampTzType:
		isTs = true
	}
	switch tr := t.(type) {
	case iceberg.BucketTransform:
		switch srcType.(type) {
		case iceberg.Int64Type:
			f := tr.Transformer(srcType)
			return valuePart[*array.Int64](func(v int64) any { return optionalInt32(f(v)) })
		case iceberg.Int32Type:
			// an int's bucket hashes it as a long (Iceberg spec, "Bucket
			// Transform Details"), as BucketTransform.Apply does
			f := tr.Transformer(iceberg.PrimitiveTypes.Int64)
			return valuePart[*array.Int32](func(v int32) any { return optionalInt32(f(int64(v))) })
		}
	case iceberg.DayTransform:
		if isTs {
			return valuePart[*array.Timestamp](func(v arrow.Timestamp) any { return iceberg.Timestamp(v).ToDate() })
		}
	case iceberg.IdentityTransform:
		switch srcType.(type) {
		case iceberg.Int64Type:
			return valuePart[*array.Int64](func(v int64) any { return v })
		case iceberg.Int32Type:
			return valuePart[*array.Int32](func(v int32) any { return v })
		}
	}
	return nil
}

// valuePart is a fastPartitionValue over an Arrow array type A whose
// Value(i) is a V: ok false when the column is not an A, (nil, true) for
// a null value, else f of the value.
func valuePart[A interface {
	arrow.Array
	Value(int) V
}, V any](f func(V) any) func(col arrow.Array, i int) (any, bool) {
	return func(col arrow.Array, i int) (any, bool) {
		x, ok := col.(A)
		if !ok {
			return nil, false
		}
		if x.IsNull(i) {
			return nil, true
		}
		return f(x.Value(i)), true
	}
}

// optionalInt32 is a transform's int32 result as partitionValue returns
// it (nil when the transform gives none).
func optionalInt32(v iceberg.Optional[int32]) any {
	if !v.Valid {
		return nil
	}
	return v.Val
}

// literalAt is row i of col as an Iceberg literal of srcType.
func literalAt(col arrow.Array, i int, srcType iceberg.Type) (iceberg.Literal, error) {
	switch x := col.(type) {
	case *array.Boolean:
		return iceberg.NewLiteral(x.Value(i)), nil
	case *array.Int32:
		return iceberg.NewLiteral(x.Value(i)), nil
	case *array.Int64:
		return iceberg.NewLiteral(x.Value(i)), nil
	case *array.Float32:
		return iceberg.NewLiteral(x.Value(i)), nil
	case *array.Float64:
		return iceberg.NewLiteral(x.Value(i)), nil
	case *array.String:
		return iceberg.NewLiteral(x.Value(i)), nil
	case *array.Binary:
		return iceberg.NewLiteral(append([]byte(nil), x.Value(i)...)), nil
	case *array.Date32:
		return iceberg.NewLiteral(iceberg.Date(x.Value(i))), nil
	case *array.Time64:
		return iceberg.NewLiteral(iceberg.Time(x.Value(i))), nil
	case *array.Timestamp:
		return iceberg.NewLiteral(iceberg.Timestamp(x.Value(i))), nil
	case *array.Decimal128:
		dt := x.DataType().(*arrow.Decimal128Type)
		return iceberg.NewLiteral(iceberg.Decimal{Val: decimal128.Num(x.Value(i)), Scale: int(dt.Scale)}), nil
	case *array.FixedSizeBinary:
		if _, ok := srcType.(iceberg.UUIDType); ok {
			u, err := uuid.FromBytes(x.Value(i))
			if err != nil {
				return nil, err
			}
			return iceberg.NewLiteral(u), nil
		}
		return iceberg.NewLiteral(append([]byte(nil), x.Value(i)...)), nil
	}
	if u, ok := col.(interface{ Value(int) uuid.UUID }); ok {
		return iceberg.NewLiteral(u.Value(i)), nil
	}
	return nil, fmt.Errorf("a %s column cannot be partitioned", col.DataType())
}

// appendKeyValue appends a partition value's grouping key (type-tagged,
// so values of different fields never collide).
func appendKeyValue(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, 'n', 0)
	case int32:
		b = append(b, 'i')
		return append(strconv.AppendInt(b, int64(x), 10), 0)
	case int64:
		b = append(b, 'l')
		return append(strconv.AppendInt(b, x, 10), 0)
	case iceberg.Date:
		b = append(b, 'd')
		return append(strconv.AppendInt(b, int64(x), 10), 0)
	case string:
		b = append(b, 's')
		b = strconv.AppendInt(b, int64(len(x)), 10)
		b = append(b, ':')
		return append(append(b, x...), 0)
	case []byte:
		b = append(b, 'b')
		b = strconv.AppendInt(b, int64(len(x)), 10)
		b = append(b, ':')
		return append(append(b, x...), 0)
	case bool:
		if x {
			return append(b, 't', 0)
		}
		return append(b, 'f', 0)
	case float32:
		b = append(b, 'F')
		return append(strconv.AppendUint(b, uint64(math.Float32bits(x)), 16), 0)
	case float64:
		b = append(b, 'D')
		return append(strconv.AppendUint(b, math.Float64bits(x), 16), 0)
	}
	return append(append(b, 'x'), fmt.Sprintf("%T:%v", v, v)+"\x00"...)
}

// NewPath is a fresh data-file location in the partition's directory:
// data/<field>=<value>/.../<prefix>-<uuid>.parquet (Iceberg's partition
// path, PartitionSpec.PartitionToPath).
func (l *RecordLayout) NewPath(tbl *table.Table, prefix string, values map[int]any) (string, error) {
	if len(l.parts) == 0 {
		return parquetio.NewFilePath(tbl, prefix)
	}
	return parquetio.NewFilePath(tbl, partitionPath(&l.Spec, tbl.Schema(), values)+"/"+prefix)
}

// partitionPath is the directory of a partition's files relative to the
// table's data directory.
func partitionPath(spec *iceberg.PartitionSpec, sc *iceberg.Schema, values map[int]any) string {
	rec := make(partitionStruct, spec.NumFields())
	for i := range spec.NumFields() {
		rec[i] = values[spec.Field(i).FieldID]
	}
	return spec.PartitionToPath(rec, sc)
}

// partitionStruct is partition values in spec field order, as
// iceberg.StructLike.
type partitionStruct []any

func (p partitionStruct) Size() int            { return len(p) }
func (p partitionStruct) Get(pos int) any      { return p[pos] }
func (p partitionStruct) Set(pos int, val any) { p[pos] = val }
