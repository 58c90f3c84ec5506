package schemas

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/valyala/fastjson"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// Kafka Connect schema handling: the "schema" half of the JsonConverter
// envelope (schemas.enable=true) and the mapping of Connect types and
// logical types (Kafka Connect, and Debezium's "Data types" tables of the
// PostgreSQL and MySQL connector docs) to column types and value decoders.

// Connect logical type names the decoder knows.
const (
	logicalDecimal        = "org.apache.kafka.connect.data.Decimal"
	logicalConnectDate    = "org.apache.kafka.connect.data.Date"
	logicalConnectTime    = "org.apache.kafka.connect.data.Time"
	logicalConnectTs      = "org.apache.kafka.connect.data.Timestamp"
	logicalDate           = "io.debezium.time.Date"
	logicalTime           = "io.debezium.time.Time"
	logicalMicroTime      = "io.debezium.time.MicroTime"
	logicalNanoTime       = "io.debezium.time.NanoTime"
	logicalTimestamp      = "io.debezium.time.Timestamp"
	logicalMicroTimestamp = "io.debezium.time.MicroTimestamp"
	logicalNanoTimestamp  = "io.debezium.time.NanoTimestamp"
	logicalZonedTimestamp = "io.debezium.time.ZonedTimestamp"
	logicalJSON           = "io.debezium.data.Json"
	logicalXML            = "io.debezium.data.Xml"
	logicalEnum           = "io.debezium.data.Enum"
	logicalEnumSet        = "io.debezium.data.EnumSet"
	logicalUUID           = "io.debezium.data.Uuid"
)

// defaultDecimalPrecision is the precision of a Connect Decimal whose
// schema has no "connect.decimal.precision" parameter (Iceberg's maximum).
const defaultDecimalPrecision = 38

// decKind says how a JSON value is turned into a cdc.Value.
type decKind uint8

const (
	decInfer    decKind = iota // no type known: the JSON token decides (see InferColumns)
	decBool                    // JSON true/false
	decInt                     // JSON integer within [min, max]
	decFloat64                 // JSON number (or "NaN"/"Infinity"/"-Infinity")
	decFloat32                 // same, rounded to the nearest float32
	decString                  // JSON string
	decBytes                   // base64 JSON string
	decDecimal                 // base64 unscaled bytes, or a plain JSON number (decimal.format=NUMERIC)
	decDate                    // int days since the epoch
	decTimeMs                  // int ms since midnight
	decTimeUs                  // int µs since midnight
	decTimeNs                  // int ns since midnight
	decTsMs                    // int ms since the epoch
	decTsUs                    // int µs since the epoch
	decTsNs                    // int ns since the epoch
	decZonedTs                 // ISO-8601 string with offset
	decUUID                    // canonical UUID string
	decJSONText                // struct, array or map: compact JSON text
)

// fieldSpec is how one column is decoded and what it is.
type fieldSpec struct {
	name     string
	dec      decKind
	typ      cdc.Type
	min, max int64 // decInt range (from the Connect type: int8..int64)
	scale    int   // decDecimal scale
	prec     int   // decDecimal precision (digits checked against it)
	optional bool
	source   string
	declared bool // from DecoderOptions.Columns: other JSON tokens are decoded by inference and Coerced
}

func (f *fieldSpec) column() cdc.Column {
	return cdc.Column{Name: f.name, Type: f.typ, Optional: f.optional, Source: f.source}
}

// structSpec is a parsed Connect struct schema (a before/after row image
// or a Kafka key): its fields, a shared *cdc.Columns and []cdc.Column.
type structSpec struct {
	fields  []fieldSpec
	cols    *cdc.Columns
	columns []cdc.Column
	index   map[string]int
}

// envSchema is a parsed JsonConverter value schema of a Debezium envelope.
type envSchema struct {
	before, after *structSpec // nil when the schema has no such field
}

// schemaCacheLimit bounds the cache of raw schema texts; a topic has a
// handful of schema versions, so hitting the limit means something odd and
// the cache is simply reset.
const schemaCacheLimit = 256

// schemaFor returns the parsed envelope schema for the raw "schema" JSON,
// parsing it only the first time those exact bytes are seen.
func (d *Decoder) schemaFor(raw []byte) (*envSchema, error) {
	if d.lastSchema != nil && string(raw) == string(d.lastSchemaRaw) {
		return d.lastSchema, nil
	}
	es, ok := d.schemaCache[string(raw)]
	if !ok {
		v, err := d.sp.ParseBytes(raw)
		if err != nil {
			return nil, fmt.Errorf("malformed JSON in schema: %v", err)
		}
		if es, err = d.parseEnvSchema(v); err != nil {
			return nil, err
		}
		if len(d.schemaCache) >= schemaCacheLimit {
			clear(d.schemaCache)
		}
		d.schemaCache[string(raw)] = es
	}
	d.lastSchemaRaw = append(d.lastSchemaRaw[:0], raw...)
	d.lastSchema = es
	return es, nil
}

func (d *Decoder) parseEnvSchema(v *fastjson.Value) (*envSchema, error) {
	if v.Type() != fastjson.TypeObject {
		return nil, fmt.Errorf("schema: want an object, got %s", jsonTypeName(v))
	}
	es := &envSchema{}
	if t := string(v.GetStringBytes("type")); t != "struct" {
		return es, nil // not an envelope struct (e.g. a primitive value schema): no images to type
	}
	fields := v.Get("fields")
	if fields == nil || fields.Type() != fastjson.TypeArray {
		return nil, errors.New("schema: struct without a fields array")
	}
	arr, _ := fields.Array()
	for _, f := range arr {
		name := string(f.GetStringBytes("field"))
		if name != "before" && name != "after" {
			continue
		}
		ss, err := d.parseStructSpec(f, "schema."+name)
		if err != nil {
			return nil, err
		}
		if name == "before" {
			es.before = ss
		} else {
			es.after = ss
		}
	}
	return es, nil
}

// parseStructSpec parses a Connect struct schema into a structSpec,
// interned by content so that equal schemas share one []cdc.Column.
func (d *Decoder) parseStructSpec(v *fastjson.Value, path string) (*structSpec, error) {
	if v.Type() != fastjson.TypeObject || string(v.GetStringBytes("type")) != "struct" {
		return nil, fmt.Errorf("%s: want a struct schema", path)
	}
	fields := v.Get("fields")
	if fields == nil || fields.Type() != fastjson.TypeArray {
		return nil, fmt.Errorf("%s: struct without a fields array", path)
	}
	arr, _ := fields.Array()
	specs := make([]fieldSpec, 0, len(arr))
	index := make(map[string]int, len(arr))
	var canon strings.Builder
	for i, f := range arr {
		fs, err := connectFieldSpec(f)
		if err != nil {
			return nil, fmt.Errorf("%s.fields[%d]: %v", path, i, err)
		}
		if _, dup := index[fs.name]; dup {
			return nil, fmt.Errorf("%s: duplicate field %q", path, fs.name)
		}
		index[fs.name] = i
		specs = append(specs, fs)
		fmt.Fprintf(&canon, "%q %d %v %d %d %d %d %t %q;", fs.name, fs.dec, fs.typ, fs.min, fs.max, fs.scale, fs.prec, fs.optional, fs.source)
	}
	key := canon.String()
	if ss, ok := d.structCanon[key]; ok {
		return ss, nil
	}
	ss := newStructSpec(specs)
	if len(d.structCanon) >= schemaCacheLimit {
		clear(d.structCanon)
	}
	d.structCanon[key] = ss
	return ss, nil
}

func newStructSpec(specs []fieldSpec) *structSpec {
	names := make([]string, len(specs))
	columns := make([]cdc.Column, len(specs))
	index := make(map[string]int, len(specs))
	for i := range specs {
		names[i] = specs[i].name
		columns[i] = specs[i].column()
		index[specs[i].name] = i
	}
	return &structSpec{fields: specs, cols: cdc.NewColumns(names), columns: columns, index: index}
}

// connectFieldSpec maps one Connect field schema
// ({"type","optional","name","parameters","field"}) to a fieldSpec.
func connectFieldSpec(f *fastjson.Value) (fieldSpec, error) {
	if f.Type() != fastjson.TypeObject {
		return fieldSpec{}, fmt.Errorf("want a field schema object, got %s", jsonTypeName(f))
	}
	fname := f.Get("field")
	if fname == nil || fname.Type() != fastjson.TypeString {
		return fieldSpec{}, errors.New(`field schema without a "field" name`)
	}
	nb, _ := fname.StringBytes()
	fs := fieldSpec{name: string(nb), optional: f.GetBool("optional")}
	typ := string(f.GetStringBytes("type"))
	logical := string(f.GetStringBytes("name"))
	if err := connectType(&fs, typ, logical, f.Get("parameters")); err != nil {
		return fieldSpec{}, fmt.Errorf("field %q: %v", fs.name, err)
	}
	return fs, nil
}

// connectType fills fs.dec, fs.typ, fs.source (and ranges, scale) from a
// Connect physical type and optional logical name. A logical name this
// package does not know, or whose physical type is not the expected one,
// falls back to the physical type; the name is kept in Source.
func connectType(fs *fieldSpec, typ, logical string, params *fastjson.Value) error {
	fs.source = typ
	if logical != "" {
		fs.source = logical
		if ok, err := connectLogical(fs, typ, logical, params); ok || err != nil {
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
func connectLogical(fs *fieldSpec, typ, logical string, params *fastjson.Value) (ok bool, err error) {
	want := func(physical ...string) bool {
		for _, p := range physical {
			if typ == p {
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
		scale, err := intParam(params, "scale", -1)
		if err != nil {
			return false, err
		}
		if scale < 0 {
			return false, errors.New(`Decimal without a "scale" parameter`)
		}
		prec, err := intParam(params, "connect.decimal.precision", defaultDecimalPrecision)
		if err != nil {
			return false, err
		}
		if scale > math.MaxInt16 || prec > math.MaxInt16 || prec <= 0 {
			return false, fmt.Errorf("Decimal precision %d / scale %d out of range", prec, scale)
		}
		fs.dec, fs.typ, fs.scale, fs.prec = decDecimal, cdc.DecimalType(int16(prec), int16(scale)), scale, prec
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
	default:
		return false, nil
	}
	return true, nil
}

// intParam reads a Connect schema parameter; JsonConverter writes
// parameter values as strings ("scale":"4"), but numbers are accepted.
func intParam(params *fastjson.Value, name string, def int) (int, error) {
	if params == nil {
		return def, nil
	}
	v := params.Get(name)
	if isNull(v) {
		return def, nil
	}
	var text []byte
	switch v.Type() {
	case fastjson.TypeString:
		text, _ = v.StringBytes()
	case fastjson.TypeNumber:
		text = v.MarshalTo(nil)
	default:
		return 0, fmt.Errorf("parameter %q: want a string, got %s", name, jsonTypeName(v))
	}
	n, err := strconv.Atoi(string(text))
	if err != nil {
		return 0, fmt.Errorf("parameter %q: %q is not an integer", name, text)
	}
	return n, nil
}

// declaredSpec is the decoder of a column declared in
// DecoderOptions.Columns. Its Source, when it is a Connect logical name of
// the same kind (e.g. io.debezium.time.Timestamp for a timestamp column),
// fixes the unit of integer encodings; otherwise integers in date, time and
// timestamp columns are days, µs since midnight and µs since the epoch.
func declaredSpec(c cdc.Column) fieldSpec {
	fs := fieldSpec{name: c.Name, typ: c.Type, optional: c.Optional, source: c.Source, declared: true}
	var hint fieldSpec
	if c.Source != "" && connectLogicalName(c.Source) {
		if ok, err := connectLogical(&hint, physicalOf(c.Source), c.Source, nil); ok && err == nil && hint.typ.Kind == c.Type.Kind {
			fs.dec = hint.dec
		}
	}
	if fs.dec == decInfer {
		switch c.Type.Kind {
		case cdc.KindBool:
			fs.dec = decBool
		case cdc.KindInt:
			fs.dec, fs.min, fs.max = decInt, math.MinInt64, math.MaxInt64
			if c.Type.Bits == 32 {
				fs.min, fs.max = math.MinInt32, math.MaxInt32
			}
		case cdc.KindFloat:
			fs.dec = decFloat64
			if c.Type.Bits == 32 {
				fs.dec = decFloat32
			}
		case cdc.KindString:
			fs.dec = decString
		case cdc.KindBytes:
			fs.dec = decBytes
		case cdc.KindDecimal:
			fs.dec = decDecimal
		case cdc.KindDate:
			fs.dec = decDate
		case cdc.KindTime:
			fs.dec = decTimeUs
		case cdc.KindTimestamp:
			fs.dec = decTsUs
		case cdc.KindTimestampTZ:
			fs.dec = decTsUs
		case cdc.KindUUID:
			fs.dec = decUUID
		}
	}
	if c.Type.Kind == cdc.KindDecimal {
		fs.scale, fs.prec = int(c.Type.Scale), int(c.Type.Precision)
	}
	if fs.dec == decDate {
		fs.min, fs.max = math.MinInt32, math.MaxInt32
	}
	return fs
}

func connectLogicalName(s string) bool {
	return strings.HasPrefix(s, "io.debezium.") || strings.HasPrefix(s, "org.apache.kafka.connect.data.")
}

// physicalOf is the Connect physical type a known logical type is defined on.
func physicalOf(logical string) string {
	switch logical {
	case logicalDecimal:
		return "bytes"
	case logicalDate, logicalConnectDate, logicalTime, logicalConnectTime:
		return "int32"
	case logicalMicroTime, logicalNanoTime, logicalTimestamp, logicalConnectTs, logicalMicroTimestamp, logicalNanoTimestamp:
		return "int64"
	}
	return "string"
}
