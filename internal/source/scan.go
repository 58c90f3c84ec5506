package source

import (
	"fmt"
	"math"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// Decoding of result values into cdc.Values. Every column is scanned
// into a pgtype holder (pgtype.Array of holders for arrays) and converted
// exactly: integers as int64, floats as their float32/float64 bits,
// numerics from pgtype.Numeric (numeric.go), temporal values to days or
// µs (pgx reads them at µs precision), text as UTF-8.

// cell is the scan target of one result column and its conversion.
type cell interface {
	dest() any                 // the pointer rows.Scan fills
	value() (cdc.Value, error) // the scanned value as a cdc.Value
}

// conv converts one scanned holder (a column value, or an element).
type conv[T any] func(*T) (cdc.Value, error)

// one is a scalar column.
type one[T any] struct {
	v T
	f conv[T]
}

func (c *one[T]) dest() any                 { return &c.v }
func (c *one[T]) value() (cdc.Value, error) { return c.f(&c.v) }

// many is a one-dimensional array column: a cdc list of its elements
// (NULL elements are kept).
type many[T any] struct {
	v pgtype.Array[T]
	f conv[T]
}

func (c *many[T]) dest() any { return &c.v }

func (c *many[T]) value() (cdc.Value, error) {
	if !c.v.Valid {
		return cdc.Null(), nil
	}
	if len(c.v.Dims) > 1 {
		return cdc.Value{}, definition("a %d-dimensional array (only one-dimensional arrays are supported)", len(c.v.Dims))
	}
	var enc []byte
	for i := range c.v.Elements {
		e, err := c.f(&c.v.Elements[i])
		if err != nil {
			return cdc.Value{}, fmt.Errorf("element %d: %w", i+1, err)
		}
		enc = cdc.AppendListElem(enc, e, nil)
	}
	return cdc.ListFromEncoding(string(enc))
}

func newCellOf[T any](array bool, f conv[T]) cell {
	if array {
		return &many[T]{f: f}
	}
	return &one[T]{f: f}
}

// newCell returns the scan target for column ci (read as ci.Read).
func newCell(ci *ColumnInfo) (cell, error) {
	switch ci.Read {
	case "bool":
		return newCellOf(ci.Array, func(v *pgtype.Bool) (cdc.Value, error) {
			if !v.Valid {
				return cdc.Null(), nil
			}
			return cdc.Bool(v.Bool), nil
		}), nil
	case "int2", "int4", "int8":
		return newCellOf(ci.Array, func(v *pgtype.Int8) (cdc.Value, error) {
			if !v.Valid {
				return cdc.Null(), nil
			}
			return cdc.Int(v.Int64), nil
		}), nil
	case "float4":
		return newCellOf(ci.Array, func(v *pgtype.Float4) (cdc.Value, error) {
			if !v.Valid {
				return cdc.Null(), nil
			}
			return floatValue(float64(v.Float32)), nil
		}), nil
	case "float8":
		return newCellOf(ci.Array, func(v *pgtype.Float8) (cdc.Value, error) {
			if !v.Valid {
				return cdc.Null(), nil
			}
			return floatValue(v.Float64), nil
		}), nil
	case "numeric":
		return newCellOf(ci.Array, func(v *pgtype.Numeric) (cdc.Value, error) { return numericValue(ci, v) }), nil
	case "text", "varchar", "bpchar":
		return newCellOf(ci.Array, func(v *pgtype.Text) (cdc.Value, error) {
			if !v.Valid {
				return cdc.Null(), nil
			}
			if !utf8.ValidString(v.String) {
				return cdc.Value{}, definition("text is not valid UTF-8 (the database encoding must be UTF8)")
			}
			return cdc.String(v.String), nil
		}), nil
	case "bytea":
		return newCellOf(ci.Array, func(v *bytea) (cdc.Value, error) {
			if !v.valid {
				return cdc.Null(), nil
			}
			return cdc.Bytes(v.b), nil
		}), nil
	case "uuid":
		return newCellOf(ci.Array, func(v *pgtype.UUID) (cdc.Value, error) {
			if !v.Valid {
				return cdc.Null(), nil
			}
			return cdc.Value{Kind: cdc.KindUUID, S: string(v.Bytes[:])}, nil
		}), nil
	case "date":
		return newCellOf(ci.Array, func(v *pgtype.Date) (cdc.Value, error) {
			if !v.Valid {
				return cdc.Null(), nil
			}
			if v.InfinityModifier != pgtype.Finite {
				return cdc.Value{}, definition("date ±infinity has no Debezium io.debezium.time.Date form")
			}
			return cdc.Date(floorDiv(v.Time.Unix(), 86400)), nil
		}), nil
	case "time":
		return newCellOf(ci.Array, func(v *pgtype.Time) (cdc.Value, error) {
			if !v.Valid {
				return cdc.Null(), nil
			}
			return cdc.Time(v.Microseconds), nil
		}), nil
	case "timestamp":
		return newCellOf(ci.Array, func(v *pgtype.Timestamp) (cdc.Value, error) {
			if !v.Valid {
				return cdc.Null(), nil
			}
			if v.InfinityModifier != pgtype.Finite {
				return cdc.Value{}, definition("timestamp ±infinity is not supported")
			}
			us, err := micros(v.Time)
			return cdc.Timestamp(us), err
		}), nil
	case "timestamptz":
		return newCellOf(ci.Array, func(v *pgtype.Timestamptz) (cdc.Value, error) {
			if !v.Valid {
				return cdc.Null(), nil
			}
			if v.InfinityModifier != pgtype.Finite {
				return cdc.Value{}, definition("timestamptz ±infinity is not supported")
			}
			us, err := micros(v.Time)
			return cdc.TimestampTZ(us), err
		}), nil
	}
	return nil, fmt.Errorf("source: column %q: cannot read type %q", ci.Name, ci.Read)
}

// bytea is a bytea holder that tells NULL (nil) from empty.
type bytea struct {
	b     []byte
	valid bool
}

// ScanBytes implements pgtype.BytesScanner; v is driver memory, copied.
func (h *bytea) ScanBytes(v []byte) error {
	h.valid = v != nil
	h.b = append([]byte{}, v...)
	return nil
}

// floatValue is cdc.Float with every NaN as math.NaN(), the NaN the
// schemas decoder produces, so equal values have equal bits.
func floatValue(f float64) cdc.Value {
	if math.IsNaN(f) {
		return cdc.Float(math.NaN())
	}
	return cdc.Float(f)
}

// micros is t as µs since the epoch (t has µs precision: pgx builds it
// from PostgreSQL's µs count). PostgreSQL's timestamps reach the year
// 294276, µs in an int64 (Debezium's MicroTimestamp, Iceberg's
// timestamp) only 294247: a later t (or one within a second of the int64
// minimum, far before PostgreSQL's 4713 BC) is an error (ErrDefinition),
// never a wrapped value.
func micros(t time.Time) (int64, error) {
	const lim = math.MaxInt64 / 1_000_000
	s, frac := t.Unix(), int64(t.Nanosecond()/1000)
	if s > lim || s < -lim || s*1_000_000 > math.MaxInt64-frac {
		return 0, definition("%s is outside the range of µs since 1970 in 64 bits (years 290308 BC to 294247 AD) that Debezium and Iceberg timestamps hold", t.Format("2006-01-02 15:04:05.999999Z07:00"))
	}
	return s*1_000_000 + frac, nil
}

// floorDiv divides rounding toward negative infinity.
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}
