// Package schemas decodes Debezium change events, as the Kafka Connect
// JsonConverter or Confluent's AvroConverter write them to Kafka, into
// *cdc.Event values.
//
// # Input
//
// A Record is one Kafka record. Its value is one of:
//
//   - a Debezium change event envelope (Debezium connector docs, "Change
//     event values": before, after, source, op, ts_ms, transaction) as
//     JSON, wrapped by JsonConverter as {"schema": …, "payload": …}
//     (schemas.enable=true) or bare (schemas.enable=false);
//   - the same envelope as Avro in the Confluent wire format (magic byte
//     0, 4-byte big-endian schema id, Avro binary body): the schema is
//     fetched by id from DecoderOptions.Registry (a Confluent-compatible
//     registry, franz-go's sr client), parsed with hamba/avro, compiled
//     and cached per id; Decode tells the formats apart by the first byte
//     (0: Avro; '{' or whitespace: JSON);
//   - a record flattened by the ExtractNewRecordState SMT (JSON or Avro,
//     see "Flattened records").
//
// A nil, empty or null value is a tombstone (KindTombstone); a transaction
// metadata event (status BEGIN/END, id) is KindTxMetadata (a record of the
// transaction metadata topic itself is read by DecodeTransaction); op "t" is
// KindTruncate. Everything else must be a row change with op c, u, d or
// r. Keys may be JSON (bare or enveloped) or Avro too. Decoded.OldKey and
// NewKey carry the __debezium.oldkey / __debezium.newkey headers of a
// primary-key change; Decoder.DecodeKey turns them into cdc.Keys.
//
// # Order, time, transactions
//
// Event.Seq comes from the source block; the layouts, the source fields
// used and why they follow commit order per row are documented on the
// cdc constructors:
//
//	postgresql        cdc.PostgresEventWords: (max(source.sequence[0], lsn), lsn) with lsn = source.lsn
//	                  (else source.sequence[1]); (lsn, lsn) when sequence[0] is null or absent;
//	                  blocking source snapshot reads (op r, not incremental) without sequence[0]: (0, lsn)
//	mysql, mariadb    cdc.MySQLSeq(binlog file index of source.file, source.pos, source.row)
//	sqlserver         cdc.SQLServerSeq(source.commit_lsn, source.change_lsn, source.event_serial_no)
//	                  (LSNs "0000002b:00000588:0003" as two words each; snapshot reads: change LSN and serial 0)
//	oracle            cdc.OracleSeq(source.commit_scn (else source.scn), source.scn, source.rs_id,
//	                  source.ssn, transaction.total_order) (SCNs are decimal strings; absent parts 0);
//	                  with source.lcr_position (XStream) cdc.OracleLCRSeq: then the LCR position's bytes
//
// A missing position is a DecodeError, never a zero Seq; other connectors
// are a DecodeError too. MySQL positions belong to one server: after a
// failover to a server with another binlog sequence they are not
// comparable (see cdc.MySQLSeq; the table stops). Event.SourceTs is
// source.ts_us, else source.ts_ms×1000, in µs since the epoch; a source
// time of 0 or none falls back to the envelope's ts_us/ts_ms, then to the
// Kafka record timestamp (Decoded.SourceTsFromKafka says so), else 0.
// Event.Snapshot maps source.snapshot ("true", "first",
// "first_in_data_collection" → SnapshotRow, "last" and
// "last_in_data_collection" (the table's last read when other tables
// follow) → SnapshotLast, "incremental" → SnapshotIncremental,
// "false"/absent → SnapshotNone; the booleans of old captures too). Old
// MySQL captures mark snapshot rows with op "c" and snapshot "true": the
// op is kept as received. Event.TxID is source.txId (PostgreSQL, Oracle)
// or source.gtid (MySQL).
//
// # Column types
//
// With a schema (the JSON envelope's Connect schema, or the Avro schema
// whose Connect types AvroConverter records as Avro types plus the
// properties connect.name, connect.parameters and connect.type), each
// column maps to an Iceberg type (cdc.Type) and each value decodes
// exactly, as below. Avro logical types stand in for a missing
// connect.name (decimal → Decimal, date → Date, time-millis → Time,
// time-micros → MicroTime, timestamp-millis → Timestamp, timestamp-micros
// → MicroTimestamp, uuid → Uuid). Negative epoch values (before 1970)
// convert exactly; a division to µs rounds toward negative infinity, never
// toward zero.
//
//	Connect / Debezium type                      Iceberg type     value
//	int8, int16, int32 (Avro int, connect.type)  int              exact, range-checked
//	int64                                        long             exact (read from the JSON text, never via float64)
//	float (float32)                              float            the nearest float32 of the number
//	double (float64)                             double           as sent (JSON text parsed once; no invented digits);
//	                                                              "NaN"/"Infinity"/"-Infinity" strings accepted
//	boolean                                      boolean
//	string                                       string           valid UTF-8; JSON escapes decoded exactly (an unknown
//	                                                              escape or a lone UTF-16 surrogate such as \ud800, which
//	                                                              has no UTF-8 form, is an error naming its offset)
//	bytes                                        binary           base64 in JSON, raw in Avro
//	org.apache.kafka.connect.data.Decimal        decimal(p,s)     base64 two's-complement big-endian unscaled bytes,
//	                                                              or a JSON number (decimal.format=NUMERIC) read exactly;
//	                                                              s = scale parameter, p = connect.decimal.precision (else 38);
//	                                                              more digits than p is an error
//	  … with p > 38 (MySQL DECIMAL(65,1))        string           the exact decimal text at scale s ("34567892.1"):
//	                                                              Iceberg decimals stop at 38 digits
//	  … BIGINT UNSIGNED (precise mode)           decimal(20,0)    exact up to 18446744073709551615
//	io.debezium.data.VariableScaleDecimal        string           the exact decimal text at the value's own scale
//	  ({scale, value})                                            ("-0.500"); with a declared decimal(p,s) column
//	                                                              (DecoderOptions.Columns): decimal(p,s), rescaled
//	                                                              exactly (a value with more fraction digits is an error)
//	org.apache.kafka.connect.data.Date,          date             days since 1970-01-01
//	  io.debezium.time.Date
//	org.apache.kafka.connect.data.Time,          time             ms × 1000 → µs since midnight
//	  io.debezium.time.Time
//	io.debezium.time.MicroTime                   time             µs since midnight
//	io.debezium.time.NanoTime                    time             ns → µs, floor
//	io.debezium.time.ZonedTime                   time             ISO time with offset → µs since midnight UTC
//	                                                              (clock − offset, modulo 24 h; the offset is not kept)
//	org.apache.kafka.connect.data.Timestamp,     timestamp        ms × 1000 → µs since the epoch, no zone
//	  io.debezium.time.Timestamp
//	io.debezium.time.MicroTimestamp              timestamp        µs since the epoch, no zone
//	io.debezium.time.NanoTimestamp               timestamp        ns → µs, floor
//	io.debezium.time.ZonedTimestamp              timestamptz      ISO-8601 with offset → µs since the epoch UTC;
//	                                                              fraction digits below µs truncated (= floor)
//	io.debezium.time.Year                        int              the year
//	io.debezium.time.MicroDuration               long             µs (Debezium's own approximation for months)
//	io.debezium.time.Interval                    string           ISO-8601 duration text
//	io.debezium.data.Uuid                        uuid             canonical text → 16 bytes
//	io.debezium.data.Json, Xml, Enum, EnumSet,   string           as sent
//	  Ltree
//	io.debezium.data.Bits                        binary           the database's byte order, most significant byte first
//	                                                              (Debezium sends least significant first: 0x0102 as
//	                                                              02 01; DecoderOptions.BitsLeastSignificantFirst keeps
//	                                                              that), ceil(n/8) bytes, the bits right-aligned
//	io.debezium.data.geometry.Geometry,          binary           the WKB bytes ({wkb, srid}; Point adds x, y);
//	  Geography, Point                                            the srid is not kept
//	array of a primitive or logical type         list<T>          elements decoded as T (NULL elements allowed);
//	                                                              an array of arrays, maps or structs → string (JSON)
//	map, other structs                           string           compact JSON text (Avro: as JsonConverter renders it)
//	an unknown logical name                      its physical type; the name is kept in Column.Source
//
// Integers are read exactly from the JSON text (never via float64), and a
// value outside its type's range is an error. Event.Schema is the after
// (else before) row's []cdc.Column, shared by all events with that
// schema; parsed schemas are cached (JSON: by their raw bytes; Avro: by
// schema id).
//
// # Values without a schema
//
// Columns declared in DecoderOptions.Columns (or a table definition file,
// see LoadTableDefinition and examples/orders.table.json) decode to their
// type by the same encodings (decimals from base64, numbers or numeric
// strings; dates from day counts; times and timestamps from µs unless
// Column.Source names the Debezium logical type that fixes another unit;
// ISO text for temporal columns; lists element by element; {wkb, srid}
// objects in binary columns as WKB; {scale, value} objects in decimal
// columns); any other JSON token is converted with Coerce, so a mismatch
// is an error. A declared decimal(p,s) with p > 38 decodes to a string
// column holding the exact text. Undeclared columns are inferred from the
// JSON token:
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
// (Coerce and InferColumns delegate to package internal/cdc/typing, which
// holds these rules so that internal/lake applies them without importing
// schemas.)
//
// # TOAST placeholders
//
// Debezium sends a placeholder for a value the source did not log: an
// unchanged TOASTed PostgreSQL column (REPLICA IDENTITY DEFAULT), an
// unchanged Oracle LOB. The default is "__debezium_unavailable_value";
// DecoderOptions.UnavailablePlaceholder sets the connector's
// unavailable.value.placeholder ("hex:…" for bytes). Text, JSON, XML,
// enum and uuid columns holding it, bytes columns holding
// its bytes (base64 in JSON, raw in Avro), and arrays holding it as their
// only element decode to cdc.Unavailable(), which means "unchanged": the
// merge keeps the stored value. A placeholder inside a longer array is an
// error; a later real NULL is cdc.Null().
//
// # Flattened records
//
// ExtractNewRecordState (Debezium docs, "New record state extraction")
// puts the row's columns at the top level and adds the add.fields named
// <prefix><field> (prefix "__" by default, DecoderOptions.AddFieldsPrefix):
// __op, __table, __db, __deleted, and source fields as __<field> or
// __source_<field> (__lsn, __source_ts_ms, __source_file, __source_pos,
// __source_row, __source_commit_lsn, __source_change_lsn,
// __source_event_serial_no, __source_scn, __source_commit_scn, ...;
// add.headers, read when the value lacks them). A value is flattened when
// it has no op, before, after or source but has __op or __deleted
// (DecoderOptions.Flattened forces either way). Fields starting with the
// prefix are not columns. The position is read from the add.fields as
// from a source block; the connector is __source_connector, else
// DecoderOptions.Connector, else the one whose position fields are
// present; without any, Decode returns a DecodeError naming the
// add.fields to configure. __deleted "true" (string or boolean; the
// rewrite delete handling mode) makes the record a delete whose before
// image is the row's last state; __op gives the op otherwise ("r" also
// marks a snapshot read); without __op a row is an update. The tombstone
// that rewrite-with-tombstone adds is a KindTombstone. Deletes dropped or
// left as bare tombstones (delete handling "drop"/"none") carry no
// position and cannot be applied: use rewrite.
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
// topic, partition, offset and a specific reason; Decode never panics. A
// schema registry that cannot be reached (as opposed to an unknown schema
// id, a DecodeError) yields a *RegistryError: the record may be fine, so
// retry rather than quarantine it. A Decoder is for one goroutine; per
// JSON event it allocates the event with its rows, one value slice, one
// string holding all the event's text, and one string holding the key
// and position. Column names are never allocated per event.
package schemas
