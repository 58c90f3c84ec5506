// Package schemas decodes Debezium change events, as the Kafka Connect
// JsonConverter writes them to Kafka, into *cdc.Event values.
//
// # Input
//
// A Record is one Kafka record. Its value is a Debezium change event
// envelope (Debezium connector docs, "Change event values": before, after,
// source, op, ts_ms, transaction), either wrapped by JsonConverter as
// {"schema": …, "payload": …} (schemas.enable=true) or bare
// (schemas.enable=false). A nil, empty or null value is a tombstone
// (KindTombstone); a transaction metadata event (status BEGIN/END, id) is
// KindTxMetadata; op "t" is KindTruncate. Everything else must be a row
// change with op c, u, d or r.
//
// # Order, time, transactions
//
// Event.Seq comes from the source block (see cdc.Seq): PostgreSQL
// cdc.PostgresSeq(commit LSN, source.lsn) with the commit LSN from the
// JSON-encoded source.sequence array ([lastCommitLsn, lsn], 0 when null or
// absent); MySQL and MariaDB cdc.MySQLSeq(binlog file index, source.pos,
// source.row). A missing position is a DecodeError, never a zero Seq;
// other connectors are a DecodeError too. Event.SourceTs is source.ts_us,
// else source.ts_ms×1000, in µs since the epoch. Event.Snapshot maps
// source.snapshot ("true", "first", "first_in_data_collection",
// "last_in_data_collection" → SnapshotRow, "last" → SnapshotLast,
// "incremental" → SnapshotIncremental, "false"/absent → SnapshotNone; the
// booleans of old captures too). Old MySQL captures mark snapshot rows with
// op "c" and snapshot "true": the op is kept as received.
//
// # Values with a Connect schema
//
// With the envelope, each before/after field decodes by its Connect type:
// int8/int16/int32 → int, int64 → long, float ("float32") → float, double
// ("float64") → double (a JSON 1 in a double column is the double 1),
// boolean, string, bytes (base64) → binary; struct, array and map fields
// → string holding compact JSON. Logical types:
//
//	org.apache.kafka.connect.data.Decimal        decimal(p,s): base64 two's-complement unscaled bytes, or a plain
//	                                             JSON number (decimal.format=NUMERIC) read exactly from its text;
//	                                             s = parameters.scale, p = connect.decimal.precision, else 38
//	io.debezium.time.Date, connect.data.Date     date (int days)
//	io.debezium.time.Timestamp, connect.data.Timestamp   timestamp (ms → µs)
//	io.debezium.time.MicroTimestamp              timestamp (µs)
//	io.debezium.time.NanoTimestamp               timestamp (ns → µs, rounded toward −∞)
//	io.debezium.time.ZonedTimestamp              timestamptz (ISO-8601 text → µs UTC)
//	io.debezium.time.Time, connect.data.Time     time (ms → µs)
//	io.debezium.time.MicroTime / NanoTime        time (µs / ns → µs, rounded toward −∞)
//	io.debezium.data.Json, Xml, Enum, EnumSet    string
//	io.debezium.data.Uuid                        uuid (16 raw bytes)
//
// Other logical types fall back to their physical type; the name is kept
// in Column.Source. Integers are read exactly from the JSON text (never via
// float64), and a value outside its Connect type's range is an error.
// Event.Schema is the after (else before) struct's []cdc.Column, shared by
// all events with that schema; parsed schemas are cached by their raw
// bytes.
//
// # Values without a schema
//
// Columns declared in DecoderOptions.Columns decode to their type by the
// same encodings (decimals from base64 or numbers, dates from day counts,
// times and timestamps from µs unless Column.Source names the Debezium
// logical type that fixes another unit, ISO text for temporal columns);
// any other JSON token is converted with Coerce, so a mismatch is an error.
// Undeclared columns are inferred from the JSON token:
//
//	integer literal            → Int (exact; beyond int64 → decimal with scale 0)
//	number with fraction/exp.  → Float
//	string                     → String
//	true / false               → Bool
//	null                       → NULL
//	object / array             → String holding the compact JSON text
//
// and InferColumns derives column types from a set of such events, per
// column over all images, skipping NULLs and TOAST placeholders:
//
//	only booleans → boolean; only strings → string
//	only integers → long; with integers beyond int64 → decimal(20,0)
//	  (decimal(38,0) past 20 digits, string past 38)
//	any float among numbers → double (the integers Coerce exactly or fail)
//	mixed kinds (e.g. integers and strings) → string; Coerce renders
//	  numbers and booleans as their JSON text for it
//	null in every event → string
//	every inferred column is Optional
//
// In every string, bytes, JSON or array column the TOAST placeholder
// "__debezium_unavailable_value" (PostgreSQL connector docs, unchanged
// TOASTed values) decodes to cdc.Unavailable().
//
// # Keys
//
// Event.Key is cdc.KeyOf(image, key columns), the image being After for
// c/u/r and Before for d; a delete without a before image takes its key
// from the Kafka key. Key columns are DecoderOptions.KeyColumns, else the
// Kafka key's fields in order.
//
// # Errors and performance
//
// Input that cannot be decoded yields a *DecodeError with the record's
// coordinates and a specific reason; Decode never panics. A Decoder is for
// one goroutine; per event it allocates the event with its rows, one value
// slice, one string holding all the event's text, and one string holding
// the key and position. Column names are never allocated per event.
package schemas
