package schemas

import (
	"math"
	"strings"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// Declared columns (DecoderOptions.Columns, or a table definition file):
// how a column of a known type decodes when the record carries no schema.

// declaredSpec is the decoder of a column declared in
// DecoderOptions.Columns. Its Source, when it is a Connect logical name of
// the same kind (e.g. io.debezium.time.Timestamp for a timestamp column),
// fixes the unit of integer encodings; otherwise integers in date, time and
// timestamp columns are days, µs since midnight and µs since the epoch. A
// decimal wider than Iceberg's 38 digits becomes a string column holding
// the exact decimal text (see setDecimal); a list decodes its elements by
// the element type.
func declaredSpec(c cdc.Column) fieldSpec {
	fs := fieldSpec{name: c.Name, typ: c.Type, optional: c.Optional, source: c.Source, declared: true}
	var hint fieldSpec
	if c.Source != "" && connectLogicalName(c.Source) {
		if ok, err := connectLogical(&hint, physicalOf(c.Source), c.Source, nil); ok && err == nil && hint.typ.Kind == c.Type.Kind {
			fs.dec, fs.bits = hint.dec, hint.bits
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
		case cdc.KindList:
			elem := declaredSpec(cdc.Column{Name: c.Name, Type: c.Type.ElemType(), Optional: true})
			fs.dec, fs.elem = decList, &elem
			fs.typ = cdc.ListType(elem.typ)
		}
	}
	if c.Type.Kind == cdc.KindDecimal {
		setDecimal(&fs, int(c.Type.Precision), int(c.Type.Scale))
		switch c.Source {
		case logicalDecimal:
			fs.decText = decTextBase64
		case "string":
			fs.decText = decTextNumber
		}
	}
	if fs.dec == decDate {
		fs.min, fs.max = math.MinInt32, math.MaxInt32
	}
	return fs
}

// applyDeclaredOverride gives a VariableScaleDecimal field of a Connect
// schema the declared decimal(p,s) of its column, when the table declares
// one (VariableScaleDecimal has no fixed scale; without a declaration the
// column is a string holding the exact decimal text).
func (d *Decoder) applyDeclaredOverride(fs *fieldSpec) {
	decl := d.declSpecs[fs.name]
	if decl == nil || fs.dec != decVarDecimal || decl.dec != decDecimal || decl.asText {
		return
	}
	fs.typ, fs.scale, fs.prec, fs.asText = decl.typ, decl.scale, decl.prec, false
}

func connectLogicalName(s string) bool {
	return strings.HasPrefix(s, "io.debezium.") || strings.HasPrefix(s, "org.apache.kafka.connect.data.")
}

// physicalOf is the Connect physical type a known logical type is defined on.
func physicalOf(logical string) string {
	switch logical {
	case logicalDecimal, logicalBits:
		return "bytes"
	case logicalDate, logicalConnectDate, logicalTime, logicalConnectTime:
		return "int32"
	case logicalMicroTime, logicalNanoTime, logicalTimestamp, logicalConnectTs, logicalMicroTimestamp, logicalNanoTimestamp:
		return "int64"
	case logicalVarDecimal, logicalGeometry, logicalGeography, logicalPoint:
		return "struct"
	}
	return "string"
}
