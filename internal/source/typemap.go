package source

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// The PostgreSQL → Debezium → cdc type mapping (the table is in the
// package doc). It reproduces the schema Debezium's PostgreSQL connector
// (PostgresValueConverter, default settings: decimal.handling.mode=precise,
// time.precision.mode=adaptive, binary.handling.mode=bytes) gives each
// column, and the cdc.Type the schemas decoder derives from that schema.

// Connect logical names (Kafka Connect and Debezium).
const (
	logicalDecimal        = "org.apache.kafka.connect.data.Decimal"
	logicalVarDecimal     = "io.debezium.data.VariableScaleDecimal"
	logicalDate           = "io.debezium.time.Date"
	logicalTime           = "io.debezium.time.Time"
	logicalMicroTime      = "io.debezium.time.MicroTime"
	logicalTimestamp      = "io.debezium.time.Timestamp"
	logicalMicroTimestamp = "io.debezium.time.MicroTimestamp"
	logicalZonedTimestamp = "io.debezium.time.ZonedTimestamp"
	logicalUUID           = "io.debezium.data.Uuid"
	logicalJSON           = "io.debezium.data.Json"
	logicalXML            = "io.debezium.data.Xml"
	logicalEnum           = "io.debezium.data.Enum"
)

// maxIcebergDecimal is the widest Iceberg decimal; a wider Decimal is a
// string column holding the exact text (as the schemas decoder types it).
const maxIcebergDecimal = 38

// pgTypeRow is a pg_type row (with its enum labels).
type pgTypeRow struct {
	oid      uint32
	name     string
	nsp      string
	typtype  string // b base, d domain, e enum, c composite, r range, m multirange, p pseudo
	category string // typcategory; "A" for arrays
	elem     uint32
	base     uint32 // typbasetype of a domain
	typmod   int32  // typtypmod of a domain
	labels   string // enum labels in sort order, comma-separated
}

// attrRow is a pg_attribute row of the table.
type attrRow struct {
	name    string
	typid   uint32
	typmod  int32
	notNull bool
	format  string // format_type(atttypid, atttypmod)
	sqlType string // the type's qualified name, quoted: "pg_catalog.int4", "public.mood"
}

// scalar is the mapping of one value type (a column, or an array's
// element).
type scalar struct {
	read      string
	connect   string
	logical   string
	typ       cdc.Type
	precision int
	scale     int
	allowed   string
}

// domainBases are the base types of domains that are typed like the base
// type itself: Debezium types a domain column from the driver's JDBC
// metadata of its base type (PostgreSQL connector docs, "Domain types"),
// which agrees with the base type's own mapping for these; for other bases
// (numeric, temporal, uuid, json) it does not, so those domains are
// rejected rather than guessed.
var domainBases = map[string]bool{
	"bool": true, "int2": true, "int4": true, "int8": true, "float4": true, "float8": true,
	"text": true, "varchar": true, "bpchar": true, "date": true, "bytea": true,
}

// arrayElems are the element types of the array columns Debezium types
// (PostgresValueConverter: *_ARRAY OIDs, enum arrays); xml[] and others it
// leaves out of its events, so they are rejected.
var arrayElems = map[string]bool{
	"bool": true, "int2": true, "int4": true, "int8": true, "float4": true, "float8": true,
	"numeric": true, "text": true, "varchar": true, "bpchar": true, "json": true, "jsonb": true,
	"uuid": true, "bytea": true, "date": true, "time": true, "timestamp": true, "timestamptz": true,
}

// mapColumn maps a column to its ColumnInfo, or explains why its type is
// not supported.
func mapColumn(a attrRow, types map[uint32]pgTypeRow) (ColumnInfo, error) {
	ci := ColumnInfo{
		Column:  cdc.Column{Name: a.name, Optional: !a.notNull},
		PGType:  a.format,
		SQLType: a.sqlType,
	}
	t, ok := types[a.typid]
	if !ok {
		return ci, fmt.Errorf("type oid %d not found", a.typid)
	}
	typmod := a.typmod
	for depth := 0; t.typtype == "d"; depth++ { // domain: typed as its base
		base, ok := types[t.base]
		if !ok || depth > 16 {
			return ci, fmt.Errorf("domain %s: base type not found", t.name)
		}
		if typmod < 0 {
			typmod = t.typmod
		}
		if base.typtype != "d" && (base.nsp != "pg_catalog" || !domainBases[base.name]) {
			return ci, fmt.Errorf("domain %s over %s (domains are supported over %s)", t.name, base.name, sortedKeys(domainBases))
		}
		t = base
	}
	if t.category == "A" && t.elem != 0 {
		et, ok := types[t.elem]
		if !ok {
			return ci, fmt.Errorf("array element type oid %d not found", t.elem)
		}
		if et.typtype != "e" && (et.nsp != "pg_catalog" || !arrayElems[et.name]) {
			return ci, fmt.Errorf("array of %s (Debezium types arrays of %s and of enums)", et.name, sortedKeys(arrayElems))
		}
		s, err := mapScalar(et, typmod)
		if err != nil {
			return ci, err
		}
		ci.Array = true
		ci.Type = cdc.ListType(s.typ)
		ci.Source = "array"
		s.apply(&ci)
		return ci, nil
	}
	s, err := mapScalar(t, typmod)
	if err != nil {
		return ci, err
	}
	ci.Type = s.typ
	ci.Source = s.connect
	if s.logical != "" {
		ci.Source = s.logical
	}
	s.apply(&ci)
	return ci, nil
}

func (s scalar) apply(ci *ColumnInfo) {
	ci.Read, ci.Connect, ci.Logical = s.read, s.connect, s.logical
	ci.Precision, ci.Scale, ci.Allowed = s.precision, s.scale, s.allowed
}

// mapScalar maps a non-array, non-domain type with type modifier typmod.
func mapScalar(t pgTypeRow, typmod int32) (scalar, error) {
	if t.typtype == "e" {
		return scalar{read: "text", connect: "string", logical: logicalEnum, typ: cdc.TypeString, allowed: t.labels}, nil
	}
	if t.nsp != "pg_catalog" || t.typtype != "b" {
		return scalar{}, fmt.Errorf("%s.%s", t.nsp, t.name)
	}
	switch t.name {
	case "bool":
		return scalar{read: "bool", connect: "boolean", typ: cdc.TypeBool}, nil
	case "int2":
		return scalar{read: "int2", connect: "int16", typ: cdc.TypeInt}, nil
	case "int4":
		return scalar{read: "int4", connect: "int32", typ: cdc.TypeInt}, nil
	case "int8":
		return scalar{read: "int8", connect: "int64", typ: cdc.TypeLong}, nil
	case "float4":
		return scalar{read: "float4", connect: "float", typ: cdc.TypeFloat}, nil
	case "float8":
		return scalar{read: "float8", connect: "double", typ: cdc.TypeDouble}, nil
	case "numeric":
		if typmod < 0 {
			return scalar{read: "numeric", connect: "struct", logical: logicalVarDecimal, typ: cdc.TypeString}, nil
		}
		p, s := numericTypmod(typmod)
		if s < 0 {
			return scalar{}, fmt.Errorf("numeric(%d,%d) (a negative scale has no Kafka Connect Decimal form)", p, s)
		}
		typ := cdc.DecimalType(int16(p), int16(s))
		if p > maxIcebergDecimal || s > p {
			typ = cdc.TypeString // the exact decimal text, as the decoder types a Decimal beyond Iceberg's 38 digits
		}
		return scalar{read: "numeric", connect: "bytes", logical: logicalDecimal, typ: typ, precision: p, scale: s}, nil
	case "text", "varchar", "bpchar":
		return scalar{read: t.name, connect: "string", typ: cdc.TypeString}, nil
	case "json", "jsonb":
		return scalar{read: "text", connect: "string", logical: logicalJSON, typ: cdc.TypeString}, nil
	case "xml":
		return scalar{read: "text", connect: "string", logical: logicalXML, typ: cdc.TypeString}, nil
	case "uuid":
		return scalar{read: "uuid", connect: "string", logical: logicalUUID, typ: cdc.TypeUUID}, nil
	case "bytea":
		return scalar{read: "bytea", connect: "bytes", typ: cdc.TypeBinary}, nil
	case "date":
		return scalar{read: "date", connect: "int32", logical: logicalDate, typ: cdc.TypeDate}, nil
	case "time":
		p := timePrecision(typmod)
		if p <= 3 {
			return scalar{read: "time", connect: "int32", logical: logicalTime, typ: cdc.TypeTime, precision: p}, nil
		}
		return scalar{read: "time", connect: "int64", logical: logicalMicroTime, typ: cdc.TypeTime, precision: p}, nil
	case "timestamp":
		p := timePrecision(typmod)
		if p <= 3 {
			return scalar{read: "timestamp", connect: "int64", logical: logicalTimestamp, typ: cdc.TypeTimestamp, precision: p}, nil
		}
		return scalar{read: "timestamp", connect: "int64", logical: logicalMicroTimestamp, typ: cdc.TypeTimestamp, precision: p}, nil
	case "timestamptz":
		return scalar{read: "timestamptz", connect: "string", logical: logicalZonedTimestamp, typ: cdc.TypeTimestampTZ, precision: timePrecision(typmod)}, nil
	}
	return scalar{}, fmt.Errorf("%s", t.name)
}

// numericTypmod decodes numeric's type modifier: ((precision << 16) |
// scale) + VARHDRSZ, the scale an 11-bit two's complement (PostgreSQL 15
// allows -1000..1000).
func numericTypmod(typmod int32) (precision, scale int) {
	v := typmod - 4
	precision = int(v>>16) & 0xffff
	scale = int((v&0x7ff)^1024) - 1024
	return precision, scale
}

// timePrecision is the fractional-second digits of time/timestamp types:
// the type modifier, or 6 when undeclared (as the JDBC driver reports it
// to Debezium).
func timePrecision(typmod int32) int {
	if typmod < 0 {
		return 6
	}
	return int(typmod)
}

// supportedTypes lists the supported types for error messages.
const supportedTypes = "bool, smallint, integer, bigint, real, double precision, numeric[(p,s)], " +
	"text, varchar, char, json, jsonb, xml, uuid, bytea, date, time, timestamp, timestamptz, enums, " +
	"one-dimensional arrays of these (not xml), and domains over bool, integers, floats, text types, date and bytea"

func sortedKeys(m map[string]bool) string {
	return strings.Join(slices.Sorted(maps.Keys(m)), ", ")
}
