// Package tableread reads rows back out of lakemirror's Iceberg tables:
// the dump of any table for display and tests, the mirror's rows with
// their system columns as reconciliation and replay checks compare them,
// and bronze's row changes for the operation balance. It only reads
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
//   - scan.go: ScanColumns, a scan of named columns record batch by
//     record batch, also used by internal/lake's validation readers.
//
// It imports internal/cdc (rows, keys, values), internal/validate (the
// bronze record reconciliation reads), internal/lake/lakecat (table
// names, loading, column and property names), internal/lake/parquetio
// (Arrow values) and the Iceberg and Arrow libraries, never internal/lake.
package tableread
