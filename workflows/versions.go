package workflows

// Version markers (workflow.GetVersion change ids) of the workflows, all
// in one place: what each gates, when it came, which recorded histories
// (workflows/testdata/replay, replayed by TestReplayRecordedHistories)
// still take the old branch, and when the old branch can go.
//
// Support window: a marker's old branch stays until no workflow started
// before the marker can still be running. Table workflows continue as new
// (by history size, canVersion), and every new run asks each marker again
// and takes the new branch, so a table's run is on the new code within one
// continue-as-new after an upgrade: at most historyEventsPerRun events or
// historyBytesPerRun of history, days for a busy table, weeks for an idle
// one. The rule: an old branch is removed no earlier than 90 days after
// its marker shipped and after one full release in which `starter list`
// shows no run started before the marker (the run's start time against
// the marker's date below); its replay fixtures are then moved to a
// "retired" note in the replay README, never silently deleted. None can
// go yet (all are from 2026-12-02/03). Asked at a run's start unless said
// otherwise.
const (
	// canVersion (2026-12-02, 59d0fca): continue as new by history size
	// instead of by round count. Old branch: v1-*, v2-* fixtures.
	canVersion = "continue-as-new-by-history-size"

	// idleWaitVersion (2026-12-02, 58269d1): the long-polling plan of an
	// idle table (PlanRequest.IdleWait); before, it polled every MaxWait.
	// Asked in the loop when a plan comes back empty. Old branch: v1-*,
	// v2-*.
	idleWaitVersion = "idle-long-poll"

	// memoSpecVersion (2026-12-02, 1d5865b): keep the memo's "spec" (the
	// Web UI's view of the table's configuration, and what workers compare
	// their catalog with) equal to the workflow's spec, upserted on
	// settings changes and when the table's catalog is recorded
	// (TableSpec.Catalog, from the Recover or PlanBatch of the first
	// worker). Old branch: v1-* to v3-* (v3-paused-settings checks the
	// memo upsert is guarded).
	memoSpecVersion = "memo-spec"

	// publishMidBatchVersion (2026-12-02, 6f37d72): upsert the search
	// attributes from inside a batch (blocked, retrying). Asked when first
	// needed. Old branch: v1-*.
	publishMidBatchVersion = "publish-phase-mid-batch"

	// routeVersion (2026-12-02, 584b681): route a table's activities to
	// the worker that holds its local state (docs/design.md, "Routing"): a
	// claim on the shared task queue, then the claimed worker's own queue,
	// with hand-over on a schedule-to-start timeout and a new claim when
	// the worker releases the table. Old branch (every activity on the
	// shared queue): v1-* to v4-*.
	routeVersion = "route-to-owner"

	// planInApplyVersion (2026-12-03, f1e9077): apply the plan an
	// ApplyBatch returns for the batch after it
	// (payload.ApplyResult.Next: a full batch was already waiting)
	// without a PlanBatch in between: one activity and one workflow task
	// less per batch while the table is behind. Old branch: v1-* to v5-*.
	planInApplyVersion = "plan-in-apply"

	// ownerJobsVersion (2026-12-03, 865484d): run a job that lives outside
	// the table's workflow (MaintenanceWorkflow) on the worker holding the
	// table's local state. Old branch (the shared queue): v6-maintenance.
	ownerJobsVersion = "jobs-on-owner"

	// loadVisibleVersion (2026-12-05, issue 34 item 7): run a direct load
	// (initial or re-snapshot) through execInterruptible: its failures
	// show as phase retrying with the error after visibleAttempts
	// attempts, and a stop signal cancels it while it runs or waits to be
	// retried. Before, Temporal retried a failing load forever with phase
	// snapshot, no error and no way to stop it. Asked when a load starts.
	// Old branch: every fixture with a load (none recorded one).
	loadVisibleVersion = "load-visible-retries"

	// fastRecoveryVersion (2026-12-05): recover from a dead worker within
	// seconds (docs/design.md, "Recovery after a worker dies"): PlanBatch,
	// ApplyBatch and RebuildKeys get an 8 s heartbeat timeout (deadAfter,
	// was 30 s) that Temporal does not retry (heartbeatLostType); the
	// workflow reruns the activity on its owner with a 3 s
	// schedule-to-start timeout (probeWait) and hands the table over when
	// the owner does not take it; the claim after a hand-over says the
	// previous owner is gone (ClaimRequest.Gone). PlanBatch waits idleWait
	// for a first record only after a plan that found nothing, with a 60 s
	// heartbeat timeout (idleDeadAfter, planWait); other plans wait at most
	// MaxWait, with deadAfter. Old branch (30 s heartbeats retried by
	// Temporal on the owner's queue, then ownerWait; every plan waits
	// idleWait): v1-* to v8-*.
	fastRecoveryVersion = "fast-recovery"

	// leaveVersion (2026-12-05, issue 35 item 4): a worker that stops
	// gracefully hands its tables over at once (docs/design.md, "Graceful
	// stop"): a plan or batch result with Leaving (activities.Plan,
	// activities.ApplyResult) forgets the owner, and an activity failing
	// with activities.ErrTypeWorkerLeaving (listed as non-retryable) is
	// rerun after a new claim; the claim says the previous owner is gone
	// (ClaimRequest.Gone). Before, a stopping worker's idle plans ended
	// without a result reaching Temporal and the table waited for the
	// idle heartbeat timeout, the probe and a claim (about 63 s). Old
	// branch: v1-* to v9-*.
	leaveVersion = "hand-over-on-stop"
)
