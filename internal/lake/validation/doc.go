// Package validation keeps the validation table (<ns>.<table>_validation:
// one row per check of each validation run) and reads what the
// validation checks (internal/validate) compare against Kafka: the
// bookkeeping and rows of bronze and the mirror.
//
// Map:
//   - validation.go: Schema and the Val* column names of the validation
//     table, Append (one run's results, in one row-delta commit through
//     rowdelta); ReadBronzeAudit (BronzeAudit: bronze's checkpoint,
//     covered offsets, retention cutoff and row changes) and
//     ReadMirrorAudit (MirrorAudit: the mirror's checkpoint, applied
//     position points and its rows' positions).
//   - replay.go: ReadMirrorReplayState (MirrorReplayState: the mirror's
//     rows, purged keys and pending-rebuild set, which the replay check
//     compares with bronze's changes).
//
// Callers: activities (the Validate and reconciliation activities) and
// the starter (validation status). The mirror's applied position is
// lakecat.PropAppliedPosition (lake.PropAppliedPosition).
//
// It imports internal/lake/lakecat (loading, bookkeeping reads,
// ReadCheckpoint and ReadCoverage, ReadPending, PurgeLegacy), maintain
// (TrimmedBefore), tableread (ScanColumns, ScanMirrorRows,
// ReadPurgedRows), parquetio and rowdelta, never internal/lake
// (internal/cdc's TestLakeImportsPointDown).
package validation
