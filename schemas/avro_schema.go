package schemas

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hamba/avro/v2"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// Avro schemas as Debezium's records carry them through Confluent's
// AvroConverter: the Envelope record (before/after as ["null", Value],
// source, op, ts_ms, transaction), or a flattened Value record, or a Key
// record. Connect types travel as Avro types plus the properties
// "connect.name" (the logical name, e.g. io.debezium.time.MicroTimestamp),
// "connect.parameters" (e.g. {"scale": "2"}) and "connect.type" (int8,
// int16 on an Avro int); Avro logical types (decimal with precision and
// scale, date, time-*, timestamp-*, uuid) are honoured when no
// connect.name says otherwise.

// maxAvroDepth bounds the nesting of compiled schemas and of decoded
// values (a recursive schema cannot recurse forever).
const maxAvroDepth = 32

// anode is a compiled Avro schema node: how to read one value.
type anode struct {
	t        avro.Type
	fields   []afield // record
	items    *anode   // array
	values   *anode   // map
	branches []*anode // union
	size     int      // fixed
	symbols  []string // enum
	name     string   // full name of a record, enum or fixed
	props    map[string]any
	logical  avro.LogicalType
	scale    int // Avro decimal
	prec     int // Avro decimal
}

type afield struct {
	name string
	node *anode
	def  any // the field's default (hamba/avro Field.Default), nil when none
}

// compileAvro turns a parsed schema into nodes; named types are compiled
// once and shared.
func compileAvro(s avro.Schema) (*anode, error) {
	return compileNode(s, map[string]*anode{}, 0)
}

func compileNode(s avro.Schema, named map[string]*anode, depth int) (*anode, error) {
	if depth > maxAvroDepth {
		return nil, errors.New("the Avro schema is nested too deeply")
	}
	if ref, ok := s.(*avro.RefSchema); ok {
		ns := ref.Schema()
		if n, ok := named[ns.FullName()]; ok {
			return n, nil
		}
		return compileNode(ns, named, depth+1)
	}
	n := &anode{t: s.Type()}
	if ps, ok := s.(avro.PropertySchema); ok {
		if p, ok := ps.(interface{ Props() map[string]any }); ok {
			n.props = p.Props()
		}
	}
	if ls, ok := s.(avro.LogicalTypeSchema); ok {
		if l := ls.Logical(); l != nil {
			n.logical = l.Type()
			if dl, ok := l.(*avro.DecimalLogicalSchema); ok {
				n.prec, n.scale = dl.Precision(), dl.Scale()
			}
		}
	}
	switch x := s.(type) {
	case *avro.RecordSchema:
		n.name = x.FullName()
		named[n.name] = n
		for _, f := range x.Fields() {
			fn, err := compileNode(f.Type(), named, depth+1)
			if err != nil {
				return nil, fmt.Errorf("%s.%s: %v", x.Name(), f.Name(), err)
			}
			af := afield{name: f.Name(), node: fn}
			if f.HasDefault() {
				af.def = f.Default()
			}
			n.fields = append(n.fields, af)
		}
	case *avro.EnumSchema:
		n.name = x.FullName()
		n.symbols = x.Symbols()
		named[n.name] = n
	case *avro.FixedSchema:
		n.name = x.FullName()
		n.size = x.Size()
		if n.size < 0 || n.size > 1<<24 {
			return nil, fmt.Errorf("fixed %s of %d bytes", n.name, n.size)
		}
		named[n.name] = n
	case *avro.ArraySchema:
		items, err := compileNode(x.Items(), named, depth+1)
		if err != nil {
			return nil, err
		}
		n.items = items
	case *avro.MapSchema:
		values, err := compileNode(x.Values(), named, depth+1)
		if err != nil {
			return nil, err
		}
		n.values = values
	case *avro.UnionSchema:
		for _, b := range x.Types() {
			bn, err := compileNode(b, named, depth+1)
			if err != nil {
				return nil, err
			}
			n.branches = append(n.branches, bn)
		}
	case *avro.PrimitiveSchema, *avro.NullSchema:
	default:
		return nil, fmt.Errorf("unsupported Avro schema %T", s)
	}
	return n, nil
}

// field returns the record field named name, or nil.
func (n *anode) field(name string) *anode {
	for i := range n.fields {
		if n.fields[i].name == name {
			return n.fields[i].node
		}
	}
	return nil
}

// prop returns a string property.
func (n *anode) prop(name string) string {
	s, _ := n.props[name].(string)
	return s
}

// nullable returns the non-null branch of a ["null", T] union and true,
// or n and false for any other node.
func (n *anode) nullable() (*anode, bool) {
	if n.t != avro.Union || len(n.branches) != 2 {
		return n, false
	}
	a, b := n.branches[0], n.branches[1]
	switch {
	case a.t == avro.Null && b.t != avro.Null:
		return b, true
	case b.t == avro.Null && a.t != avro.Null:
		return a, true
	}
	return n, false
}

// avroDecimalParams are the parameters of an Avro decimal without Connect
// parameters.
type avroDecimalParams struct{ scale, prec int }

func (p avroDecimalParams) get(name string) (string, bool, error) {
	switch name {
	case "scale":
		return fmt.Sprint(p.scale), true, nil
	case "connect.decimal.precision":
		return fmt.Sprint(p.prec), true, nil
	}
	return "", false, nil
}

// avroFieldSpec maps a column's Avro schema to the Connect type mapping
// (see connectType): the Avro type gives the physical type (int → int32,
// or connect.type int8/int16; long → int64; float; double; boolean;
// string and enum → string; bytes and fixed → bytes; record → struct;
// array; map), connect.name (or a record's full name) the logical type,
// connect.parameters its parameters; an Avro logical type stands in when
// there is no connect.name. A union other than ["null", T] is rendered as
// JSON text.
func avroFieldSpec(n *anode, depth int) (fieldSpec, error) {
	base, opt := n.nullable()
	fs := fieldSpec{optional: opt}
	if base.t == avro.Union || base.t == avro.Null {
		fs.dec, fs.typ, fs.source = decJSONText, cdc.TypeString, "avro:"+string(base.t)
		return fs, nil
	}
	physical := ""
	switch base.t {
	case avro.Boolean:
		physical = "boolean"
	case avro.Int:
		physical = "int32"
		if ct := base.prop("connect.type"); ct == "int8" || ct == "int16" {
			physical = ct
		}
	case avro.Long:
		physical = "int64"
	case avro.Float:
		physical = "float32"
	case avro.Double:
		physical = "float64"
	case avro.String, avro.Enum:
		physical = "string"
	case avro.Bytes, avro.Fixed:
		physical = "bytes"
	case avro.Record:
		physical = "struct"
	case avro.Array:
		physical = "array"
	case avro.Map:
		physical = "map"
	default:
		return fieldSpec{}, fmt.Errorf("unsupported Avro type %s", base.t)
	}
	logical := base.prop("connect.name")
	var p params
	if m, ok := base.props["connect.parameters"].(map[string]any); ok {
		p = mapParams(m)
	}
	if logical == "" {
		switch base.logical {
		case avro.Decimal:
			logical, p = logicalDecimal, avroDecimalParams{scale: base.scale, prec: base.prec}
		case avro.Date:
			logical = logicalConnectDate
		case avro.TimeMillis:
			logical = logicalConnectTime
		case avro.TimeMicros:
			logical = logicalMicroTime
		case avro.TimestampMillis, avro.LocalTimestampMillis:
			logical = logicalConnectTs
		case avro.TimestampMicros, avro.LocalTimestampMicros:
			logical = logicalMicroTimestamp
		case avro.UUID:
			logical = logicalUUID
		}
		if logical == "" && base.t == avro.Record {
			logical = base.name
		}
	}
	if logical == logicalDecimal && p == nil && base.logical == avro.Decimal {
		p = avroDecimalParams{scale: base.scale, prec: base.prec}
	}
	if err := connectType(&fs, physical, logical, p); err != nil {
		return fieldSpec{}, err
	}
	if base.t == avro.Array && fs.dec == decJSONText && depth < 1 {
		elem, err := avroFieldSpec(base.items, depth+1)
		if err != nil {
			return fieldSpec{}, fmt.Errorf("items: %v", err)
		}
		makeList(&fs, elem)
	}
	if fs.dec == decGeometry && base.field("wkb") == nil {
		fs.dec, fs.typ = decJSONText, cdc.TypeString
	}
	if fs.dec == decVarDecimal && (base.field("scale") == nil || base.field("value") == nil) {
		fs.dec, fs.typ, fs.asText = decJSONText, cdc.TypeString, false
	}
	return fs, nil
}

// avroRow is the compiled plan of a row record (an image, a flattened
// value, a key): per field, either a column or (flattened records) an
// add.field.
type avroRow struct {
	node  *anode
	ss    *structSpec // the columns
	col   []int       // per record field: index into ss.fields, or -1 for an add.field
	names []string    // per record field: its name
}

// compileRow plans a row record. Fields starting with skipPrefix (when
// not empty) are add.fields, not columns.
func (d *Decoder) compileRow(n *anode, path, skipPrefix string) (*avroRow, error) {
	base, _ := n.nullable()
	if base.t != avro.Record {
		return nil, fmt.Errorf("%s: want an Avro record, got %s", path, base.t)
	}
	ar := &avroRow{node: base, col: make([]int, len(base.fields)), names: make([]string, len(base.fields))}
	var specs []fieldSpec
	for i, f := range base.fields {
		ar.names[i] = f.name
		if skipPrefix != "" && strings.HasPrefix(f.name, skipPrefix) {
			ar.col[i] = -1
			continue
		}
		fs, err := avroFieldSpec(f.node, 0)
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %v", path, f.name, err)
		}
		fs.name = f.name
		d.applyDeclaredOverride(&fs)
		if !fs.optional {
			fs.def = avroSimpleDefault(fs.dec, f.def)
		}
		ar.col[i] = len(specs)
		specs = append(specs, fs)
	}
	ar.ss = d.internStruct(specs)
	return ar, nil
}

// avroKind is what an Avro value schema holds.
type avroKind uint8

const (
	avroOther    avroKind = iota // not a Debezium record
	avroEnvelope                 // before, after, source, op
	avroFlat                     // a flattened row with add.fields
	avroTxMeta                   // transaction metadata (status, id)
)

// avroValuePlan is a compiled value schema.
type avroValuePlan struct {
	kind          avroKind
	root          *anode
	before, after *avroRow // envelope images (nil: the schema has none)
	flat          *avroRow
}

// planValue compiles a value schema for decoding.
func (d *Decoder) planValue(root *anode) (*avroValuePlan, error) {
	p := &avroValuePlan{root: root}
	if root.t != avro.Record {
		return p, nil
	}
	var err error
	switch {
	case root.field("op") != nil || root.field("before") != nil || root.field("after") != nil:
		p.kind = avroEnvelope
		if b := root.field("before"); b != nil {
			if p.before, err = d.compileRow(b, "before", ""); err != nil {
				return nil, err
			}
		}
		if a := root.field("after"); a != nil {
			if p.after, err = d.compileRow(a, "after", ""); err != nil {
				return nil, err
			}
		}
	case root.field("status") != nil && root.field("id") != nil && d.flatMode != FlattenAlways:
		p.kind = avroTxMeta
	case d.flatMode == FlattenNever:
	default:
		hasMeta := false
		for _, f := range root.fields {
			if n := strings.TrimPrefix(f.name, d.prefix); n != f.name && (n == "op" || n == "deleted") {
				hasMeta = true
			}
		}
		if hasMeta || d.flatMode == FlattenAlways {
			p.kind = avroFlat
			if p.flat, err = d.compileRow(root, "value", d.prefix); err != nil {
				return nil, err
			}
		}
	}
	return p, nil
}

// avroSimpleDefault is an Avro field's default as the value a text,
// integer or boolean column decodes to (what Debezium gives a required
// column a key-only image leaves out: keyOnlyImage); nil for other kinds
// and for none.
func avroSimpleDefault(dec decKind, def any) *cdc.Value {
	var v cdc.Value
	switch x := def.(type) {
	case string:
		v = cdc.String(x)
	case bool:
		v = cdc.Bool(x)
	case int:
		v = cdc.Int(int64(x))
	case int32:
		v = cdc.Int(int64(x))
	case int64:
		v = cdc.Int(x)
	case float64: // JSON numbers
		if x != float64(int64(x)) {
			return nil
		}
		v = cdc.Int(int64(x))
	default:
		return nil
	}
	want := cdc.KindNull // another decoder: no default kept
	switch dec {
	case decString:
		want = cdc.KindString
	case decBool:
		want = cdc.KindBool
	case decInt:
		want = cdc.KindInt
	}
	if v.Kind != want {
		return nil
	}
	return &v
}
