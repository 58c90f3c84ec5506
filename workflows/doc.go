// Package workflows holds the deterministic orchestration of the pipeline:
// one long-running TableWorkflow per source table that owns the table's
// Kafka offsets, chooses each micro-batch as exact offset ranges (recorded
// in workflow history by the PlanBatch activity's result) and applies it
// with the ApplyBatch activity. Signals and queries are typed here.
//
// What the workflows persist and pass around (offsets, ranges, batches,
// the table spec, every activity request and result, the error types)
// is internal/payload's, and activities are scheduled by their registered
// names (payload.ActivityPlanBatch, ...), so this package links neither
// the activities package nor any adapter (internal/lake, iceberg-go,
// arrow-go, franz-go, pgx): internal/cdc's TestWorkflowsLinkNoAdapter.
package workflows
