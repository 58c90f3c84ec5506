package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/spf13/cobra"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/workflows"
)

// maintFlags are the job options shared by maintain and schedule.
type maintFlags struct {
	retention, floor, olderThan time.Duration
	targetSize                  int64
	retainLast                  int
	orphans                     bool
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
}

// validate checks a job name and, for purge, the retention window
// against the floor, before anything starts: usage errors (exit 2).
func (f *maintFlags) validate(job string) error {
	switch job {
	case activities.JobPurge:
		if f.retention < f.floor {
			return usage("--retention %s is shorter than the floor %s: a purge could let a replayed event resurrect a row; lower --retention-floor only on purpose", f.retention, f.floor)
		}
	case activities.JobCompact, activities.JobExpire:
	default:
		return usage("unknown job %q: give purge, compact or expire", job)
	}
	return nil
}

func (f *maintFlags) request(spec activities.TableSpec, job string) activities.MaintenanceRequest {
	return activities.MaintenanceRequest{Spec: spec, Job: job, Retention: f.retention, RetentionFloor: f.floor,
		TargetFileSize: f.targetSize, RetainLast: f.retainLast, OlderThan: f.olderThan, CleanOrphans: f.orphans}
}

func (a *app) maintainCmd() *cobra.Command {
	var f maintFlags
	var dryRun bool
	var out outputFlag
	cmd := &cobra.Command{
		Use:   "maintain TABLE JOB",
		Short: "Run a maintenance job now: purge (tombstones), compact (apply position deletes), expire (snapshots, orphans)",
		Long: `maintain starts a MaintenanceWorkflow for the table and waits for it: purge removes
soft-deleted rows older than --retention and raises the purge horizon (--dry-run only
counts what it would remove and writes nothing); compact rewrites data files with their
position deletes applied; expire drops old Iceberg snapshots (and, with --clean-orphans,
unreferenced files). They run alongside the table's batches: a commit conflict makes one
side retry, nothing is lost. It prints what the job did, or with --output json the
job's result (the fields of activities.MaintenanceResult).`,
		Example: "  starter maintain shop.orders compact\n  starter maintain shop.orders purge --retention 720h --dry-run\n  starter maintain shop.orders purge --output json",
		Args:    cobra.ExactArgs(2),
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
	if res.Expire != nil {
		fmt.Fprintf(w, "snapshot expiry of %s:\n", table)
		for _, kind := range spec.Tables() {
			e, ok := res.Expire[kind]
			if !ok {
				continue
			}
			fmt.Fprintf(w, "  %s: %d -> %d snapshots, %d orphan files deleted (%s)\n", kind, e.SnapshotsBefore, e.SnapshotsAfter, e.OrphansDeleted, mib(e.OrphanBytes))
		}
	}
}

func (a *app) scheduleCmd() *cobra.Command {
	var f maintFlags
	var purge, compact, expire, validateEvery time.Duration
	var remove, pause, unpause bool
	cmd := &cobra.Command{
		Use:   "schedule TABLE",
		Short: "Create or update the table's Temporal Schedules for purge, compaction and expiry",
		Long: `schedule keeps one Temporal Schedule per periodic job of the table (ids
lakemirror-<job>-<table>), visible and pausable in the Web UI's Schedules page. With
no interval flag it schedules all three jobs at their defaults; with some, it creates or
updates only those jobs and leaves the others as they are. An interval of 0 deletes that
job's schedule.`,
		Example: "  starter schedule shop.orders --compact-every 1h --purge-every 24h --expire-every 24h\n  starter schedule shop.orders --pause",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			c, err := a.dial(ctx)
			if err != nil {
				return err
			}
			defer c.Close()
			sc := c.ScheduleClient()
			jobs := map[string]time.Duration{activities.JobPurge: purge, activities.JobCompact: compact, activities.JobExpire: expire}
			flagOf := map[string]string{activities.JobPurge: "purge-every", activities.JobCompact: "compact-every", activities.JobExpire: "expire-every"}
			validateGiven := cmd.Flags().Changed("validate-every")
			anyGiven := validateGiven
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
				for _, job := range append(slices.Sorted(maps.Keys(jobs)), jobValidate) {
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
					fmt.Fprintf(cmd.OutOrStdout(), "%s schedule %s\n", verb, id)
				}
				if acted == 0 {
					return a.noSchedules(ctx, c, args[0])
				}
				return nil
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
			for job, every := range jobs {
				if anyGiven && !cmd.Flags().Changed(flagOf[job]) {
					continue // not asked for: left as it is
				}
				id := workflows.ScheduleID(args[0], job)
				if every <= 0 {
					if sc.GetHandle(ctx, id).Delete(ctx) == nil {
						fmt.Fprintf(cmd.OutOrStdout(), "deleted schedule %s\n", id)
					}
					continue
				}
				if err := upsertSchedule(ctx, sc, id, every, f.request(st.Spec, job)); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "schedule %s: %s every %s\n", id, job, every)
			}
			if validateGiven {
				id := workflows.ScheduleID(args[0], jobValidate)
				if validateEvery <= 0 {
					if sc.GetHandle(ctx, id).Delete(ctx) == nil {
						fmt.Fprintf(cmd.OutOrStdout(), "deleted schedule %s\n", id)
					}
					return nil
				}
				if err := upsertValidationSchedule(ctx, sc, id, validateEvery, st.Spec); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "schedule %s: %s every %s\n", id, jobValidate, validateEvery)
			}
			return nil
		},
	}
	f.bind(cmd)
	cmd.Flags().DurationVar(&purge, "purge-every", defaultEvery[activities.JobPurge], "tombstone purge interval (0 = none)")
	cmd.Flags().DurationVar(&compact, "compact-every", defaultEvery[activities.JobCompact], "compaction interval (0 = none)")
	cmd.Flags().DurationVar(&expire, "expire-every", defaultEvery[activities.JobExpire], "snapshot expiry interval (0 = none)")
	cmd.Flags().DurationVar(&validateEvery, "validate-every", 0, "validation interval (`starter validate` on a schedule; only when given, 0 = delete it)")
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
func createDefaultSchedules(ctx context.Context, sc client.ScheduleClient, spec activities.TableSpec) ([]string, error) {
	var created []string
	for _, job := range []string{activities.JobCompact, activities.JobExpire, activities.JobPurge} {
		id := workflows.ScheduleID(spec.Table, job)
		if _, err := sc.GetHandle(ctx, id).Describe(ctx); err == nil {
			continue
		}
		req := defaultMaint.request(spec, job)
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
