package lakecat

import (
	"fmt"

	"github.com/apache/iceberg-go"
)

// System columns of the history table (docs/design.md, "The job": SCD type 2).
const (
	ColValidFrom  = "_valid_from"   // timestamptz: source commit time of the change that opened the version
	ColValidTo    = "_valid_to"     // timestamptz: source commit time of the change that closed it; null while current
	ColValidToSeq = "_valid_to_seq" // string: position of the change that closed it; null while current
	ColIsCurrent  = "_is_current"   // boolean: the version is open
	ColRowHash    = "_row_hash"     // string: merge.RowHash of the tracked columns
	ColSourceTx   = "_source_tx"    // string: source transaction that opened the version, when known
)

// HistorySchema builds the history table's schema from the mirror's: the
// same source columns with the mirror's field ids (key columns required),
// then _seq (the version id: position of the change that opened it),
// _valid_from, _valid_to, _valid_to_seq, _is_current, _row_hash,
// _source_tx with ids above the mirror's highest. Identifier fields are
// the key columns plus _seq.
func HistorySchema(mirror *iceberg.Schema, keyCols []string) (*iceberg.Schema, error) {
	var fields []iceberg.NestedField
	var ids []int
	sys, err := SystemColumnsOf(mirror)
	if err != nil {
		return nil, err
	}
	for _, f := range mirror.Fields() {
		if sys.Has(f.Name) {
			continue
		}
		for _, k := range keyCols {
			if k == f.Name {
				ids = append(ids, f.ID)
			}
		}
		fields = append(fields, f)
	}
	if len(ids) != len(keyCols) {
		return nil, fmt.Errorf("lake: the mirror lacks some key columns %v", keyCols)
	}
	id := mirror.HighestFieldID()
	ids = append(ids, id+1)
	fields = append(fields,
		iceberg.NestedField{ID: id + 1, Name: ColSeq, Type: iceberg.PrimitiveTypes.String, Required: true, Doc: "version id: source position of the change that opened the version (hex words)"},
		iceberg.NestedField{ID: id + 2, Name: ColValidFrom, Type: iceberg.PrimitiveTypes.TimestampTz, Doc: "source commit time of the change that opened the version"},
		iceberg.NestedField{ID: id + 3, Name: ColValidTo, Type: iceberg.PrimitiveTypes.TimestampTz, Doc: "source commit time of the change that closed the version; null while current"},
		iceberg.NestedField{ID: id + 4, Name: ColValidToSeq, Type: iceberg.PrimitiveTypes.String, Doc: "source position of the change that closed the version; null while current"},
		iceberg.NestedField{ID: id + 5, Name: ColIsCurrent, Type: iceberg.PrimitiveTypes.Bool, Required: true},
		iceberg.NestedField{ID: id + 6, Name: ColRowHash, Type: iceberg.PrimitiveTypes.String, Required: true, Doc: "null-safe hash of the tracked columns"},
		iceberg.NestedField{ID: id + 7, Name: ColSourceTx, Type: iceberg.PrimitiveTypes.String, Doc: "source transaction that opened the version"},
	)
	return iceberg.NewSchemaWithIdentifiers(0, ids, fields...), nil
}
