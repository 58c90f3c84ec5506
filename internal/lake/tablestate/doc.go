// Package tablestate is one table's local write-path state (docs/design.md,
// "Local state"): a cache of the table's Iceberg tables on the worker's
// disk and in memory that lets a batch be applied without reading them
// back. It is never the truth: it is built from the tables when a worker
// has none or finds a table at another Iceberg snapshot than the one it
// reflects.
//
// A map of it:
//   - state.go: State (the key index, the chain log, what the state
//     reflects), NewState, the reads the writers make (the mirror's stored
//     values, the history's open version and live rows), Invalidate.
//   - build.go: the build from the mirror and history tables (sorted,
//     spilled to run files past the budget; BuildNew and the other
//     reasons), detached from a caller whose context ends.
//   - record.go: recording a batch's plan in the chain log (RecordAsync,
//     on one or two goroutines), Settle, KeyChange and KeyedVersion.
//   - events.go, past.go: past row changes in the log (LoadEvents,
//     LoadKeyEvents, LoadAllEvents, the key-set reads' cost, Events,
//     PastChanges for the late path).
//   - plan.go: Plan, one batch's row changes grouped by key with their
//     index entries, shared by the mirror and history writers.
//   - shape.go: Shape, a mirror's source-column layout, conforming row
//     images to it; MirrorColumns.
//   - heirs.go: key-change creates applied before their old key's changes
//     below them (PropKeyChangeHeirs).
//   - sidecar.go: the state sidecar on the mirror's location (WriteSidecar,
//     the load, SidecarPath).
//   - liverows.go, storedrows.go: the live rows of a table's current
//     Iceberg snapshot and the stored rows of given keys.
//   - errors.go: ErrStateMoved, BinlogRestartedError.
//   - knobs.go: the build and recording knobs tests of the writers turn.
//
// It sits below the writers (internal/lake, internal/lake/scd2) and above
// the storage it uses (localstate, keyindex, lakecat, tableread, rowdelta).
// Not safe for concurrent use, except where a method says so (Memory,
// Building).
package tablestate
