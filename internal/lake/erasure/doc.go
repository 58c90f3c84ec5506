// Package erasure is erasure on request (docs/design.md, "Erasure"): it
// removes the rows of a few primary keys from a table's bronze, mirror,
// history, quarantine and purged Iceberg tables so that no data file any
// retained snapshot reaches holds them, and keeps the audit log and guard
// of erased keys, the erasures table <ns>.<table>_erasures.
//
// Map:
//   - erase.go: Erase (find, guard, rewrite, expire, clean up, record:
//     the steps are listed there), EraseRequest, RawMatcher (the
//     caller's reader of raw Kafka records).
//   - files.go: the file work of Erase: which rows of a data file are a
//     key's (the row matcher), rewriting the current snapshot's files
//     without them (copy-on-write through rowdelta.WriteRecord), expiring
//     the snapshots that still reach them (maintain.DeleteExpiredFiles),
//     old metadata files and the state sidecar (lakecat.SidecarPath);
//     HeaderOldKey.
//   - erasures.go: the erasures table: its property names (PropErasure*,
//     PropLastErasure), columns (Col*) and events (ErasureRequested,
//     ErasureCompleted), the salted key hashes, HashEraseKeys and
//     ParseEraseKeys (keys given as text), the requested and completed
//     rows, Horizon (the erasure horizon of a mirror created again).
//   - guard.go: Guard, what a mirror writer's Prepare reads of the erased
//     keys and checks each change against (Refuses, RefusesKeyAt,
//     Erased), and TypedKey (a row image's key typed as the mirror stores
//     it).
//   - errors.go: EraseKeyError (bad input), ErasureRefusedError (nothing
//     changed).
//
// Callers: internal/lake's mirror writer (erased.go: the guard in
// Prepare, the redaction of bronze and quarantine records, the purge
// fence; mirror.go: Horizon when it creates a mirror), activities
// (the Erase activity, its RawMatcher with TypedKey) and the starter
// (HashEraseKeys before it starts the workflow).
//
// It imports internal/lake/lakecat, parquetio, tableread, maintain and
// rowdelta, never internal/lake (internal/cdc's TestLakeImportsPointDown).
package erasure
