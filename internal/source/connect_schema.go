package source

import (
	"strconv"
)

// Kafka Connect schemas as JsonConverter writes them (schemas.enable=true),
// for the columns of a table as Debezium's PostgreSQL connector declares
// them, and the fixed parts of its envelope.

// appendFieldSchema appends the field schema of column ci.
func appendFieldSchema(b []byte, ci *ColumnInfo) []byte {
	if ci.Array {
		b = append(b, `{"type":"array","items":`...)
		b = appendValueSchema(b, ci, true)
		b = append(b, `,"optional":`...)
		b = strconv.AppendBool(b, ci.Optional)
	} else {
		b = appendValueSchema(b, ci, ci.Optional)
		b = b[:len(b)-1] // reopen the object to add the field name
	}
	b = append(b, `,"field":`...)
	b = appendJSONString(b, ci.Name)
	return append(b, '}')
}

// appendValueSchema appends the schema of one value of ci (of one
// element, for arrays) as a complete object.
func appendValueSchema(b []byte, ci *ColumnInfo, optional bool) []byte {
	if ci.Logical == logicalVarDecimal {
		b = append(b, `{"type":"struct","fields":[{"type":"int32","optional":false,"field":"scale"},{"type":"bytes","optional":false,"field":"value"}],"optional":`...)
		b = strconv.AppendBool(b, optional)
		return append(b, `,"name":"io.debezium.data.VariableScaleDecimal","version":1,"doc":"Variable scaled decimal"}`...)
	}
	b = append(b, `{"type":`...)
	b = appendJSONString(b, ci.Connect)
	b = append(b, `,"optional":`...)
	b = strconv.AppendBool(b, optional)
	if ci.Logical == "" {
		return append(b, '}')
	}
	b = append(b, `,"name":`...)
	b = appendJSONString(b, ci.Logical)
	b = append(b, `,"version":1`...)
	switch ci.Logical {
	case logicalDecimal:
		b = append(b, `,"parameters":{"scale":"`...)
		b = strconv.AppendInt(b, int64(ci.Scale), 10)
		b = append(b, `","connect.decimal.precision":"`...)
		b = strconv.AppendInt(b, int64(ci.Precision), 10)
		b = append(b, `"}`...)
	case logicalEnum:
		b = append(b, `,"parameters":{"allowed":`...)
		b = appendJSONString(b, ci.Allowed)
		b = append(b, '}')
	}
	return append(b, '}')
}

// appendRowSchema appends the struct schema of a row image (before or
// after) named "<server>.<schema>.<table>.Value".
func appendRowSchema(b []byte, info *TableInfo, serverName, field string) []byte {
	b = append(b, `{"type":"struct","fields":[`...)
	for i := range info.Columns {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendFieldSchema(b, &info.Columns[i])
	}
	b = append(b, `],"optional":true,"name":`...)
	b = appendJSONString(b, info.Topic(serverName)+".Value")
	b = append(b, `,"field":`...)
	b = appendJSONString(b, field)
	return append(b, '}')
}

// postgresSourceSchema is the schema of the PostgreSQL connector's source
// block (io.debezium.connector.postgresql.Source, Debezium 2.x/3.x).
const postgresSourceSchema = `{"type":"struct","fields":[` +
	`{"type":"string","optional":false,"field":"version"},` +
	`{"type":"string","optional":false,"field":"connector"},` +
	`{"type":"string","optional":false,"field":"name"},` +
	`{"type":"int64","optional":false,"field":"ts_ms"},` +
	`{"type":"string","optional":true,"name":"io.debezium.data.Enum","version":1,"parameters":{"allowed":"true,first,first_in_data_collection,last_in_data_collection,last,false,incremental"},"default":"false","field":"snapshot"},` +
	`{"type":"string","optional":false,"field":"db"},` +
	`{"type":"string","optional":true,"field":"sequence"},` +
	`{"type":"int64","optional":true,"field":"ts_us"},` +
	`{"type":"int64","optional":true,"field":"ts_ns"},` +
	`{"type":"string","optional":false,"field":"schema"},` +
	`{"type":"string","optional":false,"field":"table"},` +
	`{"type":"int64","optional":true,"field":"txId"},` +
	`{"type":"int64","optional":true,"field":"lsn"},` +
	`{"type":"int64","optional":true,"field":"xmin"}` +
	`],"optional":false,"name":"io.debezium.connector.postgresql.Source","version":1,"field":"source"}`

// envelopeTailSchema is the rest of the envelope schema after source.
const envelopeTailSchema = `{"type":"struct","fields":[` +
	`{"type":"string","optional":false,"field":"id"},` +
	`{"type":"int64","optional":false,"field":"total_order"},` +
	`{"type":"int64","optional":false,"field":"data_collection_order"}` +
	`],"optional":true,"name":"event.block","version":1,"field":"transaction"},` +
	`{"type":"string","optional":false,"field":"op"},` +
	`{"type":"int64","optional":true,"field":"ts_ms"},` +
	`{"type":"int64","optional":true,"field":"ts_us"},` +
	`{"type":"int64","optional":true,"field":"ts_ns"}`

// appendEnvelopeSchema appends the value schema of the table's change
// events ("<server>.<schema>.<table>.Envelope").
func appendEnvelopeSchema(b []byte, info *TableInfo, serverName string) []byte {
	b = append(b, `{"type":"struct","fields":[`...)
	b = appendRowSchema(b, info, serverName, "before")
	b = append(b, ',')
	b = appendRowSchema(b, info, serverName, "after")
	b = append(b, ',')
	b = append(b, postgresSourceSchema...)
	b = append(b, ',')
	b = append(b, envelopeTailSchema...)
	b = append(b, `],"optional":false,"name":`...)
	b = appendJSONString(b, info.Topic(serverName)+".Envelope")
	return append(b, `,"version":2}`...)
}

// appendKeySchema appends the Kafka key schema
// ("<server>.<schema>.<table>.Key": the key columns).
func appendKeySchema(b []byte, info *TableInfo, keyIdx []int, serverName string) []byte {
	b = append(b, `{"type":"struct","fields":[`...)
	for i, j := range keyIdx {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendFieldSchema(b, &info.Columns[j])
	}
	b = append(b, `],"optional":false,"name":`...)
	b = appendJSONString(b, info.Topic(serverName)+".Key")
	return append(b, '}')
}
