package payload

// Registered names of the activities: the method names of
// activities.Activities, which the worker registers with
// worker.RegisterActivity (a method becomes the activity of its name).
// The workflows schedule activities by these names, so they do not link
// the activities package; activities' TestActivityNamesAreMethods checks
// that each is a method of *activities.Activities taking and returning
// the types noted here (after the context.Context argument).
const (
	ActivityRecover                   = "Recover"                   // TableSpec → RecoverResult
	ActivityPlanBatch                 = "PlanBatch"                 // PlanRequest → Plan
	ActivityApplyBatch                = "ApplyBatch"                // ApplyRequest → ApplyResult
	ActivityRebuildKeys               = "RebuildKeys"               // RebuildRequest → RebuildResult
	ActivityClaimTable                = "ClaimTable"                // ClaimRequest → ClaimResult
	ActivityTableOwner                = "TableOwner"                // table name (string) → task queue (string)
	ActivityLoadTable                 = "LoadTable"                 // LoadRequest → LoadResult
	ActivitySignalIncrementalSnapshot = "SignalIncrementalSnapshot" // TableSpec, signal id (string) → SignalResult
	ActivityResolveBackfill           = "ResolveBackfill"           // BackfillRequest → []Range
	ActivityMaintain                  = "Maintain"                  // MaintenanceRequest → MaintenanceResult
	ActivityErase                     = "Erase"                     // EraseRequest → EraseResult
	ActivityValidate                  = "Validate"                  // ValidationRequest → ValidationResult
	ActivityReconcile                 = "Reconcile"                 // ReconcileRequest → ReconcileResult
	ActivityReadGroupTransactions     = "ReadGroupTransactions"     // GroupReadRequest → GroupReadResult
	ActivityPublishCut                = "PublishCut"                // PublishCutRequest → PublishCutResult
	ActivityLeaveGroup                = "LeaveGroup"                // LeaveGroupRequest → LeaveGroupResult
)
