package schemas

import (
	"errors"
	"fmt"
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
	logicalZonedTime      = "io.debezium.time.ZonedTime"
	logicalYear           = "io.debezium.time.Year"
	logicalVarDecimal     = "io.debezium.data.VariableScaleDecimal"
	logicalBits           = "io.debezium.data.Bits"
	logicalGeometry       = "io.debezium.data.geometry.Geometry"
	logicalGeography      = "io.debezium.data.geometry.Geography"
	logicalPoint          = "io.debezium.data.geometry.Point"
)

// maxIcebergDecimalPrecision is the widest Iceberg decimal (Iceberg spec,
// "Primitive Types": decimal(P,S), P ≤ 38). A Decimal with a larger
// precision (MySQL DECIMAL(65,1)) becomes a string column holding the
// exact decimal text.
const maxIcebergDecimalPrecision = 38

// defaultDecimalPrecision is the precision of a Connect Decimal whose
// schema has no "connect.decimal.precision" parameter (Iceberg's maximum).
const defaultDecimalPrecision = 38

// decKind says how a JSON value is turned into a cdc.Value.
type decKind uint8

const (
	decInfer      decKind = iota // no type known: the JSON token decides (see InferColumns)
	decBool                      // JSON true/false
	decInt                       // JSON integer within [min, max]
	decFloat64                   // JSON number (or "NaN"/"Infinity"/"-Infinity")
	decFloat32                   // same, rounded to the nearest float32
	decString                    // JSON string
	decBytes                     // base64 JSON string
	decDecimal                   // base64 unscaled bytes, or a plain JSON number (decimal.format=NUMERIC)
	decDate                      // int days since the epoch
	decTimeMs                    // int ms since midnight
	decTimeUs                    // int µs since midnight
	decTimeNs                    // int ns since midnight
	decTsMs                      // int ms since the epoch
	decTsUs                      // int µs since the epoch
	decTsNs                      // int ns since the epoch
	decZonedTs                   // ISO-8601 string with offset
	decUUID                      // canonical UUID string
	decJSONText                  // struct, array or map: compact JSON text
	decList                      // array of elem: a cdc list
	decGeometry                  // struct {wkb, srid} (Point also x, y): the WKB bytes
	decVarDecimal                // struct {scale, value}: exact decimal text, or the declared decimal
	decZonedTime                 // ISO-8601 time with offset: µs since midnight UTC
)

// fieldSpec is how one column is decoded and what it is.
type fieldSpec struct {
	name     string
	dec      decKind
	typ      cdc.Type
	min, max int64      // decInt range (from the Connect type: int8..int64)
	scale    int        // decDecimal scale
	prec     int        // decDecimal precision (digits checked against it)
	asText   bool       // decDecimal, decVarDecimal: the column is a string holding the exact decimal text
	elem     *fieldSpec // decList: the element decoder
	optional bool
	source   string
	// bits: decBytes of io.debezium.data.Bits, whose bytes are put in the
	// database's order (Decoder.bitsOrder)
	bits     bool
	declared bool // from DecoderOptions.Columns: other JSON tokens are decoded by inference and Coerced
	// def is a required column's schema default, decoded as its values
	// are (nil: none): the value Debezium gives a required column that an
	// image leaves out (keyOnlyImage)
	def *cdc.Value
	// decText: how a declared decimal's JSON string is read (decimalValue)
	decText decTextMode
}

// decTextMode is how a declared decimal column's JSON strings are read:
// Debezium's decimal.handling.mode=precise sends base64 unscaled bytes,
// =string the number's text, and a string such as "1234" is both.
type decTextMode uint8

const (
	decTextAuto   decTextMode = iota // whichever the text can only be; both: an error
	decTextBase64                    // base64 only (source org.apache.kafka.connect.data.Decimal)
	decTextNumber                    // numeric text only (source "string")
)

func (f *fieldSpec) column() cdc.Column {
	return cdc.Column{Name: f.name, Type: f.typ, Optional: f.optional, Source: f.source}
}

// canon appends a canonical description of f (for interning equal
// struct schemas).
func (f *fieldSpec) canon(b *strings.Builder) {
	fmt.Fprintf(b, "%q %d %v %d %d %d %d %t %t %q", f.name, f.dec, f.typ, f.min, f.max, f.scale, f.prec, f.asText, f.optional, f.source)
	if f.def != nil {
		fmt.Fprintf(b, " default %d %d %q", f.def.Kind, f.def.I, f.def.S)
	}
	if f.elem != nil {
		b.WriteString("[")
		f.elem.canon(b)
		b.WriteString("]")
	}
	b.WriteString(";")
}

// structSpec is a parsed Connect struct schema (a before/after row image
// or a Kafka key): its fields, a shared *cdc.Columns and []cdc.Column.
type structSpec struct {
	fields  []fieldSpec
	cols    *cdc.Columns
	columns []cdc.Column
	index   map[string]int
}

// envSchema is a parsed JsonConverter value schema: of a Debezium
// envelope (before, after), or of a flattened ExtractNewRecordState
// record (flat: its columns without the add.fields).
type envSchema struct {
	before, after *structSpec // nil when the schema has no such field
	flat          *structSpec // the struct's columns minus add.fields, when it has no before/after
	flatErr       error       // why flat could not be built (reported only for flattened records)
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
		ss, err := d.parseStructSpec(f, "schema."+name, "")
		if err != nil {
			return nil, err
		}
		if name == "before" {
			es.before = ss
		} else {
			es.after = ss
		}
	}
	if es.before == nil && es.after == nil {
		// Maybe a flattened record (ExtractNewRecordState): its columns
		// are the struct's fields without the add.fields.
		es.flat, es.flatErr = d.parseStructSpec(v, "schema", d.prefix)
	}
	return es, nil
}

// parseStructSpec parses a Connect struct schema into a structSpec,
// interned by content so that equal schemas share one []cdc.Column.
// Fields whose name starts with skipPrefix (when not empty) are left out.
func (d *Decoder) parseStructSpec(v *fastjson.Value, path, skipPrefix string) (*structSpec, error) {
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
	for i, f := range arr {
		if skipPrefix != "" && strings.HasPrefix(string(f.GetStringBytes("field")), skipPrefix) {
			continue
		}
		fs, err := connectFieldSpec(f)
		if err != nil {
			return nil, fmt.Errorf("%s.fields[%d]: %v", path, i, err)
		}
		if _, dup := index[fs.name]; dup {
			return nil, fmt.Errorf("%s: duplicate field %q", path, fs.name)
		}
		d.applyDeclaredOverride(&fs)
		if def := f.Get("default"); def != nil && !fs.optional {
			fs.def = d.decodeDefault(def, &fs)
		}
		index[fs.name] = len(specs)
		specs = append(specs, fs)
	}
	return d.internStruct(specs), nil
}

// internStruct returns the shared structSpec for specs.
func (d *Decoder) internStruct(specs []fieldSpec) *structSpec {
	var canon strings.Builder
	for i := range specs {
		specs[i].canon(&canon)
	}
	key := canon.String()
	if ss, ok := d.structCanon[key]; ok {
		return ss
	}
	ss := newStructSpec(specs)
	if len(d.structCanon) >= schemaCacheLimit {
		clear(d.structCanon)
	}
	d.structCanon[key] = ss
	return ss
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
	fs, err := connectSchemaSpec(f, 0)
	if err != nil {
		return fieldSpec{}, fmt.Errorf("field %q: %v", nb, err)
	}
	fs.name = string(nb)
	return fs, nil
}

// connectSchemaSpec maps a Connect schema object (a field's, or an
// array's items) to a fieldSpec without a name.
func connectSchemaSpec(f *fastjson.Value, depth int) (fieldSpec, error) {
	if f.Type() != fastjson.TypeObject {
		return fieldSpec{}, fmt.Errorf("want a schema object, got %s", jsonTypeName(f))
	}
	fs := fieldSpec{optional: f.GetBool("optional")}
	typ := string(f.GetStringBytes("type"))
	logical := string(f.GetStringBytes("name"))
	if err := connectType(&fs, typ, logical, jsonParams{f.Get("parameters")}); err != nil {
		return fieldSpec{}, err
	}
	if typ == "array" && fs.dec == decJSONText && depth < 1 {
		if items := f.Get("items"); items != nil && items.Type() == fastjson.TypeObject {
			elem, err := connectSchemaSpec(items, depth+1)
			if err != nil {
				return fieldSpec{}, fmt.Errorf("items: %v", err)
			}
			makeList(&fs, elem)
		}
	}
	return fs, nil
}

// decodeDefault is a Connect field's "default" decoded as the field's
// values are (JsonConverter writes a default as it writes a value of the
// field: a decimal's base64 bytes, a timestamp's number or text), or nil
// when it does not decode. The decoder's text buffers are set aside
// meanwhile: a schema is parsed in the middle of a record.
func (d *Decoder) decodeDefault(v *fastjson.Value, fs *fieldSpec) *cdc.Value {
	blob, fix := d.blob, d.fix
	d.blob, d.fix = nil, nil
	defer func() { d.blob, d.fix = blob, fix }()
	out := new(cdc.Value)
	if err := d.field(v, fs, out); err != nil {
		return nil
	}
	d.finishText()
	return out
}
