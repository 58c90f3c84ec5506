package sample

// Connect schemas as the JsonConverter writes them (schemas.enable=true)
// for the orders table under Debezium 2.7.3's PostgreSQL connector.

// keySchema is the key's schema ("shop.public.orders.Key").
const keySchema = `{"type":"struct","fields":[{"type":"int64","optional":false,"field":"order_id"}],"optional":false,"name":"shop.public.orders.Key"}`

// rowFields are the fields of the row struct "shop.public.orders.Value".
const rowFields = `[{"type":"int64","optional":false,"field":"order_id"},` +
	`{"type":"string","optional":true,"field":"customer"},` +
	`{"type":"string","optional":true,"field":"status"},` +
	`{"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2","connect.decimal.precision":"10"},"field":"amount"},` +
	`{"type":"string","optional":true,"field":"note"},` +
	`{"type":"string","optional":true,"name":"io.debezium.time.ZonedTimestamp","version":1,"field":"updated_at"}]`

// sourceSchema is io.debezium.connector.postgresql.Source (Debezium 2.7:
// common fields, then schema, table, txId, lsn, xmin).
const sourceSchema = `{"type":"struct","fields":[` +
	`{"type":"string","optional":false,"field":"version"},` +
	`{"type":"string","optional":false,"field":"connector"},` +
	`{"type":"string","optional":false,"field":"name"},` +
	`{"type":"int64","optional":false,"field":"ts_ms"},` +
	`{"type":"string","optional":true,"name":"io.debezium.data.Enum","version":1,"parameters":{"allowed":"true,last,false,incremental"},"default":"false","field":"snapshot"},` +
	`{"type":"string","optional":false,"field":"db"},` +
	`{"type":"string","optional":true,"field":"sequence"},` +
	`{"type":"int64","optional":true,"field":"ts_us"},` +
	`{"type":"int64","optional":true,"field":"ts_ns"},` +
	`{"type":"string","optional":false,"field":"schema"},` +
	`{"type":"string","optional":false,"field":"table"},` +
	`{"type":"int64","optional":true,"field":"txId"},` +
	`{"type":"int64","optional":true,"field":"lsn"},` +
	`{"type":"int64","optional":true,"field":"xmin"}],` +
	`"optional":false,"name":"io.debezium.connector.postgresql.Source","field":"source"}`

// transactionSchema is the transaction block ("event.block").
const transactionSchema = `{"type":"struct","fields":[` +
	`{"type":"string","optional":false,"field":"id"},` +
	`{"type":"int64","optional":false,"field":"total_order"},` +
	`{"type":"int64","optional":false,"field":"data_collection_order"}],` +
	`"optional":true,"name":"event.block","version":1,"field":"transaction"}`

// valueSchema is the envelope's schema ("shop.public.orders.Envelope",
// version 2 since Debezium 2.6 added ts_us/ts_ns).
const valueSchema = `{"type":"struct","fields":[` +
	`{"type":"struct","fields":` + rowFields + `,"optional":true,"name":"shop.public.orders.Value","field":"before"},` +
	`{"type":"struct","fields":` + rowFields + `,"optional":true,"name":"shop.public.orders.Value","field":"after"},` +
	sourceSchema + `,` +
	transactionSchema + `,` +
	`{"type":"string","optional":false,"field":"op"},` +
	`{"type":"int64","optional":true,"field":"ts_ms"},` +
	`{"type":"int64","optional":true,"field":"ts_us"},` +
	`{"type":"int64","optional":true,"field":"ts_ns"}],` +
	`"optional":false,"name":"shop.public.orders.Envelope","version":2}`
