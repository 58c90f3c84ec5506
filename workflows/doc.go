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
//
// The table workflow, file by file:
//
//   - table.go: TableWorkflow, the table's lifecycle: open the run,
//     recover a fresh table, then a loop of rounds; and the batch itself
//     (runBatch, applyBatch, rebuild, block, awaitSchemaDecision) with the
//     activity options of recover, plan and apply.
//   - steps.go: the steps a run and each round take, one job each, on a
//     tableRun: runState, startRun (the markers asked at a run's start,
//     the query, updates, signals and publisher), recover; per round
//     takeNext, takeSignals, then stop, pause, continueAsNew or
//     serveRequest (re-snapshot, backfill), else plan (askPlan: the
//     PlanBatch), takePlan and apply.
//   - state.go: TableState (what a run hands to the next), Totals and the
//     status query's answer.
//   - signals.go: the signals coroutine and the one reducer of operator
//     signals (TableState.apply).
//   - backfill.go: the backfill and settings updates and the backfill
//     step.
//   - load.go: direct loads (initial and re-snapshot) and re-snapshots.
//   - retrying.go: running an activity so that its failures show (phase
//     retrying) and a stop or signal interrupts it (execVisible,
//     execInterruptible).
//   - route.go: routing to the worker that holds the table's local state:
//     claims, hand-overs, releases, heartbeat timeouts.
//   - searchattrs.go, details.go: the phase published as search
//     attributes and a gauge, and the Web UI's current details.
//   - versions.go: every version marker (workflow.GetVersion change id)
//     with the day it shipped, the recorded histories in testdata/replay
//     that replay its old and new branch, and the support window after
//     which an old branch may go.
//   - names.go: signal, query, update, phase names and workflow ids.
//
// The other workflows: maintenance.go (MaintenanceWorkflow: purge,
// compact, expire), erase.go (EraseWorkflow), validate.go
// (ValidationWorkflow), reconcile.go (ReconcileWorkflow), group.go
// (GroupWorkflow: a source group's consistent cut, from its transaction
// topic and its tables' reports, which table.go's reportToGroup sends),
// groupcut.go (the group takes its cuts in the tables: freeze, bound,
// PublishCut, release; per transaction or, without a transaction topic,
// per position), groupmemo.go (the group's memo for the Web UI) and
// tablecut.go (a table's part in them: the group-cut signal, its frozen
// report, the bound of its batches);
// onowner.go runs the maintenance and erasure jobs on the worker holding
// the table's state.
package workflows
