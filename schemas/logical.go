package schemas

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/valyala/fastjson"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/cdc/typing"
)

// The mapping of Kafka Connect types and Connect/Debezium logical types
// (Kafka Connect's org.apache.kafka.connect.data.*, and the "Data types"
// tables of the Debezium PostgreSQL, MySQL, SQL Server and Oracle
// connector docs) to column types and value decoders. It is shared by the
// JSON schema envelope, Avro schemas (connect.name, connect.parameters)
// and declared columns.

// params is a Connect schema's "parameters" map, as JSON (JsonConverter)
// or as Avro's "connect.parameters" property.
type params interface {
	// get returns the parameter's text; ok is false when it is absent.
	get(name string) (text string, ok bool, err error)
}

type jsonParams struct{ v *fastjson.Value }

func (p jsonParams) get(name string) (string, bool, error) {
	if p.v == nil {
		return "", false, nil
	}
	v := p.v.Get(name)
	if isNull(v) {
		return "", false, nil
	}
	switch v.Type() {
	case fastjson.TypeString:
		b, _ := v.StringBytes()
		return string(b), true, nil
	case fastjson.TypeNumber:
		return string(v.MarshalTo(nil)), true, nil
	}
	return "", false, fmt.Errorf("parameter %q: want a string, got %s", name, jsonTypeName(v))
}

// mapParams are Avro "connect.parameters" (string values; numbers are
// accepted).
type mapParams map[string]any

func (p mapParams) get(name string) (string, bool, error) {
	v, ok := p[name]
	if !ok || v == nil {
		return "", false, nil
	}
	switch x := v.(type) {
	case string:
		return x, true, nil
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true, nil
	case int:
		return strconv.Itoa(x), true, nil
	case int64:
		return strconv.FormatInt(x, 10), true, nil
	}
	return "", false, fmt.Errorf("parameter %q: want a string, got %T", name, v)
}

// intParam reads an integer Connect schema parameter; JsonConverter writes
// parameter values as strings ("scale":"4"), but numbers are accepted.
func intParam(p params, name string, def int) (int, error) {
	if p == nil {
		return def, nil
	}
	text, ok, err := p.get(name)
	if err != nil || !ok {
		return def, err
	}
	n, err := strconv.Atoi(text)
	if err != nil {
		return 0, fmt.Errorf("parameter %q: %q is not an integer", name, text)
	}
	return n, nil
}

// connectType fills fs.dec, fs.typ, fs.source (and ranges, scale) from a
// Connect physical type and optional logical name. A logical name this
// package does not know, or whose physical type is not the expected one,
// falls back to the physical type; the name is kept in Source.
func connectType(fs *fieldSpec, typ, logical string, p params) error {
	fs.source = typ
	if logical != "" {
		fs.source = logical
		if ok, err := connectLogical(fs, typ, logical, p); ok || err != nil {
			return err
		}
	}
	switch typ {
	case "int8":
		fs.dec, fs.typ, fs.min, fs.max = decInt, cdc.TypeInt, math.MinInt8, math.MaxInt8
	case "int16":
		fs.dec, fs.typ, fs.min, fs.max = decInt, cdc.TypeInt, math.MinInt16, math.MaxInt16
	case "int32":
		fs.dec, fs.typ, fs.min, fs.max = decInt, cdc.TypeInt, math.MinInt32, math.MaxInt32
	case "int64":
		fs.dec, fs.typ, fs.min, fs.max = decInt, cdc.TypeLong, math.MinInt64, math.MaxInt64
	case "float", "float32": // JsonConverter writes FLOAT32 as "float"
		fs.dec, fs.typ = decFloat32, cdc.TypeFloat
	case "double", "float64": // and FLOAT64 as "double"
		fs.dec, fs.typ = decFloat64, cdc.TypeDouble
	case "boolean":
		fs.dec, fs.typ = decBool, cdc.TypeBool
	case "string":
		fs.dec, fs.typ = decString, cdc.TypeString
	case "bytes":
		fs.dec, fs.typ = decBytes, cdc.TypeBinary
	case "struct", "array", "map":
		fs.dec, fs.typ = decJSONText, cdc.TypeString
	case "":
		return errors.New(`field schema without a "type"`)
	default:
		return fmt.Errorf("unknown Connect type %q", typ)
	}
	return nil
}

// connectLogical handles the logical types listed in the package doc. ok
// is false when the logical name is unknown or its physical type is not
// the one the logical type is defined on.
func connectLogical(fs *fieldSpec, typ, logical string, p params) (ok bool, err error) {
	want := func(physical ...string) bool {
		for _, ph := range physical {
			if typ == ph {
				return true
			}
		}
		return false
	}
	switch logical {
	case logicalDecimal:
		if !want("bytes") {
			return false, nil
		}
		scale, err := intParam(p, "scale", -1)
		if err != nil {
			return false, err
		}
		if scale < 0 {
			return false, errors.New(`a Decimal without a "scale" parameter`)
		}
		prec, err := intParam(p, "connect.decimal.precision", defaultDecimalPrecision)
		if err != nil {
			return false, err
		}
		if scale > math.MaxInt16 || prec > typing.MaxDecimalDigits || prec <= 0 {
			return false, fmt.Errorf("a Decimal's precision %d / scale %d out of range", prec, scale)
		}
		setDecimal(fs, prec, scale)
	case logicalDate, logicalConnectDate:
		if !want("int32") {
			return false, nil
		}
		fs.dec, fs.typ, fs.min, fs.max = decDate, cdc.TypeDate, math.MinInt32, math.MaxInt32
	case logicalTime, logicalConnectTime:
		if !want("int32") {
			return false, nil
		}
		fs.dec, fs.typ = decTimeMs, cdc.TypeTime
	case logicalMicroTime:
		if !want("int64") {
			return false, nil
		}
		fs.dec, fs.typ = decTimeUs, cdc.TypeTime
	case logicalNanoTime:
		if !want("int64") {
			return false, nil
		}
		fs.dec, fs.typ = decTimeNs, cdc.TypeTime
	case logicalTimestamp, logicalConnectTs:
		if !want("int64") {
			return false, nil
		}
		fs.dec, fs.typ = decTsMs, cdc.TypeTimestamp
	case logicalMicroTimestamp:
		if !want("int64") {
			return false, nil
		}
		fs.dec, fs.typ = decTsUs, cdc.TypeTimestamp
	case logicalNanoTimestamp:
		if !want("int64") {
			return false, nil
		}
		fs.dec, fs.typ = decTsNs, cdc.TypeTimestamp
	case logicalZonedTimestamp:
		if !want("string") {
			return false, nil
		}
		fs.dec, fs.typ = decZonedTs, cdc.TypeTimestampTZ
	case logicalZonedTime:
		if !want("string") {
			return false, nil
		}
		fs.dec, fs.typ = decZonedTime, cdc.TypeTime
	case logicalJSON, logicalXML, logicalEnum, logicalEnumSet:
		if !want("string") {
			return false, nil
		}
		fs.dec, fs.typ = decString, cdc.TypeString
	case logicalUUID:
		if !want("string") {
			return false, nil
		}
		fs.dec, fs.typ = decUUID, cdc.TypeUUID
	case logicalVarDecimal:
		if !want("struct") {
			return false, nil
		}
		fs.dec, fs.typ, fs.asText = decVarDecimal, cdc.TypeString, true
	case logicalGeometry, logicalGeography, logicalPoint:
		if !want("struct") {
			return false, nil
		}
		fs.dec, fs.typ = decGeometry, cdc.TypeBinary
	case logicalBits:
		if !want("bytes") {
			return false, nil
		}
		fs.dec, fs.typ, fs.bits = decBytes, cdc.TypeBinary, true
	default:
		return false, nil
	}
	return true, nil
}

// setDecimal makes fs a decimal(prec, scale) column, or, beyond Iceberg's
// 38 digits, a string column holding the exact decimal text.
func setDecimal(fs *fieldSpec, prec, scale int) {
	fs.dec, fs.scale, fs.prec = decDecimal, scale, prec
	if prec > maxIcebergDecimalPrecision || scale > prec {
		fs.typ, fs.asText = cdc.TypeString, true
		return
	}
	fs.typ, fs.asText = cdc.DecimalType(int16(prec), int16(scale)), false
}

// makeList turns an array column into list<elem> when its elements are
// primitive (or decode to a primitive: decimals, times, geometry); arrays
// of structs, maps or arrays stay JSON text.
func makeList(fs *fieldSpec, elem fieldSpec) {
	switch elem.dec {
	case decInfer, decJSONText, decList:
		return
	}
	e := elem
	fs.dec, fs.elem, fs.typ = decList, &e, cdc.ListType(elem.typ)
}
