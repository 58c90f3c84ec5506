package tableread

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/parquetio"
)

// Row is one table row read back for display and tests: column name →
// JSON-ready value. Decimals are strings with their scale ("25.50"),
// timestamps RFC 3339 strings with microseconds in UTC, dates
// "2006-01-02", times "15:04:05.000000", binary is UTF-8 text when valid,
// else base64; UUIDs canonical text.
type Row map[string]any

// ReadRows scans the table's current Iceberg snapshot (position deletes
// applied) and returns its rows sorted by sortCols (compared as encoded
// keys: numbers numerically, text bytewise), and the column order.
func ReadRows(ctx context.Context, tbl *table.Table, sortCols []string) ([]Row, []string, error) {
	sc, it, err := tbl.Scan().ToArrowRecords(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("lake: scan %s: %w", lakecat.IdentString(tbl.Identifier()), err)
	}
	cols := make([]string, sc.NumFields())
	for i, f := range sc.Fields() {
		cols[i] = f.Name
	}
	type keyed struct {
		key string
		row Row
	}
	var rows []keyed
	var buf []byte
	for rec, err := range it {
		if err != nil {
			return nil, nil, fmt.Errorf("lake: scan %s: %w", lakecat.IdentString(tbl.Identifier()), err)
		}
		for r := 0; r < int(rec.NumRows()); r++ {
			row := Row{}
			buf = buf[:0]
			for c := 0; c < int(rec.NumCols()); c++ {
				row[cols[c]] = jsonValue(rec.Column(c), r)
			}
			for _, k := range sortCols {
				idx := sc.FieldIndices(k)
				if len(idx) == 0 {
					continue
				}
				v, err := parquetio.ValueAt(rec.Column(idx[0]), r)
				if err != nil {
					v = cdc.String(fmt.Sprint(row[k]))
				}
				buf, _ = cdc.EncodeKey(buf, v)
			}
			rows = append(rows, keyed{key: string(buf), row: row})
		}
		rec.Release()
	}
	slices.SortStableFunc(rows, func(a, b keyed) int {
		switch {
		case a.key < b.key:
			return -1
		case a.key > b.key:
			return 1
		}
		return 0
	})
	out := make([]Row, len(rows))
	for i, k := range rows {
		out[i] = k.row
	}
	return out, cols, nil
}

// WriteJSONLines writes rows as JSON objects, one per line, with keys in
// column order.
func WriteJSONLines(w io.Writer, rows []Row, cols []string) error {
	var line []byte
	for _, r := range rows {
		line = append(line[:0], '{')
		first := true
		for _, c := range cols {
			v, ok := r[c]
			if !ok {
				continue
			}
			if !first {
				line = append(line, ',')
			}
			first = false
			line = strconv.AppendQuote(line, c)
			line = append(line, ':')
			b, err := json.Marshal(v)
			if err != nil {
				return err
			}
			line = append(line, b...)
		}
		line = append(line, '}', '\n')
		if _, err := w.Write(line); err != nil {
			return err
		}
	}
	return nil
}

// jsonValue renders row i of arr as described on Row.
func jsonValue(arr arrow.Array, i int) any {
	if arr.IsNull(i) {
		return nil
	}
	switch a := arr.(type) {
	case *array.Decimal128:
		v, _ := parquetio.ValueAt(a, i)
		return v.DecimalText()
	case *array.Timestamp:
		return time.UnixMicro(int64(a.Value(i))).UTC().Format("2006-01-02T15:04:05.000000Z07:00")
	case *array.Date32:
		return a.Value(i).ToTime().Format("2006-01-02")
	case *array.Time64:
		us := int64(a.Value(i))
		return time.UnixMicro(us).UTC().Format("15:04:05.000000")
	case *array.Binary:
		return binaryText(a.Value(i))
	case *array.FixedSizeBinary:
		return binaryText(a.Value(i))
	case *array.List:
		start, end := a.ValueOffsets(i)
		vals := a.ListValues()
		out := make([]any, 0, end-start)
		for j := int(start); j < int(end); j++ {
			out = append(out, jsonValue(vals, j))
		}
		return out
	case *array.Struct:
		st := a.DataType().(*arrow.StructType)
		m := map[string]any{}
		for f := 0; f < a.NumField(); f++ {
			m[st.Field(f).Name] = jsonValue(a.Field(f), i)
		}
		return m
	}
	if u, ok := arr.(interface{ Value(int) uuid.UUID }); ok {
		return u.Value(i).String()
	}
	if g, ok := arr.(interface{ GetOneForMarshal(int) any }); ok {
		return g.GetOneForMarshal(i)
	}
	return arr.ValueStr(i)
}

func binaryText(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return base64.StdEncoding.EncodeToString(b)
}
