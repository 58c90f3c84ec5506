// Package payload is the contract between workflows and activities: what
// the workflows persist and pass around. Every workflow input, memo,
// activity request and result, signal and query that carries a table's
// position or a batch is built from these types, and their JSON is what
// Temporal records in workflow histories (workflows/testdata/replay), so
// the json tags and field order are fixed: a change is a payload change.
//
// It imports only the standard library and the standard-library-only core
// (internal/cdc, internal/layout, internal/validate), so the workflows
// link no adapter (no iceberg-go, arrow-go, franz-go or pgx).
//
// A map of it:
//
//   - batch.go: a table's Kafka position and batches: Offsets (partition
//     → offset), Range (a half-open offset range of one partition), Batch
//     (id, sequence number, ranges, end offsets), BatchTally (a batch's
//     record counts), LoadCursor and KeyPart (a direct load's progress).
//   - spec.go: TableSpec, one source table's pipeline configuration (the
//     workflow input and memo), with Defaults, Tables and BatchBudget.
//   - table.go: the table workflow's activities' requests and results
//     (RecoverResult, PlanRequest, Plan, ApplyRequest, ApplyResult,
//     RebuildRequest, RebuildResult, StateUsage) and the ErrType* error
//     types of non-retryable activity failures.
//   - jobs.go: the other activities' requests and results (claim, load,
//     backfill, maintenance, erasure, validation, reconciliation, the
//     re-snapshot signal), ClaimAttempts, InitialLoadID and the Job*
//     maintenance jobs.
//   - results.go: what a batch or a job did to one Iceberg table
//     (BronzeResult, MirrorResult, HistoryResult, TableRebuildResult,
//     PurgeResult, CompactResult, ExpireResult, TrimResult, EraseResult),
//     ErasureKeys and the schema decisions (DecisionEvolve, DecisionSkip).
//   - record.go: Record and Header, one Kafka record as read from its
//     topic, the one type of a record from the fetch through the decoder
//     to bronze and back.
//   - names.go: the registered names of the activities (Activity*), by
//     which the workflows schedule them.
//
// internal/lake and activities keep their old names for these types as
// aliases (lake.Offsets = payload.Offsets, activities.ApplyResult =
// payload.ApplyResult); the functions that need an adapter (reading a
// checkpoint, writing a table) stay there.
package payload
