package lakecat

import (
	"fmt"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// System columns of the mirror table (docs/design.md, "The job").
const (
	ColSeq        = "_seq"         // string: the source position, cdc.Seq.Hex (sortable)
	ColDeleted    = "_is_deleted"  // boolean: soft delete (see SoftDeleteColumn)
	ColSourceTs   = "_source_ts"   // timestamptz: source commit time of the change
	ColIngestedAt = "_ingested_at" // timestamptz: when the pipeline wrote the row

	// ColDeletedV1 is the soft-delete column's name in mirror tables
	// created before ColDeleted: boolean, same meaning. Iceberg reserves
	// it for a metadata column (MetadataColumns.IS_DELETED), so Spark
	// refuses such a table's columns; an engine's metadata-only rename
	// (ALTER TABLE t RENAME COLUMN _deleted TO _is_deleted) turns such a
	// table into a current one. New tables never get it, and a source
	// column with this name is refused in every table.
	ColDeletedV1 = "_deleted"
)

// SoftDeleteColumn returns the name of the soft-delete column in the
// mirror table schema sc: ColDeleted, or ColDeletedV1 in a table created
// before ColDeleted and not renamed since. Both names present (a table
// created with ColDeletedV1 whose source has a column named ColDeleted)
// resolve by field id: the soft-delete column is the boolean that
// follows _seq (MirrorSchema's layout; renames keep field ids). Errors:
// no _seq, neither name, a non-boolean soft-delete column, or both names
// present and not told apart so.
func SoftDeleteColumn(sc *iceberg.Schema) (string, error) {
	cur, okCur := sc.FindFieldByName(ColDeleted)
	old, okOld := sc.FindFieldByName(ColDeletedV1)
	isBool := func(f iceberg.NestedField) bool { return f.Type.Equals(iceberg.PrimitiveTypes.Bool) }
	switch {
	case okCur && !okOld:
		if !isBool(cur) {
			return "", fmt.Errorf("lake: the mirror's soft-delete column %s is %s, not boolean", ColDeleted, cur.Type)
		}
		return ColDeleted, nil
	case okOld && !okCur:
		if !isBool(old) {
			return "", fmt.Errorf("lake: the mirror's soft-delete column %s is %s, not boolean", ColDeletedV1, old.Type)
		}
		return ColDeletedV1, nil
	case !okCur && !okOld:
		return "", fmt.Errorf("lake: the table has no soft-delete column (%s, or %s in tables created before it); is it a lakemirror mirror table?", ColDeleted, ColDeletedV1)
	}
	seq, ok := sc.FindFieldByName(ColSeq)
	if ok && old.ID == seq.ID+1 && isBool(old) && cur.ID != seq.ID+1 {
		return ColDeletedV1, nil
	}
	return "", fmt.Errorf("lake: the table has both %s (field id %d) and %s (field id %d) and neither is the soft-delete column that follows %s; "+
		"rename the one that is not the soft-delete column (ALTER TABLE ... RENAME COLUMN) and restart the table",
		ColDeleted, cur.ID, ColDeletedV1, old.ID, ColSeq)
}

// SystemSet is the set of system column names of one mirror table: the
// pipeline's columns, with the soft-delete column the table has.
type SystemSet struct {
	SoftDelete string // the soft-delete column: ColDeleted or ColDeletedV1; "" for a history table
}

// SystemColumnsOf returns the system columns of the mirror or history
// table schema sc (nil: a mirror not created yet, ColDeleted; a history
// table, told by its _is_current, has no soft-delete column). Errors:
// SoftDeleteColumn's.
func SystemColumnsOf(sc *iceberg.Schema) (SystemSet, error) {
	if sc == nil {
		return SystemSet{SoftDelete: ColDeleted}, nil
	}
	if _, ok := sc.FindFieldByName(ColIsCurrent); ok {
		return SystemSet{}, nil
	}
	n, err := SoftDeleteColumn(sc)
	return SystemSet{SoftDelete: n}, err
}

// has reports whether name is one of the table's system columns. With
// soft-delete column ColDeletedV1, ColDeleted is a source column.
func (s SystemSet) Has(name string) bool {
	return name == s.SoftDelete || name == ColDeletedV1 || isSystemColumn(name)
}

// reserved returns the system column a source column name collides with
// in this table ("" if none), case-insensitively as reservedAs. A table
// created with ColDeletedV1 that already holds a source column named
// ColDeleted (in any case) keeps it: ColDeleted is not reserved there.
func (s SystemSet) Reserved(name string, sc *iceberg.Schema) string {
	c := reservedAs(name)
	if c == ColDeleted && s.SoftDelete == ColDeletedV1 && sc != nil {
		for _, f := range sc.Fields() {
			if strings.EqualFold(f.Name, ColDeleted) {
				return ""
			}
		}
	}
	return c
}

// Columns of the bronze table.
const (
	BronzeTopic     = "kafka_topic"
	BronzePartition = "kafka_partition"
	BronzeOffset    = "kafka_offset"
	BronzeKey       = "kafka_key"
	BronzeTimestamp = "kafka_timestamp"
	BronzeHeaders   = "kafka_headers"
	BronzeOp        = "op"
	BronzeValue     = "kafka_value"
	ColKey          = "_key" // bronze: the row change's primary key, cdc.Key in hex; the late-key rebuild reads by it
)

// CDCType is the inverse of IcebergType.
func CDCType(t iceberg.Type) (cdc.Type, error) {
	switch t := t.(type) {
	case iceberg.BooleanType:
		return cdc.TypeBool, nil
	case iceberg.Int32Type:
		return cdc.TypeInt, nil
	case iceberg.Int64Type:
		return cdc.TypeLong, nil
	case iceberg.Float32Type:
		return cdc.TypeFloat, nil
	case iceberg.Float64Type:
		return cdc.TypeDouble, nil
	case iceberg.StringType:
		return cdc.TypeString, nil
	case iceberg.BinaryType:
		return cdc.TypeBinary, nil
	case iceberg.DecimalType:
		return cdc.DecimalType(int16(t.Precision()), int16(t.Scale())), nil
	case iceberg.DateType:
		return cdc.TypeDate, nil
	case iceberg.TimeType:
		return cdc.TypeTime, nil
	case iceberg.TimestampType:
		return cdc.TypeTimestamp, nil
	case iceberg.TimestampTzType:
		return cdc.TypeTimestampTZ, nil
	case iceberg.UUIDType:
		return cdc.TypeUUID, nil
	case *iceberg.ListType:
		elem, err := CDCType(t.Element)
		if err != nil {
			return cdc.Type{}, err
		}
		if elem.Kind == cdc.KindList {
			return cdc.Type{}, fmt.Errorf("the Iceberg type %s (a list of lists) is not supported in a mirror table", t)
		}
		return cdc.ListType(elem), nil
	}
	return cdc.Type{}, fmt.Errorf("the Iceberg type %s is not supported in a mirror table", t)
}

// SourceColumns are the source columns of the mirror or history table
// schema sc, in schema order with their types: every column but the
// system columns sys (SystemColumnsOf). Errors: a column of a type a
// mirror does not support.
func SourceColumns(sc *iceberg.Schema, sys SystemSet) ([]cdc.Column, error) {
	var cols []cdc.Column
	for _, f := range sc.Fields() {
		if sys.Has(f.Name) {
			continue
		}
		t, err := CDCType(f.Type)
		if err != nil {
			return nil, fmt.Errorf("lake: column %q: %w", f.Name, err)
		}
		cols = append(cols, cdc.Column{Name: f.Name, Type: t, Optional: !f.Required})
	}
	return cols, nil
}

// IcebergType maps a column type to Iceberg (Iceberg spec, "Primitive
// Types"). Decimals wider than 38 digits have no Iceberg type and are an
// error; the decoder maps them before they reach here.
func IcebergType(t cdc.Type) (iceberg.Type, error) {
	switch t.Kind {
	case cdc.KindBool:
		return iceberg.PrimitiveTypes.Bool, nil
	case cdc.KindInt:
		if t.Bits == 32 {
			return iceberg.PrimitiveTypes.Int32, nil
		}
		return iceberg.PrimitiveTypes.Int64, nil
	case cdc.KindFloat:
		if t.Bits == 32 {
			return iceberg.PrimitiveTypes.Float32, nil
		}
		return iceberg.PrimitiveTypes.Float64, nil
	case cdc.KindString:
		return iceberg.PrimitiveTypes.String, nil
	case cdc.KindBytes:
		return iceberg.PrimitiveTypes.Binary, nil
	case cdc.KindDecimal:
		if t.Precision < 1 || t.Precision > 38 || t.Scale < 0 || t.Scale > t.Precision {
			return nil, fmt.Errorf("lake: %s has no Iceberg decimal type (precision 1..38, 0 <= scale <= precision)", t)
		}
		return iceberg.DecimalTypeOf(int(t.Precision), int(t.Scale)), nil
	case cdc.KindDate:
		return iceberg.PrimitiveTypes.Date, nil
	case cdc.KindTime:
		return iceberg.PrimitiveTypes.Time, nil
	case cdc.KindTimestamp:
		return iceberg.PrimitiveTypes.Timestamp, nil
	case cdc.KindTimestampTZ:
		return iceberg.PrimitiveTypes.TimestampTz, nil
	case cdc.KindUUID:
		return iceberg.PrimitiveTypes.UUID, nil
	case cdc.KindList:
		// Iceberg spec, "Nested Types": list<element> with an element
		// field id. -1 is the placeholder iceberg-go replaces with a
		// fresh id when the table is created or the column added.
		elem, err := IcebergType(t.ElemType())
		if err != nil {
			return nil, err
		}
		return &iceberg.ListType{ElementID: -1, Element: elem, ElementRequired: false}, nil
	}
	return nil, fmt.Errorf("lake: no Iceberg type for %s", t)
}

// MirrorSchema builds the mirror table's Iceberg schema: the source
// columns in order (field ids 1..n; key columns required and declared as
// identifier fields), then _seq, _is_deleted, _source_ts, _ingested_at. It
// returns an error when a key column is missing from cols, is a float
// (the Iceberg spec forbids float/double identifier fields), or a type has
// no Iceberg equivalent.
func MirrorSchema(cols []cdc.Column, keyCols []string) (*iceberg.Schema, error) {
	fields := make([]iceberg.NestedField, 0, len(cols)+4)
	var ids []int
	for i, c := range cols {
		if err := checkReserved(c.Name); err != nil {
			return nil, err
		}
		t, err := IcebergType(c.Type)
		if err != nil {
			return nil, fmt.Errorf("lake: column %q: %w", c.Name, err)
		}
		f := iceberg.NestedField{ID: i + 1, Name: c.Name, Type: t, Required: false}
		if slices.Contains(keyCols, c.Name) {
			if c.Type.Kind == cdc.KindFloat {
				return nil, fmt.Errorf("lake: key column %q is floating-point; Iceberg identifier fields cannot be float or double", c.Name)
			}
			f.Required = true
		}
		fields = append(fields, f)
	}
	for _, k := range keyCols {
		i := slices.IndexFunc(cols, func(c cdc.Column) bool { return c.Name == k })
		if i < 0 {
			return nil, fmt.Errorf("lake: key column %q is not among the table's columns %v", k, columnNames(cols))
		}
		ids = append(ids, i+1)
	}
	n := len(cols)
	fields = append(fields,
		iceberg.NestedField{ID: n + 1, Name: ColSeq, Type: iceberg.PrimitiveTypes.String, Required: true, Doc: "source log position of the change that wrote this version (hex words; sorts in source order)"},
		iceberg.NestedField{ID: n + 2, Name: ColDeleted, Type: iceberg.PrimitiveTypes.Bool, Required: true, Doc: "soft delete: the row was deleted at the source at _seq"},
		iceberg.NestedField{ID: n + 3, Name: ColSourceTs, Type: iceberg.PrimitiveTypes.TimestampTz, Doc: "source commit time of the change"},
		iceberg.NestedField{ID: n + 4, Name: ColIngestedAt, Type: iceberg.PrimitiveTypes.TimestampTz, Required: true, Doc: "when the pipeline wrote this version"},
	)
	return iceberg.NewSchemaWithIdentifiers(0, ids, fields...), nil
}

// BronzeSchema is the bronze table's schema: every Kafka record as
// received. kafka_topic, kafka_partition, kafka_offset identify a record.
func BronzeSchema() *iceberg.Schema {
	return iceberg.NewSchemaWithIdentifiers(0, []int{1, 2, 3},
		iceberg.NestedField{ID: 1, Name: BronzeTopic, Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 2, Name: BronzePartition, Type: iceberg.PrimitiveTypes.Int32, Required: true},
		iceberg.NestedField{ID: 3, Name: BronzeOffset, Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 4, Name: BronzeKey, Type: iceberg.PrimitiveTypes.Binary, Doc: "Kafka record key bytes"},
		iceberg.NestedField{ID: 5, Name: BronzeTimestamp, Type: iceberg.PrimitiveTypes.TimestampTz, Doc: "Kafka record timestamp"},
		iceberg.NestedField{ID: 6, Name: BronzeHeaders, Type: &iceberg.ListType{
			ElementID: 12, ElementRequired: true,
			Element: &iceberg.StructType{FieldList: []iceberg.NestedField{
				{ID: 13, Name: "key", Type: iceberg.PrimitiveTypes.String, Required: true},
				{ID: 14, Name: "value", Type: iceberg.PrimitiveTypes.Binary},
			}},
		}, Doc: "Kafka record headers in order"},
		iceberg.NestedField{ID: 7, Name: BronzeOp, Type: iceberg.PrimitiveTypes.String, Doc: "Debezium op as received (c, u, d, r, t); null for tombstones, transaction metadata and undecodable records"},
		iceberg.NestedField{ID: 8, Name: ColSeq, Type: iceberg.PrimitiveTypes.String, Doc: "source position (hex words), null when the record is not a row change"},
		iceberg.NestedField{ID: 9, Name: ColSourceTs, Type: iceberg.PrimitiveTypes.TimestampTz, Doc: "source commit time"},
		iceberg.NestedField{ID: 10, Name: BronzeValue, Type: iceberg.PrimitiveTypes.Binary, Doc: "raw Kafka record value; null for a tombstone"},
		iceberg.NestedField{ID: 11, Name: ColIngestedAt, Type: iceberg.PrimitiveTypes.TimestampTz, Required: true},
		iceberg.NestedField{ID: 15, Name: ColKey, Type: iceberg.PrimitiveTypes.String, Doc: "primary key of the row change (encoded, hex); null when the record is not a row change"},
	)
}

// systemColumns are the columns the pipeline adds to mirror and history.
// ColDeletedV1 stays reserved: Iceberg reserves it too.
var systemColumns = []string{ColSeq, ColDeleted, ColDeletedV1, ColSourceTs, ColIngestedAt,
	ColValidFrom, ColValidTo, ColValidToSeq, ColIsCurrent, ColRowHash, ColSourceTx}

// checkReserved returns a *ReservedColumnError when name is a system
// column's name in any ASCII letter case.
func checkReserved(name string) error {
	if c := reservedAs(name); c != "" {
		return &ReservedColumnError{Column: name, Reserved: c}
	}
	return nil
}

// reservedAs returns the system column name collides with ("" if none).
func reservedAs(name string) string {
	if len(name) == 0 || name[0] != '_' {
		return ""
	}
	for _, c := range systemColumns {
		if len(name) == len(c) && strings.EqualFold(name, c) {
			return c
		}
	}
	return ""
}

// isSystemColumn reports whether name is a system column other than the
// soft-delete column (which one that is depends on the table: SystemSet).
func isSystemColumn(name string) bool {
	switch name {
	case ColSeq, ColSourceTs, ColIngestedAt,
		ColValidFrom, ColValidTo, ColValidToSeq, ColIsCurrent, ColRowHash, ColSourceTx:
		return true
	}
	return false
}

func columnNames(cols []cdc.Column) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.Name
	}
	return out
}

// UniqueColumns are system columns whose values are (nearly) all
// distinct: they are written without a Parquet dictionary, which would
// only cost time (parquetio.FileSpec.Unique).
var UniqueColumns = []string{ColSeq, ColValidToSeq, ColRowHash, BronzeValue, BronzeKey, ColKey, BronzeOffset}
