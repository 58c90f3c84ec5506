// Package scd2 writes a table's SCD type 2 history table (docs/design.md,
// rule 5 and "Write path"): per key, one row per version with `_valid_from`/`_valid_to`
// and their source positions, the open version closed and a new one
// opened by each change, no-op changes suppressed, and late keys replayed
// from all their changes.
//
// A map of it:
//   - writer.go: HistoryWriter (NewHistoryWriter, with a State of its own;
//     NewHistoryWriterOn, on the State the mirror writer shares: the
//     table writer's case), Ensure (the table created from the mirror's
//     columns and evolved with it), Apply.
//   - stage.go: one batch's stage (StageAfter, reusing the mirror stage's
//     plan; HistoryStage.Write decides each key's versions from its open
//     version in the local state; Commit publishes them).
//   - file.go: the versions encoded in row-group chunks on another
//     goroutine while the batch is decided.
//   - commit.go: the row delta (versions written, replaced rows removed)
//     and the pending-rebuild set committed with it.
//   - rebuild.go: RebuildKeys' side (Rebuild: late keys' versions replayed
//     from all their changes; Pending).
//
// It sits between internal/lake (the table writer calls it) and
// internal/lake/tablestate. Not safe for concurrent use.
package scd2
