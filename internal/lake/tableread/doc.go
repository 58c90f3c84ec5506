// Package tableread reads rows back out of lakemirror's Iceberg tables:
// the dump of any table for display and tests, the mirror's rows with
// their system columns as reconciliation and replay checks compare them,
// bronze's row changes for the operation balance, and bronze's records
// (the late path's past, the rebuilds, the ghost check). It only reads
// (current or given snapshots, position deletes applied); it writes and
// commits nothing.
//
// Map:
//   - dump.go: ReadRows (a table's rows as JSON-ready Row values, sorted
//     by encoded key columns) and WriteJSONLines; internal/lake keeps
//     both, and Row, under their lake names for its callers outside.
//   - reconcile.go: ScanMirrorRows (the mirror's current rows as
//     MirrorRow, with the applied position they reflect), ScanRows (the
//     same for any mirror-shaped table at a snapshot, for internal/lake's
//     reapply), ReadBronzeChanges (BronzeChanges: bronze's row changes,
//     truncates, load positions and apply delays, quarantined records
//     left out).
//   - bronze.go: BronzeRow (a Kafka record as bronze stores it;
//     internal/lake's BronzeRecord and BronzeRow), the bronze record
//     readers: ReadBronzeKeys and ReadBronzeKeysCounted (a few keys' records,
//     files pruned by `_key` bounds, row groups by the key column;
//     BronzeKeyScan counts what was read), ScanBronze (every row change),
//     ReadBronzeTopic, BronzeKeysOfTopic, and EachBronzeFile (a file at a
//     time, rows chosen by a BronzeKeep; internal/lake's reapply).
//   - purged.go: ReadPurgedRows (the purged-keys table's keys and
//     positions; internal/lake's mirror writer and the replay check).
//   - scan.go: ScanColumns, a scan of named columns record batch by
//     record batch, also used by internal/lake's validation readers.
//
// It imports internal/cdc (rows, keys, values), internal/payload (the
// Kafka record), internal/validate (the
// bronze record reconciliation reads), internal/lake/lakecat (table
// names, loading, column and property names), internal/lake/parquetio
// (Arrow values) and the Iceberg and Arrow libraries, never internal/lake.
package tableread
