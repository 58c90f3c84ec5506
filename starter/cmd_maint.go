package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/human"
	"github.com/lakemirror/lakemirror/internal/pipelines"
	"github.com/lakemirror/lakemirror/internal/retention"
	"github.com/lakemirror/lakemirror/internal/source"
	"github.com/lakemirror/lakemirror/workflows"
)

// maintFlags are the job options shared by maintain and schedule.
type maintFlags struct {
	retention, floor, olderThan time.Duration
	targetSize                  int64
	retainLast                  int
	orphans                     bool
	bronzeRetention             daysFlag // expire: drop bronze and quarantine ingested before now − this; 0 = keep
}

// daysFlag is a duration flag that also takes days ("30d", as the
// pipelines file does: pipelines.ParseDuration).
type daysFlag time.Duration

func (d *daysFlag) String() string { return pipelines.FormatDuration(time.Duration(*d)) }
func (d *daysFlag) Type() string   { return "duration" }
func (d *daysFlag) Set(s string) error {
	v, err := pipelines.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = daysFlag(v)
	return nil
}

// defaultMaint are the maintenance jobs' default parameters.
var defaultMaint = maintFlags{retention: 30 * 24 * time.Hour, floor: 7 * 24 * time.Hour, targetSize: 128 << 20, retainLast: 10, olderThan: 5 * 24 * time.Hour}

// defaultEvery are the jobs' default intervals: the schedules `schedule`
// and `start` create.
var defaultEvery = map[string]time.Duration{activities.JobPurge: 24 * time.Hour, activities.JobCompact: time.Hour, activities.JobExpire: 24 * time.Hour}

func (f *maintFlags) bind(cmd *cobra.Command) {
	fl, d := cmd.Flags(), defaultMaint
	fl.DurationVar(&f.retention, "retention", d.retention, "purge: remove soft-deleted rows whose delete is older than this (must exceed Kafka retention and any replay)")
	fl.DurationVar(&f.floor, "retention-floor", d.floor, "purge: refuse a --retention shorter than this")
	fl.Int64Var(&f.targetSize, "target-file-size", d.targetSize, "compact: target data file size in bytes")
	fl.IntVar(&f.retainLast, "retain-last", d.retainLast, "expire: snapshots kept at least")
	fl.DurationVar(&f.olderThan, "older-than", d.olderThan, "expire: snapshots younger than this are kept")
	fl.BoolVar(&f.orphans, "clean-orphans", false, "expire: also delete unreferenced files older than 3 days")
	fl.Var(&f.bronzeRetention, "bronze-retention", "expire: first drop bronze and quarantine day partitions ingested longer ago than this (e.g. 30d; at least 1d; 0 keeps them for ever). Late-key rebuilds and validation then reach back only this far (docs/retention.md)")
}

// validate checks a job name and, for purge, the retention window
// against the floor, before anything starts: usage errors (exit 2).
func (f *maintFlags) validate(job string) error {
	switch job {
	case activities.JobPurge:
		if f.retention < f.floor {
			return usage("--retention %s is shorter than the floor %s: a purge could let a replayed event resurrect a row; lower --retention-floor only on purpose", f.retention, f.floor)
		}
	case activities.JobExpire:
		if err := retention.Check(time.Duration(f.bronzeRetention)); err != nil {
			return usage("--bronze-retention: %v", err)
		}
	case activities.JobCompact, activities.JobKeepApplied:
	default:
		return usage("unknown job %q: give purge, compact, expire or keep-applied", job)
	}
	return nil
}

func (f *maintFlags) request(spec activities.TableSpec, job string) activities.MaintenanceRequest {
	return activities.MaintenanceRequest{Spec: spec, Job: job, Retention: f.retention, RetentionFloor: f.floor,
		TargetFileSize: f.targetSize, RetainLast: f.retainLast, OlderThan: f.olderThan, CleanOrphans: f.orphans,
		BronzeRetention: time.Duration(f.bronzeRetention)}
}

func (a *app) maintainCmd() *cobra.Command {
	var f maintFlags
	var dryRun bool
	var out outputFlag
	cmd := &cobra.Command{
		Use:   "maintain TABLE JOB",
		Short: "Run a maintenance job now: purge (tombstones), compact (apply position deletes), expire (bronze retention, snapshots, orphans), keep-applied",
		Long: `maintain starts a MaintenanceWorkflow for the table and waits for it: purge removes
soft-deleted rows older than --retention and raises the purge horizon (--dry-run only
counts what it would remove and writes nothing); compact rewrites data files with their
position deletes applied; expire first drops bronze and quarantine day partitions
ingested longer ago than --bronze-retention (when given), then old Iceberg snapshots
(and, with --clean-orphans, unreferenced files); keep-applied takes the late keys a
rebuild stopped on (BronzePastTrimmed: their past is older than bronze's retention) out
of the pending-rebuild set, keeping their rows as applied (docs/retention.md). They run alongside the table's batches: a commit conflict makes one
side retry, nothing is lost. It prints what the job did, or with --output json the
job's result (the fields of activities.MaintenanceResult).`,
		Example: "  starter maintain shop.orders compact\n  starter maintain shop.orders purge --retention 720h --dry-run\n  starter maintain shop.orders purge --output json\n" +
			"  starter maintain shop.orders expire --bronze-retention 30d\n  starter maintain shop.orders keep-applied",
		Args: tableArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			asJSON, err := out.json()
			if err != nil {
				return err
			}
			if err := f.validate(args[1]); err != nil {
				return err
			}
			if dryRun && args[1] != activities.JobPurge {
				return usage("--dry-run is for purge: %s has no dry run", args[1])
			}
			c, st, err := a.dialStatus(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			defer c.Close()
			req := f.request(st.Spec, args[1])
			req.DryRun = dryRun
			id := fmt.Sprintf("lakemirror-maintain-%s-%s-%d", args[1], args[0], time.Now().UnixMilli())
			if dryRun {
				id += "-dry-run"
			}
			run, err := c.ExecuteWorkflow(cmd.Context(), client.StartWorkflowOptions{ID: id, TaskQueue: activities.TaskQueue},
				workflows.MaintenanceWorkflowName, req)
			if err != nil {
				return err
			}
			var res activities.MaintenanceResult
			if err := run.Get(cmd.Context(), &res); err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), res)
			}
			printMaintenance(cmd.OutOrStdout(), args[0], st.Spec, res)
			return nil
		},
	}
	f.bind(cmd)
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "purge: count the soft-deleted rows it would remove (deleted before now − --retention) and the horizon it would set; write nothing")
	out.bind(cmd)
	return cmd
}

// printMaintenance renders a maintenance job's result for people: one
// line for a purge, a line per table for compaction and expiry.
func printMaintenance(w io.Writer, table string, spec activities.TableSpec, res activities.MaintenanceResult) {
	if p := res.Purge; p != nil {
		horizon := p.Horizon
		if horizon == "" {
			horizon = "none"
		}
		switch {
		case p.DryRun:
			fmt.Fprintf(w, "purge of %s (dry run, nothing was written): would remove %d of %d soft-deleted rows (deleted before %s); the purge horizon would be %s\n",
				table, p.Purged, p.Deleted, p.Cutoff, horizon)
		case p.Purged == 0:
			fmt.Fprintf(w, "purge of %s: nothing to remove: none of the %d soft-deleted rows was deleted before %s; purge horizon %s\n", table, p.Deleted, p.Cutoff, horizon)
		default:
			fmt.Fprintf(w, "purge of %s: removed %d of %d soft-deleted rows (deleted before %s); purge horizon %s; mirror snapshot %d\n",
				table, p.Purged, p.Deleted, p.Cutoff, horizon, p.SnapshotID)
		}
	}
	if res.Compact != nil {
		fmt.Fprintf(w, "compaction of %s:\n", table)
		for _, kind := range spec.Tables() {
			c, ok := res.Compact[kind]
			if !ok {
				continue
			}
			fmt.Fprintf(w, "  %s: rewrote %d of %d data files into %d, dropped %d of %d position-delete files, %s -> %s\n",
				kind, c.Rewritten, c.FilesBefore, c.Added, c.RemovedDeleteFiles, c.DeleteFilesBefore, mib(c.BytesBefore), mib(c.BytesAfter))
		}
	}
	for _, kind := range []string{"bronze", "quarantine"} {
		if t, ok := res.Trim[kind]; ok {
			fmt.Fprintf(w, "bronze retention %s of %s: %s: dropped %s (%s) ingested before %s, kept %s (%s)%s\n",
				pipelines.FormatDuration(t.Retention), table, kind, human.Count(t.FilesDropped, "file", "files"), human.Count(t.RowsDropped, "row", "rows"),
				t.Cutoff, human.Count(t.FilesKept, "file", "files"), human.Count(t.RowsKept, "row", "rows"), unknownFiles(t.FilesUnknown))
		}
	}
	if res.Job == activities.JobKeepApplied {
		fmt.Fprintf(w, "keep-applied of %s: %d late keys whose past bronze retention dropped leave the pending-rebuild set as applied (their late change is in the mirror, not woven into the history); now `starter retry %s`\n",
			table, res.KeptAppliedKeys, table)
	}
	if res.Expire != nil {
		fmt.Fprintf(w, "snapshot expiry of %s:\n", table)
		for _, kind := range spec.Tables() {
			e, ok := res.Expire[kind]
			if !ok {
				continue
			}
			fmt.Fprintf(w, "  %s: %d -> %s, %s deleted (%s)\n", kind, e.SnapshotsBefore, human.Count(e.SnapshotsAfter, "snapshot", "snapshots"),
				human.Count(e.OrphansDeleted, "orphan file", "orphan files"), mib(e.OrphanBytes))
		}
	}
}

// unknownFiles names the files a retention run kept because nothing told
// when their records came ("" for none).
func unknownFiles(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d of them kept: no day partition or bound on _ingested_at)", n)
}

// scheduleJSON is one schedule that schedule changed, an element of the
// array it prints with --output json (docs/operating.md): its id, its job
// (purge, compact, expire, validate, reconcile), what was done (set: created
// or updated; deleted; paused; unpaused) and for set its interval in
// seconds.
type scheduleJSON struct {
	ID           string  `json:"id"`
	Job          string  `json:"job"`
	Action       string  `json:"action"`
	EverySeconds float64 `json:"every_seconds,omitempty"`
}

func (a *app) scheduleCmd() *cobra.Command {
	var f maintFlags
	var purge, compact, expire, validateEvery, reconcileEvery time.Duration
	var reconcileSource, reconcileTable string
	var reconcileRepair bool
	var remove, pause, unpause bool
	var out outputFlag
	cmd := &cobra.Command{
		Use:   "schedule TABLE",
		Short: "Create or update the table's Temporal Schedules for purge, compaction, expiry, validation and reconciliation",
		Long: `schedule keeps one Temporal Schedule per periodic job of the table (ids
lakemirror-<job>-<table>), visible and pausable in the Web UI's Schedules page. With
no interval flag it schedules all three maintenance jobs at their defaults; with some,
it creates or updates only those jobs and leaves the others as they are. An interval of
0 deletes that job's schedule. Overlapping runs are skipped.

Validation and reconciliation are scheduled only when asked for: --validate-every runs
` + "`starter validate`" + `'s ValidationWorkflow (lakemirror-validate-<table>); --reconcile-every
runs ` + "`starter reconcile`" + `'s ReconcileWorkflow (lakemirror-reconcile-<table>) against
--reconcile-source, a name the worker maps to a DSN (-sources name=dsn; default the
table's own, start --source), and --reconcile-source-table (default the table's), with
reconcile's default chunk, pause and settling period, repairing with --reconcile-repair.
A schedule keeps its request, so a DSN is refused there (give it a name on the worker);
the worker resolves the name when a run starts (an unknown name fails that run). Each
run writes its rows to <ns>.<table>_validation under its own run id, the workflow id
lakemirror-<job>-<table>-run-<start time>. A schedule keeps the table's settings it was
created with until its interval flag is given again.

--pause, --unpause and --delete act on all of the table's schedules.`,
		Example: "  starter schedule shop.orders --compact-every 1h --purge-every 24h --expire-every 24h\n" +
			"  starter schedule shop.orders --validate-every 6h\n" +
			"  starter schedule shop.orders --reconcile-every 24h --reconcile-source shopdb --reconcile-repair\n" +
			"  starter schedule shop.orders --pause",
		Args: tableArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			asJSON, err := out.json()
			if err != nil {
				return err
			}
			// done lists what was changed, printed as a line each, or
			// with --output json as one array at the end
			done := []scheduleJSON{}
			report := func(e scheduleJSON, line string) {
				done = append(done, e)
				if !asJSON {
					fmt.Fprintln(cmd.OutOrStdout(), line)
				}
			}
			validateGiven, reconcileGiven := cmd.Flags().Changed("validate-every"), cmd.Flags().Changed("reconcile-every")
			if !reconcileGiven {
				for _, fl := range []string{"reconcile-source", "reconcile-source-table", "reconcile-repair"} {
					if cmd.Flags().Changed(fl) {
						return usage("--%s is a setting of the reconcile schedule: give it with --reconcile-every", fl)
					}
				}
			}
			if reconcileGiven && reconcileEvery > 0 {
				if err := refuseDSN(reconcileSource); err != nil {
					return err // before anything is dialled
				}
			}
			c, err := a.dial(ctx)
			if err != nil {
				return err
			}
			defer c.Close()
			sc := c.ScheduleClient()
			jobs := map[string]time.Duration{activities.JobPurge: purge, activities.JobCompact: compact, activities.JobExpire: expire}
			flagOf := map[string]string{activities.JobPurge: "purge-every", activities.JobCompact: "compact-every", activities.JobExpire: "expire-every"}
			anyGiven := validateGiven || reconcileGiven
			for _, fl := range flagOf {
				anyGiven = anyGiven || cmd.Flags().Changed(fl)
			}
			if remove || pause || unpause {
				verb := "unpaused"
				if remove {
					verb = "deleted"
				} else if pause {
					verb = "paused"
				}
				acted := 0
				for _, job := range tableScheduleJobs() {
					id := workflows.ScheduleID(args[0], job)
					h := sc.GetHandle(ctx, id)
					switch {
					case remove:
						err = h.Delete(ctx)
					case pause:
						err = h.Pause(ctx, client.SchedulePauseOptions{Note: "paused by starter"})
					default:
						err = h.Unpause(ctx, client.ScheduleUnpauseOptions{Note: "unpaused by starter"})
					}
					var nf *serviceerror.NotFound
					switch {
					case errors.As(err, &nf):
						continue // the table has no such job scheduled
					case err != nil:
						return fmt.Errorf("schedule %s: %w", id, err)
					}
					acted++
					report(scheduleJSON{ID: id, Job: job, Action: verb}, fmt.Sprintf("%s schedule %s", verb, id))
				}
				if acted == 0 {
					return a.noSchedules(ctx, c, args[0])
				}
				if asJSON {
					return writeJSON(cmd.OutOrStdout(), done)
				}
				return nil
			}
			if err := f.validate(activities.JobExpire); err != nil {
				return err
			}
			if cmd.Flags().Changed("bronze-retention") && anyGiven && !cmd.Flags().Changed("expire-every") {
				return usage("--bronze-retention is a setting of the expire schedule: give it with --expire-every")
			}
			if every, asked := jobs[activities.JobPurge], !anyGiven || cmd.Flags().Changed("purge-every"); asked && every > 0 {
				if err := f.validate(activities.JobPurge); err != nil {
					return err
				}
			}
			if err := a.requireWorker(ctx, c, args[0]); err != nil {
				return err
			}
			st, err := queryStatus(ctx, c, args[0])
			if err != nil {
				return err
			}
			var reconcileReq activities.ReconcileRequest
			if reconcileGiven && reconcileEvery > 0 {
				if reconcileReq, err = scheduledReconcile(st.Spec, reconcileSource, reconcileTable, reconcileRepair); err != nil {
					return err
				}
			}
			deleteJob := func(job string) {
				id := workflows.ScheduleID(args[0], job)
				if sc.GetHandle(ctx, id).Delete(ctx) == nil {
					report(scheduleJSON{ID: id, Job: job, Action: "deleted"}, fmt.Sprintf("deleted schedule %s", id))
				}
			}
			for job, every := range jobs {
				if anyGiven && !cmd.Flags().Changed(flagOf[job]) {
					continue // not asked for: left as it is
				}
				if every <= 0 {
					deleteJob(job)
					continue
				}
				id := workflows.ScheduleID(args[0], job)
				if err := upsertSchedule(ctx, sc, id, every, f.request(st.Spec, job)); err != nil {
					return err
				}
				report(scheduleJSON{ID: id, Job: job, Action: "set", EverySeconds: every.Seconds()}, fmt.Sprintf("schedule %s: %s every %s", id, job, every))
			}
			switch {
			case !validateGiven:
			case validateEvery <= 0:
				deleteJob(jobValidate)
			default:
				id := workflows.ScheduleID(args[0], jobValidate)
				if err := upsertValidationSchedule(ctx, sc, id, validateEvery, st.Spec); err != nil {
					return err
				}
				report(scheduleJSON{ID: id, Job: jobValidate, Action: "set", EverySeconds: validateEvery.Seconds()}, fmt.Sprintf("schedule %s: %s every %s", id, jobValidate, validateEvery))
			}
			switch {
			case !reconcileGiven:
			case reconcileEvery <= 0:
				deleteJob(jobReconcile)
			default:
				id := workflows.ScheduleID(args[0], jobReconcile)
				if err := upsertReconcileSchedule(ctx, sc, id, reconcileEvery, reconcileReq); err != nil {
					return err
				}
				repairs := ""
				if reconcileReq.Repair {
					repairs = ", repairing differences"
				}
				report(scheduleJSON{ID: id, Job: jobReconcile, Action: "set", EverySeconds: reconcileEvery.Seconds()},
					fmt.Sprintf("schedule %s: %s every %s against source %s, table %s%s", id, jobReconcile, reconcileEvery, reconcileReq.Source, reconcileReq.SourceTable, repairs))
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), done)
			}
			return nil
		},
	}
	f.bind(cmd)
	out.bind(cmd)
	cmd.Flags().DurationVar(&purge, "purge-every", defaultEvery[activities.JobPurge], "tombstone purge interval (0 = none)")
	cmd.Flags().DurationVar(&compact, "compact-every", defaultEvery[activities.JobCompact], "compaction interval (0 = none)")
	cmd.Flags().DurationVar(&expire, "expire-every", defaultEvery[activities.JobExpire], "snapshot expiry interval (0 = none)")
	cmd.Flags().DurationVar(&validateEvery, "validate-every", 0, "validation interval (starter validate on a schedule; only when given, 0 = delete it)")
	cmd.Flags().DurationVar(&reconcileEvery, "reconcile-every", 0, "reconciliation interval (starter reconcile on a schedule; only when given, 0 = delete it)")
	cmd.Flags().StringVar(&reconcileSource, "reconcile-source", "", "reconcile: the source database, a name the worker maps to a DSN with -sources; a DSN is refused (default: the table's)")
	cmd.Flags().StringVar(&reconcileTable, "reconcile-source-table", "", "reconcile: the source table, schema.table (PostgreSQL) or database.table (MySQL, MariaDB) (default: the table's)")
	cmd.Flags().BoolVar(&reconcileRepair, "reconcile-repair", false, "reconcile: write every difference back from the source (as reconcile --repair)")
	cmd.Flags().BoolVar(&remove, "delete", false, "delete the table's schedules")
	cmd.Flags().BoolVar(&pause, "pause", false, "pause the table's schedules")
	cmd.Flags().BoolVar(&unpause, "unpause", false, "unpause the table's schedules")
	return cmd
}

// noSchedules is the error of a schedule command that found none of
// table's schedules: "no such table" (exit 3) when no pipeline runs it
// either, else that the table has no schedules (exit 3 too).
func (a *app) noSchedules(ctx context.Context, c client.Client, table string) error {
	_, err := c.DescribeWorkflowExecution(ctx, workflows.WorkflowID(table), "")
	var nf *serviceerror.NotFound
	switch {
	case errors.As(err, &nf):
		return notFound("no such table %s: no pipeline (workflow %s) and no schedules (lakemirror-<job>-%s); `starter list` shows the running tables", table, workflows.WorkflowID(table), table)
	case err != nil:
		return err
	}
	return notFound("%s has no schedules (lakemirror-<job>-%s); create them with `starter schedule %s`", table, table, table)
}

// jobValidate names the validation schedule: lakemirror-validate-<table>.
const jobValidate = "validate"

// jobReconcile names the reconciliation schedule: lakemirror-reconcile-<table>.
const jobReconcile = "reconcile"

// tableScheduleJobs are the jobs of every schedule a table can have, in
// the order schedule --pause/--unpause/--delete, drop and a pipelines
// file's stop go through them: the maintenance jobs (scheduleJobs), then
// validate and reconcile.
func tableScheduleJobs() []string {
	return append(slices.Clone(scheduleJobs), jobValidate, jobReconcile)
}

// looksLikeDSN reports whether a source given for a schedule is, or may
// be, a DSN rather than a source name: source.IsDSN, or it holds "@" (a
// go-sql-driver DSN such as "user:pass@/db").
func looksLikeDSN(s string) bool { return source.IsDSN(s) || strings.Contains(s, "@") }

// refuseDSN is the usage error (exit 2) for a --reconcile-source that
// looks like a DSN (looksLikeDSN), nil for a name or "". The DSN is not
// repeated in the message.
func refuseDSN(src string) error {
	if looksLikeDSN(src) {
		return usage("--reconcile-source is a DSN: a schedule stores its request, credentials included; give a source name the worker maps to the DSN (worker -sources name=dsn)")
	}
	return nil
}

// scheduledReconcile is the request a reconcile schedule of the table of
// spec runs: the source by name (src, else the table's own spec.Source),
// srcTable (else spec.SourceTable), defaultReconcile's chunk, pause,
// settling bounds and catch-up timeout, and repair. Its RunID stays
// empty: ReconcileWorkflow uses its workflow id. Errors (usage, exit 2):
// no source, no source table, or a source that looks like a DSN
// (looksLikeDSN): a schedule stores its request, and credentials must
// not be stored there.
func scheduledReconcile(spec activities.TableSpec, src, srcTable string, repair bool) (activities.ReconcileRequest, error) {
	req := defaultReconcile
	req.Spec, req.Source, req.SourceTable, req.Repair = spec, src, srcTable, repair
	if err := refuseDSN(src); err != nil {
		return req, err
	}
	if req.Source == "" {
		req.Source = spec.Source
		if looksLikeDSN(req.Source) {
			return req, usage("%s's source (start --source) is a DSN, which a schedule would store: give --reconcile-source NAME, a name the worker maps to the DSN (worker -sources name=dsn)", spec.Table)
		}
	}
	if req.SourceTable == "" {
		req.SourceTable = spec.SourceTable
	}
	switch {
	case req.Source == "":
		return req, usage("%s was started without --source: give --reconcile-source NAME, a source database the worker maps to a DSN (-sources name=dsn)", spec.Table)
	case req.SourceTable == "":
		return req, usage("%s was started without --source-table: give --reconcile-source-table SCHEMA.TABLE", spec.Table)
	}
	return req, nil
}

// upsertReconcileSchedule creates the table's reconciliation schedule (a
// ReconcileWorkflow of req every interval, overlapping runs skipped), or
// updates its interval and request when it exists. Errors: the schedule
// service's.
func upsertReconcileSchedule(ctx context.Context, sc client.ScheduleClient, id string, every time.Duration, req activities.ReconcileRequest) error {
	action := &client.ScheduleWorkflowAction{ID: id + "-run", Workflow: workflows.ReconcileWorkflowName, Args: []any{req}, TaskQueue: activities.TaskQueue}
	return upsertAction(ctx, sc, id, every, action, map[string]any{"table": req.Spec.Table, "job": jobReconcile})
}

// upsertValidationSchedule creates the table's validation schedule (a
// ValidationWorkflow of spec every interval, overlapping runs skipped),
// or updates its interval and spec when it exists. Errors: the schedule
// service's.
func upsertValidationSchedule(ctx context.Context, sc client.ScheduleClient, id string, every time.Duration, spec activities.TableSpec) error {
	action := &client.ScheduleWorkflowAction{ID: id + "-run", Workflow: workflows.ValidationWorkflowName, Args: []any{spec}, TaskQueue: activities.TaskQueue}
	return upsertAction(ctx, sc, id, every, action, map[string]any{"table": spec.Table, "job": jobValidate})
}

// upsertSchedule creates the schedule, or updates its interval and action
// when it exists. Overlapping runs are skipped.
func upsertSchedule(ctx context.Context, sc client.ScheduleClient, id string, every time.Duration, req activities.MaintenanceRequest) error {
	action := &client.ScheduleWorkflowAction{ID: id + "-run", Workflow: workflows.MaintenanceWorkflowName, Args: []any{req}, TaskQueue: activities.TaskQueue}
	return upsertAction(ctx, sc, id, every, action, map[string]any{"table": req.Spec.Table, "job": req.Job})
}

// upsertAction creates schedule id running action every interval, or
// updates its interval and action when it exists.
func upsertAction(ctx context.Context, sc client.ScheduleClient, id string, every time.Duration, action *client.ScheduleWorkflowAction, memo map[string]any) error {
	spec := client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: every}}}
	_, err := sc.Create(ctx, client.ScheduleOptions{ID: id, Spec: spec, Action: action, Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
		Memo: memo})
	if err == nil {
		return nil
	}
	h := sc.GetHandle(ctx, id)
	if _, derr := h.Describe(ctx); derr != nil {
		return fmt.Errorf("create schedule %s: %w", id, err)
	}
	return h.Update(ctx, client.ScheduleUpdateOptions{DoUpdate: func(in client.ScheduleUpdateInput) (*client.ScheduleUpdate, error) {
		s := in.Description.Schedule
		s.Spec = &spec
		s.Action = action
		return &client.ScheduleUpdate{Schedule: &s}, nil
	}})
}

// createDefaultSchedules creates the table's purge, compaction and expiry
// schedules at their default intervals and parameters, leaving any that
// exist as they are (an operator's own settings win). It returns the ids
// it created. Errors: the schedule service's, other than "exists".
//
// bronzeRetention is the expiry job's (start --bronze-retention; 0 = keep
// bronze for ever).
func createDefaultSchedules(ctx context.Context, sc client.ScheduleClient, spec activities.TableSpec, bronzeRetention time.Duration) ([]string, error) {
	var created []string
	for _, job := range []string{activities.JobCompact, activities.JobExpire, activities.JobPurge} {
		id := workflows.ScheduleID(spec.Table, job)
		if _, err := sc.GetHandle(ctx, id).Describe(ctx); err == nil {
			continue
		}
		f := defaultMaint
		f.bronzeRetention = daysFlag(bronzeRetention)
		req := f.request(spec, job)
		action := &client.ScheduleWorkflowAction{ID: id + "-run", Workflow: workflows.MaintenanceWorkflowName, Args: []any{req}, TaskQueue: activities.TaskQueue}
		_, err := sc.Create(ctx, client.ScheduleOptions{ID: id, Spec: client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: defaultEvery[job]}}},
			Action: action, Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_SKIP, Memo: map[string]any{"table": spec.Table, "job": job}})
		if err != nil {
			return created, fmt.Errorf("create schedule %s: %w", id, err)
		}
		created = append(created, id)
	}
	return created, nil
}
