package cdc

import "fmt"

// Type is a column's logical type.
type Type struct {
	Kind      Kind
	Bits      uint8 // KindInt: 32 (Iceberg int) or 64 (long); KindFloat: 32 (float) or 64 (double)
	Precision int16 // KindDecimal: total digits (1..38 in Iceberg)
	Scale     int16 // KindDecimal: digits after the point
}

// Column is one source column of a table: its name, type, nullability and
// the source type it came from (a Kafka Connect type or logical name such
// as "int32" or "org.apache.kafka.connect.data.Decimal", or "json:number"
// when inferred from values).
type Column struct {
	Name     string
	Type     Type
	Optional bool
	Source   string
}

// String renders the type the way Iceberg names it, e.g. "long",
// "decimal(10,2)", "timestamptz".
func (t Type) String() string {
	switch t.Kind {
	case KindBool:
		return "boolean"
	case KindInt:
		if t.Bits == 32 {
			return "int"
		}
		return "long"
	case KindFloat:
		if t.Bits == 32 {
			return "float"
		}
		return "double"
	case KindString:
		return "string"
	case KindBytes:
		return "binary"
	case KindDecimal:
		return fmt.Sprintf("decimal(%d,%d)", t.Precision, t.Scale)
	case KindDate:
		return "date"
	case KindTime:
		return "time"
	case KindTimestamp:
		return "timestamp"
	case KindTimestampTZ:
		return "timestamptz"
	case KindUUID:
		return "uuid"
	}
	return fmt.Sprintf("kind(%d)", t.Kind)
}

// Common types.
var (
	TypeBool        = Type{Kind: KindBool}
	TypeInt         = Type{Kind: KindInt, Bits: 32}
	TypeLong        = Type{Kind: KindInt, Bits: 64}
	TypeFloat       = Type{Kind: KindFloat, Bits: 32}
	TypeDouble      = Type{Kind: KindFloat, Bits: 64}
	TypeString      = Type{Kind: KindString}
	TypeBinary      = Type{Kind: KindBytes}
	TypeDate        = Type{Kind: KindDate}
	TypeTime        = Type{Kind: KindTime}
	TypeTimestamp   = Type{Kind: KindTimestamp}
	TypeTimestampTZ = Type{Kind: KindTimestampTZ}
	TypeUUID        = Type{Kind: KindUUID}
)

// DecimalType returns decimal(precision, scale).
func DecimalType(precision, scale int16) Type {
	return Type{Kind: KindDecimal, Precision: precision, Scale: scale}
}
