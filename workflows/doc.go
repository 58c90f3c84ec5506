// Package workflows holds the deterministic orchestration of the pipeline:
// one long-running TableWorkflow per source table that owns the table's
// Kafka offsets, chooses each micro-batch as exact offset ranges (recorded
// in workflow history by the PlanBatch activity's result) and applies it
// with the ApplyBatch activity. Signals and queries are typed here.
package workflows
