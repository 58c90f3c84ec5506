// Package source reads source-database tables directly, for the initial
// load and re-snapshot of a table without going through Debezium's own
// snapshot: PostgreSQL through pgx (github.com/jackc/pgx/v5).
//
// # API
//
//	p, err := source.Open(ctx, dsn)                         // a small pgx pool
//	lsn, err := p.CurrentLSN(ctx)                           // pg_current_wal_lsn() as X<<32|Y
//	info, err := p.Describe(ctx, "public", "orders", nil)   // columns, types, key (nil: the primary key)
//	rows, last, err := p.ReadChunk(ctx, info, after, 1000)  // one keyset chunk, own REPEATABLE READ transaction
//	lsn, err := p.Snapshot(ctx, info, 1000, fn)             // the whole table in one consistent snapshot
//	lsn, err := p.SnapshotFrom(ctx, info, last, 1000, fn)   // resumed after a key, at a new snapshot
//	value, err := source.RowToDebeziumJSON(info, row, lsn, "dbserver1", tsMicros, final)
//	key, err := source.KeyToDebeziumJSON(info, row, "dbserver1")
//
// Rows are *cdc.Row with every column of the table in ordinal order, one
// *cdc.Columns per chunk. Snapshot rows get `_seq` cdc.PostgresSeq(0, lsn);
// see Snapshot for why that position is safe, and SnapshotFrom for why a
// resumed load (a later snapshot, a later position) is still correct.
// Memory is bounded by one chunk. The rendered JSON is the value (and
// key) of a Debezium PostgreSQL snapshot read, so direct-load rows can be
// stored in bronze and decoded by package schemas like connector records.
//
// # Keys
//
// Chunks are read by keyset pagination, WHERE (k1, k2, …) > ($1, $2, …)
// ORDER BY k1, k2, … LIMIT n, comparing and ordering by the columns
// themselves (their type's default ordering and the column's collation;
// an enum by its declared order). Key columns must be NOT NULL and unique
// (the primary key, or given columns covered by a unique index): Describe
// rejects others, since keyset pagination would silently skip rows with a
// NULL or shared key. Array columns cannot be keys.
//
// # Type mapping
//
// Each column is typed exactly as Debezium's PostgreSQL connector
// (PostgresValueConverter, Debezium 2.x/3.x) types it with default
// settings (decimal.handling.mode=precise, time.precision.mode=adaptive,
// binary.handling.mode=bytes), and as package schemas then types that
// Connect schema (schemas/doc.go, "Column types"): ColumnInfo.Column
// equals the decoder's Event.Schema entry for the column, and every value
// equals the value the decoder produces from Debezium's encoding of it.
//
//	PostgreSQL                  Connect schema (Debezium)             cdc.Type        cdc.Value
//	boolean                     boolean                               boolean         Bool
//	smallint                    int16                                 int             Int
//	integer                     int32                                 int             Int
//	bigint                      int64                                 long            Int
//	real                        float                                 float           Float: the float32 widened, no invented digits
//	double precision            double                                double          Float
//	numeric(p,s), p ≤ 38, s ≤ p bytes Decimal {scale s, precision p}  decimal(p,s)    Decimal, unscaled at scale s
//	numeric(p,s), p>38 or s>p   bytes Decimal {scale s, precision p}  string          String: exact text at scale s
//	numeric (no typmod)         struct VariableScaleDecimal           string          String: exact text at the minimal
//	                                                                                  scale ≥ 0 (Debezium strips trailing
//	                                                                                  zeros: 1.50 → "1.5", 0.00 → "0")
//	text, varchar(n), char(n)   string                                string          String (char(n) blank-padded, as sent)
//	json, jsonb                 string Json                           string          String: PostgreSQL's text of the value
//	                                                                                  (jsonb::text: normalized key order, ", "
//	                                                                                  and ": " separators; json verbatim)
//	xml                         string Xml                            string          String
//	enum types                  string Enum {allowed: labels}         string          String: the label
//	uuid                        string Uuid                           uuid            UUID: 16 bytes
//	bytea                       bytes                                 binary          Bytes
//	date                        int32 io.debezium.time.Date           date            Date: days since 1970-01-01
//	time(p), p ≤ 3              int32 io.debezium.time.Time (ms)      time            Time: µs since midnight
//	time, time(4..6)            int64 MicroTime                       time            Time: µs since midnight
//	timestamp(p), p ≤ 3         int64 io.debezium.time.Timestamp (ms) timestamp       Timestamp: µs since the epoch
//	timestamp, timestamp(4..6)  int64 MicroTimestamp                  timestamp       Timestamp: µs since the epoch
//	timestamptz                 string ZonedTimestamp (UTC, "Z")      timestamptz     TimestampTZ: µs since the epoch, UTC
//	T[] (one-dimensional)       array of T's schema (items optional)  list<T's type>  List of T's values, NULL elements kept
//	domain over bool, integers, the base type's                       as the base     as the base
//	  floats, text types, date, bytea
//
// Dates and timestamps before 1970, and BC (astronomical years: 1 BC is
// year 0), are exact: PostgreSQL stores days and µs, so nothing is
// rounded. cdc.Column.Optional is the column's nullability; Source is the
// Connect logical name, else the physical type ("array" for arrays).
// RowToDebeziumJSON builds the table's schema on every call; use a
// Renderer for many rows.
//
// Not supported (Describe names each such column and its type): interval,
// timetz, money, bit/varbit, network, geometric, range and text-search
// types, hstore and other extension types, composite types, xml[],
// numeric with a negative scale, arrays of domains, and domains over
// other types (Debezium types those domains from JDBC metadata, which
// does not match their base type's mapping). Values without an exact
// Debezium form are read errors naming the column: numeric NaN/±Infinity
// (the precise decimal mode cannot carry them; the connector fails on
// them too), ±infinity dates and timestamps, timestamps past the year
// 294247 (µs since 1970 in 64 bits, which Debezium's MicroTimestamp and
// Iceberg's timestamps hold, end there; PostgreSQL's reach 294276),
// multi-dimensional arrays, and text that is not UTF-8.
package source
