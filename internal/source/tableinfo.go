package source

import (
	"fmt"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// TableInfo describes one source table for a direct load: what Describe
// found in the catalog, in plain exported fields (it can be serialized,
// e.g. into a Temporal activity's input, and passed back to ReadChunk,
// Snapshot and RowToDebeziumJSON).
type TableInfo struct {
	Database string       // current_database(): Debezium's source.db
	Schema   string       // schema (namespace) name, as stored in the catalog
	Table    string       // table name, as stored in the catalog
	Columns  []ColumnInfo // every column, in ordinal (attnum) order
	Key      []string     // key column names, in key order
}

// ColumnInfo is one column: its cdc.Column (name, Iceberg type, nullability
// and the Kafka Connect type Debezium gives it, exactly as the schemas
// decoder reports it for a Debezium event of this table) and how it is
// read from PostgreSQL and rendered as Debezium JSON.
type ColumnInfo struct {
	// Column.Source is the Connect logical name of the column
	// ("org.apache.kafka.connect.data.Decimal", "io.debezium.time.MicroTimestamp",
	// ...), else its Connect physical type ("int32", "string", "array").
	cdc.Column
	// PGType is the declared type, format_type(atttypid, atttypmod):
	// "numeric(10,2)", "timestamp(3) without time zone", "mood[]".
	PGType string
	// SQLType is the type's schema-qualified, quoted name without
	// modifiers ("pg_catalog.bpchar", "public.mood"), to which key
	// parameters are cast. (Not format_type(oid, NULL): that names bpchar
	// "character", which is char(1).)
	SQLType string
	// Read is the built-in type the value (each element, for arrays) is
	// read as: the column's own type, its domain's base type, or "text"
	// for enum, json, jsonb and xml (their text, as Debezium sends it).
	Read string
	// Array reports a one-dimensional array column of Read elements.
	Array bool
	// Connect is the Connect physical type of the value (of each element,
	// for arrays): "int16", "int32", "int64", "float", "double",
	// "boolean", "string", "bytes" or "struct".
	Connect string
	// Logical is the Connect/Debezium logical name of the value (of each
	// element, for arrays), or "".
	Logical string
	// Precision is the numeric precision (0 for an unconstrained numeric)
	// or the fractional-second digits of time, timestamp and timestamptz
	// (6 when undeclared).
	Precision int
	// Scale is the numeric scale.
	Scale int
	// Allowed is an enum's labels in sort order, comma-separated (the
	// "allowed" parameter of io.debezium.data.Enum).
	Allowed string
}

// Topic is the Kafka topic Debezium writes the table's changes to for a
// connector with topic.prefix (formerly database.server.name) serverName:
// "<serverName>.<schema>.<table>".
func (t TableInfo) Topic(serverName string) string {
	return serverName + "." + t.Schema + "." + t.Table
}

// ColumnList returns the columns as []cdc.Column, in order: the
// Event.Schema the schemas decoder reports for a Debezium event of the
// table.
func (t TableInfo) ColumnList() []cdc.Column {
	out := make([]cdc.Column, len(t.Columns))
	for i := range t.Columns {
		out[i] = t.Columns[i].Column
	}
	return out
}

// names returns the column names, in order.
func (t TableInfo) names() []string {
	out := make([]string, len(t.Columns))
	for i := range t.Columns {
		out[i] = t.Columns[i].Name
	}
	return out
}

// keyIndexes returns the position in Columns of each key column.
func (t TableInfo) keyIndexes() ([]int, error) {
	if len(t.Key) == 0 {
		return nil, fmt.Errorf("source: table %s has no key columns", t.qualified())
	}
	idx := make([]int, len(t.Key))
	for i, k := range t.Key {
		idx[i] = -1
		for j := range t.Columns {
			if t.Columns[j].Name == k {
				idx[i] = j
				break
			}
		}
		if idx[i] < 0 {
			return nil, fmt.Errorf("source: key column %q is not a column of %s", k, t.qualified())
		}
	}
	return idx, nil
}

// qualified is schema.table for messages.
func (t TableInfo) qualified() string { return t.Schema + "." + t.Table }
