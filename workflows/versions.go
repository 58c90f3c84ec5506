package workflows

import "time"

// Version markers (workflow.GetVersion change ids) of the workflows, all
// in one place: a constant for each, saying what the marker changes and
// where a run asks it, and its entry in versionMarkers: the day it
// shipped, the recorded histories (testdata/replay, replayed by
// TestReplayRecordedHistories) that take its old branch and its new one,
// and the earliest day its old branch can go.
//
// Support window. A run asks each marker once; a run recorded before the
// marker (it has no marker event) replays the old branch, and every run
// started on code with the marker takes the new one. A table's run
// continues as new when its history reaches historyEventsPerRun events or
// historyBytesPerRun bytes (canVersion), and the next run takes every
// marker: a busy table moves onto new code within days, an idle one
// (about 6 events per idleWait plan) within about 17 days; a paused or
// blocked one records nothing and stays on its run until it moves again.
// So an old branch is removed only when both hold:
//
//   - supportWindow (90 days) has passed since the marker shipped (the
//     day in versionMarkers; versionMarker.removableFrom). So a build
//     keeps every old branch the runs of a build made up to 90 days
//     before it may take, and upgrades from it are direct; across a
//     longer gap, upgrade through a build in between and wait for the
//     check below;
//   - the installation has no running run without the marker. The SDK
//     records every marker a run takes in the TemporalChangeVersion
//     search attribute as "<change id>-1", so `temporal workflow count
//     --query 'WorkflowType="TableWorkflow" AND ExecutionStatus="Running"'`
//     must equal the same count with `AND
//     TemporalChangeVersion="<change id>-1"` added. A marker asked only
//     when first needed (idle-long-poll, publish-phase-mid-batch,
//     load-visible-retries) is checked with the marker every run asks at
//     its start that shipped with or after it (noted-waits covers
//     all of today's): a run that took it runs code with the others. A
//     table that falls short (paused or blocked since before the marker)
//     moves onto the current code with `starter stop` and `starter start`
//     (the start continues from the offsets its tables record; the status
//     totals start again from zero; pause it again if it was paused). jobs-on-owner is asked by MaintenanceWorkflow and
//     EraseWorkflow, which end with their job: none of them may be
//     running that started before the upgrade to a build with it.
//
// Removing an old branch: the build's notes name the markers removed and
// the check above; the GetVersion stays with minSupported 1 (a run
// without the marker then fails its workflow task with an error that
// names the change id, not a non-determinism error deep in its history)
// and the constant stays listed, until a later build drops both. The old
// branch's fixtures leave testdata/replay with it (they can no longer
// replay), listed as retired in its README, never silently. None can go
// yet: the earliest is 2027-03-02.
const (
	// canVersion: continue as new by history size (historyEventsPerRun,
	// historyBytesPerRun, or the server's suggestion) instead of after
	// iterationsPerRun rounds. Asked after recovery (TableWorkflow).
	canVersion = "continue-as-new-by-history-size"

	// idleWaitVersion: the long-polling plan of an idle table
	// (PlanRequest.IdleWait, interrupted by signals and settings
	// changes); before, it planned every MaxWait. Asked at the run's first
	// PlanBatch (tableRun.askPlan).
	idleWaitVersion = "idle-long-poll"

	// memoSpecVersion: keep the memo's "spec" (the Web UI's view of the
	// table's configuration, and what workers compare their catalog
	// with) equal to the workflow's spec, upserted on settings changes and
	// when the table's catalog is recorded (TableSpec.Catalog, from the
	// Recover or PlanBatch of the first worker). Asked at the run's start
	// (startRun). v3-paused-settings checks the memo upsert is guarded.
	memoSpecVersion = "memo-spec"

	// publishMidBatchVersion: upsert the search attributes from inside a
	// batch (blocked, retrying); before, only the phase gauge followed.
	// Asked at the run's first publish with search attributes on
	// (TableState.publish).
	publishMidBatchVersion = "publish-phase-mid-batch"

	// routeVersion: route a table's activities to the worker that holds
	// its local state (docs/design.md, "Routing"): a claim on the shared
	// task queue, then the claimed worker's own queue, with hand-over on a
	// schedule-to-start timeout and a new claim when the worker releases
	// the table. Before, every activity ran on the shared queue. Asked at
	// the run's start (startRun).
	routeVersion = "route-to-owner"

	// planInApplyVersion: apply the plan an ApplyBatch returns for the
	// batch after it (payload.ApplyResult.Next: a full batch was already
	// waiting) without a PlanBatch in between: one activity and one
	// workflow task less per batch while the table is behind. Asked at
	// the run's start (startRun), used by tableRun.apply.
	planInApplyVersion = "plan-in-apply"

	// ownerJobsVersion: run a job that lives outside the table's workflow
	// (MaintenanceWorkflow, EraseWorkflow) on the worker holding the
	// table's local state; before, on the shared queue. Asked by onOwner.
	ownerJobsVersion = "jobs-on-owner"

	// loadVisibleVersion (issue 34 item 7): run a direct load (initial or
	// re-snapshot) through execInterruptible: its failures show as phase
	// retrying with the error after visibleAttempts attempts, and a stop
	// signal cancels it while it runs or waits to be retried. Before,
	// Temporal retried a failing load forever with phase snapshot, no
	// error and no way to stop it. Asked when a load starts (loadTable).
	loadVisibleVersion = "load-visible-retries"

	// fastRecoveryVersion: recover from a dead worker within seconds
	// (docs/design.md, "Recovery after a worker dies"): PlanBatch,
	// ApplyBatch and RebuildKeys get an 8 s heartbeat timeout (deadAfter,
	// was 30 s) that Temporal does not retry (heartbeatLostType); the
	// workflow reruns the activity on its owner with a 3 s
	// schedule-to-start timeout (probeWait) and hands the table over when
	// the owner does not take it; the claim after a hand-over says the
	// previous owner is gone (ClaimRequest.Gone). PlanBatch waits idleWait
	// for a first record only after a plan that found nothing, with a 60 s
	// heartbeat timeout (idleDeadAfter, planWait); other plans wait at most
	// MaxWait, with deadAfter. Before: 30 s heartbeats retried by Temporal
	// on the owner's queue, then ownerWait; every plan waited idleWait.
	// Asked at the run's start (startRun).
	fastRecoveryVersion = "fast-recovery"

	// leaveVersion (issue 35 item 4): a worker that stops gracefully hands
	// its tables over at once (docs/design.md, "Graceful stop"): a plan or
	// batch result with Leaving (activities.Plan, activities.ApplyResult)
	// forgets the owner, and an activity failing with
	// activities.ErrTypeWorkerLeaving (listed as non-retryable) is rerun
	// after a new claim; the claim says the previous owner is gone
	// (ClaimRequest.Gone). Before, a stopping worker's idle plans ended
	// without a result reaching Temporal and the table waited for the idle
	// heartbeat timeout, the probe and a claim (about 63 s). Asked at the
	// run's start (startRun).
	leaveVersion = "hand-over-on-stop"

	// waitNoteVersion (issue 35 item 1): a paused, blocked or
	// schema-blocked table waits on a timer (noteTimer, renewed) whose
	// summary says why, where the table stands and the command that goes
	// on (TableState.awaitNoted, waits.go), so the Web UI's main page of
	// the workflow shows it in the Event History. Before, it waited on a
	// condition alone, which records nothing. Asked at the run's start
	// (startRun).
	waitNoteVersion = "noted-waits"

	// settingsRunVersion (issue 35): a settings update (UpdateSettings)
	// ends the run at the next round, paused or not: it continues as new,
	// so the new run's input, which the Web UI's main page shows, holds
	// the settings in effect. Before, the input kept the settings the
	// table started with until the run continued as new for its size.
	// Asked at the run's start (startRun).
	settingsRunVersion = "settings-new-run"

	// groupReportVersion (issue 37): a table with a source group
	// (TableSpec.Group) signals its GroupWorkflow after each batch that
	// committed (and whose late keys were rebuilt) with the batch's
	// payload.GroupProgress (SignalGroupReport, reportToGroup). Asked at
	// the first such batch of a run; a table without a group never asks
	// it. Before, no table had a group.
	groupReportVersion = "group-report"

	// cutPublishVersion (issue 37): the group workflow takes its cuts in
	// the tables: it freezes them, bounds them at W and publishes the cut
	// (tags, `_cuts`; groupcut.go), signalling the tables
	// (SignalGroupCut) and running PublishCut. Asked at each run's start.
	// Before, the group only computed its cut. The tables need no marker:
	// they act on SignalGroupCut, which no table got before.
	cutPublishVersion = "cut-publish"

	// cutPositionVersion (issue 37 items 4 and 5): a group without a
	// transaction topic publishes its cuts per position (freeze, bound at
	// the highest watermark, publish once every table has fetched past W
	// on every partition: groupcut.go), and every group upserts its memo
	// "cut" (GroupMemo: the newest published cut, the pending one and
	// what it waits for, the last given up) when it changes, so the
	// Temporal Web UI shows it. Asked at each run's start. Before, a
	// group without a transaction topic only computed its cut, and no
	// group had a memo.
	cutPositionVersion = "cut-per-position"

	// cutHeldReportVersion (issue 37 item 5): a table of a group without
	// a transaction topic reports, after each batch bounded at the
	// group's W, the partitions on which the batch stopped before a
	// record above W as fetched past W, also when the batch applied
	// nothing (every record left above W): the group publishes a cut per
	// position once every table has fetched past W on every partition.
	// Asked at each such bounded batch (reportToGroup). Before, a batch
	// that applied nothing reported nothing.
	cutHeldReportVersion = "cut-held-report"

	// cutUnconfirmedVersion (issue 37): a group with a transaction topic
	// begins no cut, and publishes none it began, while the ENDs name a
	// data collection no table of the group has and some table's own
	// collection is not confirmed (neither given as its source table nor
	// named by one of its change events: GroupState.Confirmed); a table
	// joining under a collection takes it off the foreign list. And a
	// bound cut per transaction is given up when a table that misses
	// events below W has reported no batch for cutStallTimeout (a
	// paused table held every other table for cutBoundTimeout). Asked
	// at each run's start. Before, a misnamed table's transactions were
	// not waited for: a cut could hold none of them.
	cutUnconfirmedVersion = "cut-unconfirmed"

	// cutSharedVersion (issue 37): a group begins no cut, and publishes
	// none it began, while two of its tables mirror one data collection
	// (group.shared): the Tracker counts a collection's events once, so
	// the events one of them applied completed a transaction for both,
	// and a cut could hold the other without them (a breaker's run,
	// 2026-12-07). Asked at each run's start. Before, such a cut was
	// published.
	cutSharedVersion = "cut-shared"

	// cutUngroupedVersion (issue 37): a table without a source group
	// ignores the group-cut signals (SignalGroupCut): a table started
	// again without its group is still a member of its old group, which
	// freezes it at every cut attempt, and it stood still for up to its
	// freeze timeout every cut interval (a breaker's run, 2026-12-07).
	// Asked at each run's start (startRun). Before, it froze.
	cutUngroupedVersion = "cut-ungrouped"
)

// supportWindow is how long a marker's old branch stays at least after
// the marker shipped (see the support window above).
const supportWindow = 90 * 24 * time.Hour

// versionMarker is one marker's entry in versionMarkers.
type versionMarker struct {
	id     string // the change id (one of the constants above)
	added  string // the day it shipped, YYYY-MM-DD (UTC)
	commit string // the commit that added it
	// workflow is the registered name of the workflow whose recorded
	// histories old and new name.
	workflow string
	// old and new are the recorded histories in testdata/replay (file
	// names or path.Match patterns, among workflow's histories) whose
	// replay asks the marker and gets workflow.DefaultVersion (recorded
	// before it: the old branch), and 1 (the new branch). Exact:
	// TestVersionMarkerFixtures replays them all and checks that these,
	// and no others, ask it.
	old, new []string
	// noOld says why no recorded history takes the old branch (old is
	// empty).
	noOld string
}

// removableFrom is the first day the marker's old branch may go: added
// plus supportWindow.
func (m versionMarker) removableFrom() (time.Time, error) {
	t, err := time.Parse(time.DateOnly, m.added)
	return t.Add(supportWindow), err
}

// versionMarkers lists every marker, oldest first.
var versionMarkers = []versionMarker{
	{id: publishMidBatchVersion, added: "2026-12-02", commit: "6f37d72", workflow: TableWorkflowName,
		old: []string{"v1-blocked.json"},
		new: []string{"v2-blocked.json", "v3-blocked.json", "v4-blocked.json", "v5-blocked.json", "v6-blocked.json", "v9-blocked.json", "v10-blocked.json", "v11-blocked.json", "v12-blocked.json", "v13-blocked.json", "v14-blocked.json", "v15-blocked.json", "v16-blocked.json", "v17-blocked.json", "v18-blocked.json"}},
	{id: idleWaitVersion, added: "2026-12-02", commit: "58269d1", workflow: TableWorkflowName,
		old: []string{"v1-*", "v2-*"},
		new: []string{"v3-*", "v4-*", "v5-*", "v6-*", "v8-load.json", "v9-*", "v10-*", "v11-*", "v12-*", "v13-*", "v14-*", "v15-*", "v16-*", "v17-*", "v18-*"}},
	{id: memoSpecVersion, added: "2026-12-02", commit: "1d5865b", workflow: TableWorkflowName,
		old: []string{"v1-*", "v2-*", "v3-*"},
		new: []string{"v4-*", "v5-*", "v6-*", "v8-*", "v9-*", "v10-*", "v11-*", "v12-*", "v13-*", "v14-*", "v15-*", "v16-*", "v17-*", "v18-*"}},
	{id: canVersion, added: "2026-12-02", commit: "59d0fca", workflow: TableWorkflowName,
		old: []string{"v1-*", "v2-*", "v3-*", "v4-*"},
		new: []string{"v5-*", "v6-*", "v8-load.json", "v9-*", "v10-*", "v11-*", "v12-*", "v13-*", "v14-*", "v15-*", "v16-*", "v17-*", "v18-*"}},
	{id: routeVersion, added: "2026-12-02", commit: "584b681", workflow: TableWorkflowName,
		old: []string{"v1-*", "v2-*", "v3-*", "v4-*"},
		new: []string{"v5-*", "v6-*", "v8-*", "v9-*", "v10-*", "v11-*", "v12-*", "v13-*", "v14-*", "v15-*", "v16-*", "v17-*", "v18-*"}},
	{id: planInApplyVersion, added: "2026-12-03", commit: "f1e9077", workflow: TableWorkflowName,
		old: []string{"v1-*", "v2-*", "v3-*", "v4-*", "v5-*"},
		new: []string{"v6-*", "v8-*", "v9-*", "v10-*", "v11-*", "v12-*", "v13-*", "v14-*", "v15-*", "v16-*", "v17-*", "v18-*"}},
	{id: ownerJobsVersion, added: "2026-12-03", commit: "865484d", workflow: MaintenanceWorkflowName,
		old: []string{"v6-maintenance.json"},
		new: []string{"v7-maintenance.json"}},
	{id: fastRecoveryVersion, added: "2026-12-05", commit: "7327bf8", workflow: TableWorkflowName,
		old: []string{"v1-*", "v2-*", "v3-*", "v4-*", "v5-*", "v6-*", "v8-*"},
		new: []string{"v9-*", "v10-*", "v11-*", "v12-*", "v13-*", "v14-*", "v15-*", "v16-*", "v17-*", "v18-*"}},
	{id: loadVisibleVersion, added: "2026-12-05", commit: "f49a8c0", workflow: TableWorkflowName,
		noOld: "no history with a load was recorded before the marker",
		new:   []string{"v8-*"}},
	{id: leaveVersion, added: "2026-12-05", commit: "e201611", workflow: TableWorkflowName,
		old: []string{"v1-*", "v2-*", "v3-*", "v4-*", "v5-*", "v6-*", "v8-*", "v9-*"},
		new: []string{"v10-*", "v11-*", "v12-*", "v13-*", "v14-*", "v15-*", "v16-*", "v17-*", "v18-*"}},
	{id: waitNoteVersion, added: "2026-12-06", commit: "037f63b", workflow: TableWorkflowName,
		old: []string{"v1-*", "v2-*", "v3-*", "v4-*", "v5-*", "v6-*", "v8-*", "v9-*", "v10-*"},
		new: []string{"v11-*", "v12-*", "v13-*", "v14-*", "v15-*", "v16-*", "v17-*", "v18-*"}},
	{id: settingsRunVersion, added: "2026-12-06", commit: "adbb122", workflow: TableWorkflowName,
		old: []string{"v1-*", "v2-*", "v3-*", "v4-*", "v5-*", "v6-*", "v8-*", "v9-*", "v10-*", "v11-*"},
		new: []string{"v12-*", "v13-*", "v14-*", "v15-*", "v16-*", "v17-*", "v18-*"}},
	{id: groupReportVersion, added: "2026-12-06", commit: "8995170", workflow: TableWorkflowName,
		noOld: "no table had a group before the marker (the group setting came with it)",
		new:   []string{"v13-grouped*", "v14-grouped*", "v15-grouped*", "v15-posgrouped*", "v16-grouped*", "v17-grouped*", "v18-grouped*", "v16-posgrouped*", "v17-posgrouped*", "v18-posgrouped*"}},
	{id: cutPublishVersion, added: "2026-12-06", commit: "2bcdc8b", workflow: GroupWorkflowName,
		old: []string{"v13-group.json"},
		new: []string{"v14-group.json", "v15-group.json", "v15-posgroup.json", "v16-group.json", "v17-group.json", "v18-group.json", "v16-posgroup.json", "v17-posgroup.json", "v18-posgroup.json"}},
	{id: cutPositionVersion, added: "2026-12-06", commit: "b89d6d9", workflow: GroupWorkflowName,
		old: []string{"v13-group.json", "v14-group.json"},
		new: []string{"v15-group.json", "v15-posgroup.json", "v16-group.json", "v17-group.json", "v18-group.json", "v16-posgroup.json", "v17-posgroup.json", "v18-posgroup.json"}},
	{id: cutHeldReportVersion, added: "2026-12-06", commit: "b89d6d9", workflow: TableWorkflowName,
		noOld: "no table of a group without a transaction topic was bound before the marker (such groups published no cut)",
		new:   []string{"v15-posgrouped.json", "v16-posgrouped.json", "v17-posgrouped.json", "v18-posgrouped.json"}},
	{id: cutUnconfirmedVersion, added: "2026-12-07", commit: "ad62324", workflow: GroupWorkflowName,
		old: []string{"v13-group.json", "v14-group.json", "v15-group.json", "v15-posgroup.json"},
		new: []string{"v16-group.json", "v17-group.json", "v18-group.json", "v16-posgroup.json", "v17-posgroup.json", "v18-posgroup.json"}},
	{id: cutSharedVersion, added: "2026-12-07", commit: "061f8ff", workflow: GroupWorkflowName,
		old: []string{"v13-group.json", "v14-group.json", "v15-group.json", "v15-posgroup.json", "v16-group.json", "v16-posgroup.json"},
		new: []string{"v17-group.json", "v18-group.json", "v17-posgroup.json", "v18-posgroup.json"}},
	{id: cutUngroupedVersion, added: "2026-12-07", commit: "f8abfc2", workflow: TableWorkflowName,
		old: []string{"v1-*", "v2-*", "v3-*", "v4-*", "v5-*", "v6-*", "v8-*", "v9-*", "v10-*", "v11-*", "v12-*", "v13-*", "v14-*", "v15-*", "v16-*", "v17-*"},
		new: []string{"v18-*"}},
}
