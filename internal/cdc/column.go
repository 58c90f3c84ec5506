package cdc

import "fmt"

// Type is a column's logical type.
//
// A list type (Kind KindList, Iceberg list<element>) names its element's
// kind in Elem and describes the element with Bits, Precision and Scale,
// so that Type stays a small comparable value; see ListType. Elements
// are primitive (lists of lists or structs are not modelled: the decoder
// renders such columns as JSON text).
type Type struct {
	Kind      Kind
	Bits      uint8 // KindInt: 32 (Iceberg int) or 64 (long); KindFloat: 32 (float) or 64 (double)
	Precision int16 // KindDecimal: total digits (1..38 in Iceberg)
	Scale     int16 // KindDecimal: digits after the point
	Elem      Kind  // KindList only: the element kind (Bits, Precision, Scale then describe the element)
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
	case KindList:
		return "list<" + t.ElemType().String() + ">"
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

// ListType returns list<elem> (Iceberg spec, "Nested Types": list). elem
// must be a primitive type; a list of lists is not representable and
// yields list<string> (the decoder renders nested arrays as JSON text).
func ListType(elem Type) Type {
	if elem.Kind == KindList || elem.Kind == KindNull || elem.Kind == KindUnavailable {
		elem = TypeString
	}
	return Type{Kind: KindList, Elem: elem.Kind, Bits: elem.Bits, Precision: elem.Precision, Scale: elem.Scale}
}

// ElemType returns the element type of a list type (the zero Type for
// other kinds).
func (t Type) ElemType() Type {
	if t.Kind != KindList {
		return Type{}
	}
	return Type{Kind: t.Elem, Bits: t.Bits, Precision: t.Precision, Scale: t.Scale}
}
