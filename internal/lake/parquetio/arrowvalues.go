package parquetio

import (
	"fmt"
	"math/big"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/google/uuid"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// AppendValue appends v, already of column type t's kind, to builder b.
// It returns an error when v's kind does not match the builder.
func AppendValue(b array.Builder, v cdc.Value) error {
	if v.Kind == cdc.KindNull {
		b.AppendNull()
		return nil
	}
	switch b := b.(type) {
	case *array.BooleanBuilder:
		if v.Kind == cdc.KindBool {
			b.Append(v.I != 0)
			return nil
		}
	case *array.Int32Builder:
		if v.Kind == cdc.KindInt {
			if v.I < -1<<31 || v.I > 1<<31-1 {
				return fmt.Errorf("value %d does not fit a 32-bit int column", v.I)
			}
			b.Append(int32(v.I))
			return nil
		}
	case *array.Int64Builder:
		if v.Kind == cdc.KindInt {
			b.Append(v.I)
			return nil
		}
	case *array.Float32Builder:
		if v.Kind == cdc.KindFloat {
			b.Append(float32(v.Float64()))
			return nil
		}
	case *array.Float64Builder:
		if v.Kind == cdc.KindFloat {
			b.Append(v.Float64())
			return nil
		}
	case *array.StringBuilder:
		if v.Kind == cdc.KindString {
			b.Append(v.S)
			return nil
		}
	case *array.BinaryBuilder:
		if v.Kind == cdc.KindBytes || v.Kind == cdc.KindUUID {
			b.Append([]byte(v.S))
			return nil
		}
	case *array.Decimal128Builder:
		if v.Kind == cdc.KindDecimal {
			dt := b.Type().(*arrow.Decimal128Type)
			if int32(v.Scale) != dt.Scale {
				return fmt.Errorf("decimal scale %d does not match column scale %d", v.Scale, dt.Scale)
			}
			n, err := decimalNum(v)
			if err != nil {
				return err
			}
			if !n.FitsInPrecision(dt.Precision) {
				return fmt.Errorf("decimal %s does not fit precision %d", v.DecimalText(), dt.Precision)
			}
			b.Append(n)
			return nil
		}
	case *array.Date32Builder:
		if v.Kind == cdc.KindDate {
			b.Append(arrow.Date32(v.I))
			return nil
		}
	case *array.Time64Builder:
		if v.Kind == cdc.KindTime {
			b.Append(arrow.Time64(v.I))
			return nil
		}
	case *array.TimestampBuilder:
		tz := b.Type().(*arrow.TimestampType).TimeZone != ""
		if (v.Kind == cdc.KindTimestampTZ && tz) || (v.Kind == cdc.KindTimestamp && !tz) {
			b.Append(arrow.Timestamp(v.I))
			return nil
		}
	case *extensions.UUIDBuilder:
		if v.Kind == cdc.KindUUID && len(v.S) == 16 {
			var u uuid.UUID
			copy(u[:], v.S)
			b.Append(u)
			return nil
		}
	case *array.FixedSizeBinaryBuilder:
		if v.Kind == cdc.KindUUID || v.Kind == cdc.KindBytes {
			b.Append([]byte(v.S))
			return nil
		}
	case *array.ListBuilder:
		if v.Kind == cdc.KindList {
			elems := v.Elems()
			if elems == nil && v.S != "" {
				return fmt.Errorf("a malformed list value")
			}
			b.Append(true)
			vb := b.ValueBuilder()
			for i, e := range elems {
				if err := AppendValue(vb, e); err != nil {
					return fmt.Errorf("list element %d: %w", i, err)
				}
			}
			return nil
		}
	}
	return fmt.Errorf("a %s value does not fit a %s column", kindName(v.Kind), b.Type())
}

func decimalNum(v cdc.Value) (decimal128.Num, error) {
	if v.S == "" {
		return decimal128.FromI64(v.I), nil
	}
	var bi big.Int
	if _, ok := bi.SetString(v.S, 10); !ok {
		return decimal128.Num{}, fmt.Errorf("decimal unscaled text %q is not an integer", v.S)
	}
	if bi.BitLen() > 127 {
		return decimal128.Num{}, fmt.Errorf("decimal %s exceeds 128 bits", v.S)
	}
	return decimal128.FromBigInt(&bi), nil
}

// ValueAt reads row i of arr back into a cdc.Value of the column's kind;
// the inverse of AppendValue.
func ValueAt(arr arrow.Array, i int) (cdc.Value, error) {
	if arr.IsNull(i) {
		return cdc.Null(), nil
	}
	switch a := arr.(type) {
	case *array.Boolean:
		return cdc.Bool(a.Value(i)), nil
	case *array.Int32:
		return cdc.Int(int64(a.Value(i))), nil
	case *array.Int64:
		return cdc.Int(a.Value(i)), nil
	case *array.Float32:
		return cdc.Float(float64(a.Value(i))), nil
	case *array.Float64:
		return cdc.Float(a.Value(i)), nil
	case *array.String:
		return cdc.String(a.Value(i)), nil
	case *array.LargeString:
		return cdc.String(a.Value(i)), nil
	case *array.Binary:
		return cdc.Bytes(append([]byte(nil), a.Value(i)...)), nil
	case *array.LargeBinary:
		return cdc.Bytes(append([]byte(nil), a.Value(i)...)), nil
	case *array.Decimal128:
		dt := a.DataType().(*arrow.Decimal128Type)
		n := a.Value(i)
		if n.FitsInPrecision(18) {
			return cdc.Decimal(int64(n.LowBits()), int16(dt.Scale)), nil
		}
		return cdc.BigDecimal(n.BigInt().String(), int16(dt.Scale)), nil
	case *array.Date32:
		return cdc.Date(int64(a.Value(i))), nil
	case *array.Time64:
		return cdc.Time(int64(a.Value(i))), nil
	case *array.Timestamp:
		if a.DataType().(*arrow.TimestampType).TimeZone != "" {
			return cdc.TimestampTZ(int64(a.Value(i))), nil
		}
		return cdc.Timestamp(int64(a.Value(i))), nil
	case *extensions.UUIDArray:
		u := a.Value(i)
		return cdc.Value{Kind: cdc.KindUUID, S: string(u[:])}, nil
	case *array.FixedSizeBinary:
		return cdc.Value{Kind: cdc.KindUUID, S: string(a.Value(i))}, nil
	case *array.List:
		start, end := a.ValueOffsets(i)
		vals := a.ListValues()
		elems := make([]cdc.Value, 0, end-start)
		for j := int(start); j < int(end); j++ {
			e, err := ValueAt(vals, j)
			if err != nil {
				return cdc.Value{}, err
			}
			elems = append(elems, e)
		}
		return cdc.List(elems...), nil
	}
	return cdc.Value{}, fmt.Errorf("lake: cannot read a %s column", arr.DataType())
}

func kindName(k cdc.Kind) string {
	switch k {
	case cdc.KindNull:
		return "null"
	case cdc.KindBool:
		return "boolean"
	case cdc.KindInt:
		return "integer"
	case cdc.KindFloat:
		return "floating-point"
	case cdc.KindString:
		return "string"
	case cdc.KindBytes:
		return "bytes"
	case cdc.KindDecimal:
		return "decimal"
	case cdc.KindDate:
		return "date"
	case cdc.KindTime:
		return "time"
	case cdc.KindTimestamp:
		return "timestamp"
	case cdc.KindTimestampTZ:
		return "timestamptz"
	case cdc.KindUUID:
		return "uuid"
	case cdc.KindUnavailable:
		return "unavailable (TOAST placeholder)"
	case cdc.KindList:
		return "list"
	}
	return fmt.Sprintf("kind %d", k)
}
