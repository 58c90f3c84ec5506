package workflows

import "strings"

// Signal, query and workflow names (what the starter CLI, the Web UI and
// `temporal workflow signal` use).
const (
	TableWorkflowName = "TableWorkflow"
	QueryStatus       = "status"     // returns Status
	SignalPause       = "pause"      // no payload: hold the Kafka position after the in-flight batch
	SignalResume      = "resume"     // no payload
	SignalControl     = "control"    // string "pause" or "resume": either, applied in the order sent (see signals.go)
	SignalStop        = "stop"       // no payload: finish the in-flight batch, then complete the workflow
	SignalRetry       = "retry"      // no payload: re-run the batch that failed and left the table blocked
	SignalSchema      = "schema"     // string "evolve" or "skip": the decision on a schema change that blocked the table
	SignalResnapshot  = "resnapshot" // string "direct" or "incremental": re-snapshot the table between batches
	SignalGroupCut    = "group-cut"  // string "freeze N", "bound N W" or "release N": the table's source group takes cut attempt N (GroupWorkflow; groupcut.go)
	UpdateBackfill    = "backfill"   // BackfillRequest → BackfillAccepted: queue a re-apply of past offsets
	UpdateSettings    = "settings"   // SettingsRequest → TableSpec: change batch bounds
)

// Phases of a table pipeline, shown by the status query.
const (
	PhaseStarting      = "starting" // recovering offsets from the tables
	PhaseSnapshot      = "snapshot" // applying the connector's source snapshot reads
	PhaseStream        = "stream"   // applying streamed changes
	PhaseBackfill      = "backfill" // re-applying a requested range of past offsets
	PhasePaused        = "paused"
	PhaseBlocked       = "blocked"        // a batch failed in a way retrying cannot fix; waiting for an operator
	PhaseRetrying      = "retrying"       // an activity keeps failing with an error that may pass (a service down, a wrong password); retried with backoff, the error in status
	PhaseSchemaBlocked = "schema-blocked" // the source schema changed in a way that needs a decision (schema signal)
	PhaseStopped       = "stopped"
)

// WorkflowID is the table workflow's id for a mirror table name
// ("ns.table"): one workflow per source table.
func WorkflowID(table string) string { return "lakemirror-table-" + strings.ToLower(table) }
