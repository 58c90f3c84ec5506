// Package sample generates a realistic Debezium PostgreSQL change stream
// for one table, for the demo, tests and benchmarks, together with the
// mirror state a correct pipeline must end with (the test oracle).
//
// The source table is public.orders in database "shop", captured by a
// Debezium 2.7 PostgreSQL connector with topic prefix (server name) "shop",
// so the topic is "shop.public.orders":
//
//	CREATE TABLE public.orders (
//	    order_id   int8 PRIMARY KEY,
//	    customer   text,
//	    status     text,          -- placed, paid, shipped, delivered, cancelled
//	    amount     numeric(10,2),
//	    note       text,
//	    updated_at timestamptz
//	);
//
// Only order_id is NOT NULL. The generator never writes NULL into
// customer, status, amount or updated_at, but declaring them nullable is
// what lets a default-replica-identity delete carry a before image with
// only order_id set and the other fields null, as the Connect schema must
// allow.
//
// Records are what the Kafka JsonConverter writes: compact JSON, with
// ({"schema":…,"payload":…}) or without the schema envelope, Decimal as
// base64 of the big-endian two's-complement unscaled value, timestamptz as
// io.debezium.time.ZonedTimestamp text. Field order follows Debezium 2.7's
// Connect schemas (source: version, connector, name, ts_ms, snapshot, db,
// sequence, ts_us, ts_ns, schema, table, txId, lsn, xmin).
package sample
