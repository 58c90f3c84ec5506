package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/spf13/cobra"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/payload"
	"github.com/lakemirror/lakemirror/internal/pipelines"
	"github.com/lakemirror/lakemirror/schemas"
	"github.com/lakemirror/lakemirror/worker/runner"
	"github.com/lakemirror/lakemirror/workflows"
)

// parallel is how many pipelines apply observes or changes at once.
const parallel = 8

func (a *app) applyCmd() *cobra.Command {
	var file string
	var prune, dryRun, yes bool
	var out outputFlag
	cmd := &cobra.Command{
		Use:   "apply -f FILE [--prune] [--dry-run] [--yes] [--output json]",
		Short: "Make the running pipelines what a pipelines file (YAML) declares: plan, then create, update and (--prune) stop",
		Long: `apply reads a pipelines file (docs/pipelines.md; an example is
examples/pipelines.yaml), checks all of it (every problem with its line; exit 2), expands
topic patterns against the broker's topics, and plans it against the running table
workflows:

  + create   a table without a running pipeline: started like starter start, with its
             maintenance schedules
  ~ update   a running pipeline whose batch_size, max_batch_size, max_wait,
             max_quarantine or maintenance differ: the settings update (as starter
             settings) and the schedules (as starter schedule), taking effect at once
  ! refuse   a running pipeline whose topic, key, tables (bronze, history), history
             options, source, signal topic, definition or start_from differ, or a new
             pipeline whose existing tables were fed from another topic or key: these
             cannot change while the pipeline runs; nothing is applied (exit 2)
  - stop     with --prune, a running pipeline the file does not list (its schedules
             are deleted; its tables stay; starter drop removes them)
  = unchanged

It prints the plan, asks for a confirmation ("yes") on a terminal unless --yes, and
applies it. A plan without changes prints "no changes" and sends nothing. Without a
terminal and without --yes it refuses (exit 2). --dry-run prints the plan only.
With --output json (which needs --yes or --dry-run) it prints one JSON object instead:
the plan's steps (action, table, topic, changes, note), the pipelines not in the file,
and once applied what each step did (done, error) and the counts (applied).`,
		Example: "  starter apply -f pipelines.yaml --dry-run\n  starter apply -f pipelines.yaml --prune --yes",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return usage("give the pipelines file: apply -f FILE")
			}
			asJSON, err := out.json()
			if err != nil {
				return err
			}
			if asJSON && !yes && !dryRun {
				return usage("--output json needs --yes or --dry-run: apply cannot ask for a confirmation in JSON")
			}
			return a.apply(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), file, prune, dryRun, yes, asJSON)
		},
	}
	out.bind(cmd)
	cmd.Flags().StringVarP(&file, "file", "f", "", "pipelines file (YAML)")
	cmd.Flags().BoolVar(&prune, "prune", false, "also stop running pipelines the file does not list")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print the plan and change nothing")
	cmd.Flags().BoolVar(&yes, "yes", false, "apply without asking for a confirmation")
	return cmd
}

// desiredPipeline is a pipeline from the file with the table spec that
// starts it.
type desiredPipeline struct {
	pipelines.Pipeline
	spec activities.TableSpec
}

func (a *app) apply(ctx context.Context, out, errw io.Writer, file string, prune, dryRun, yes, asJSON bool) error {
	desired, err := a.loadPipelines(ctx, errw, file)
	if err != nil {
		return err
	}
	c, err := runner.Dial(a.settings, nil)
	if err != nil {
		return err
	}
	defer c.Close()
	cat := a.catalogIfReachable(ctx)
	if cl, ok := cat.(interface{ Close() error }); ok {
		defer cl.Close()
	}
	wanted := make([]pipelines.Pipeline, len(desired))
	specs := map[string]activities.TableSpec{}
	for i, d := range desired {
		wanted[i] = d.Pipeline
		specs[strings.ToLower(d.Table)] = d.spec
	}
	obs, err := observe(ctx, c, cat, wanted)
	if err != nil {
		return err
	}
	plan := pipelines.Compute(wanted, obs, prune)
	for _, st := range plan.Steps {
		if st.Action != pipelines.ActionCreate {
			continue
		}
		if err := a.checkDataCollection(ctx, specs[strings.ToLower(st.Table)]); err != nil {
			return err
		}
	}
	if asJSON {
		return applyJSON(ctx, out, c, plan, specs, dryRun)
	}
	plan.Write(out)
	if refused := plan.Refused(); len(refused) > 0 {
		return refusedError(refused)
	}
	if !plan.HasChanges() {
		return nil
	}
	if dryRun {
		fmt.Fprintln(out, "dry run: nothing was applied")
		return nil
	}
	if !yes {
		if err := a.confirm(out, "Apply this plan? Only 'yes' is accepted:", "yes"); err != nil {
			return err
		}
	}
	return applyPlan(ctx, out, c, plan, specs)
}

// refusedError is the usage error (exit 2) of a plan with refused steps.
func refusedError(refused []pipelines.Step) error {
	var names []string
	for _, s := range refused {
		names = append(names, s.Table)
	}
	return usage("refused: %s (the plan's \"!\" lines): nothing was applied; give those settings as the pipelines have them, or drop the pipelines first (starter drop TABLE, with --drop-tables to start the tables over)",
		strings.Join(names, ", "))
}

// loadPipelines reads, checks and resolves the file, printing warnings to
// errw; each pipeline's spec is built and its definition read. Errors: the
// file's problems, printed one a line (usage, exit 2); the broker's topic
// list when the file has patterns (exit 1).
func (a *app) loadPipelines(ctx context.Context, errw io.Writer, file string) ([]desiredPipeline, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, usage("%v", err)
	}
	f, err := pipelines.Parse(file, data)
	if err != nil {
		return nil, problemsError(errw, err, file)
	}
	topics, known, err := a.topics(ctx, f.HasPatterns())
	if err != nil {
		return nil, err
	}
	resolved, warns, err := f.Resolve(topics, known)
	for _, w := range warns {
		fmt.Fprintln(errw, w.String())
	}
	if err != nil {
		return nil, problemsError(errw, err, file)
	}
	return withSpecs(errw, file, resolved)
}

// withSpecs builds each pipeline's table spec, reading its definition
// (columns, and the key when the pipeline names none). Errors: a
// definition that cannot be read, printed with its line (usage, exit 2).
func withSpecs(errw io.Writer, file string, resolved []pipelines.Pipeline) ([]desiredPipeline, error) {
	var out []desiredPipeline
	var bad pipelines.Problems
	for _, p := range resolved {
		var cols []cdc.Column
		if p.Definition != "" {
			def, err := schemas.LoadTableDefinition(p.Definition)
			if err != nil {
				bad = append(bad, pipelines.Problem{File: file, Line: p.Origin.Line, Path: p.Origin.Path + ".definition", Msg: err.Error()})
				continue
			}
			cols = def.Columns
			if len(p.Key) == 0 {
				p.Key = def.KeyColumns
			}
			p.Columns = columnsText(cols)
		}
		out = append(out, desiredPipeline{Pipeline: p, spec: specOf(p, cols)})
	}
	if len(bad) > 0 {
		return nil, problemsError(errw, bad, file)
	}
	return out, nil
}

// problemsError prints a file's problems and returns the usage error that
// ends the command.
func problemsError(errw io.Writer, err error, file string) error {
	var ps pipelines.Problems
	if !errors.As(err, &ps) {
		return usage("%s: %v", file, err)
	}
	for _, p := range ps {
		fmt.Fprintln(errw, p.String())
	}
	n := len(ps.Errors())
	word := "problems"
	if n == 1 {
		word = "problem"
	}
	return usage("%s: %d %s; nothing was applied", file, n, word)
}

// topics lists the broker's topics: required for a file with patterns
// (an error, exit 1, when Kafka cannot be read), else read when possible
// within 3 s, for the warnings about topics that do not exist.
func (a *app) topics(ctx context.Context, required bool) ([]string, bool, error) {
	kc, err := runner.NewKafka(a.settings)
	if err == nil {
		defer kc.Close()
		wait := 3 * time.Second
		if required {
			wait = 30 * time.Second
		}
		tctx, cancel := context.WithTimeout(ctx, wait)
		defer cancel()
		var topics []string
		if topics, err = kc.Topics(tctx); err == nil {
			return topics, true, nil
		}
	}
	if required {
		return nil, false, fmt.Errorf("the file has topic patterns, which need the broker's topics: %w", err)
	}
	return nil, false, nil
}

// specOf is the table spec `starter start` would build for p.
func specOf(p pipelines.Pipeline, cols []cdc.Column) activities.TableSpec {
	spec := p.Settings // payload.Settings' values
	spec.Table, spec.Topic, spec.KeyColumns = p.Table, p.Topic, p.Key
	spec.HistoryColumns, spec.HistoryCollapseTx = p.HistoryColumns, p.HistoryCollapseTx
	spec.Source, spec.SourceTable, spec.SignalTopic, spec.Columns = p.Source, p.SourceTable, p.SignalTopic, cols
	spec.WithoutBronze, spec.WithoutHistory, spec.Layout, spec.DeleteFormat = !p.Bronze, !p.History, p.Layout, p.DeleteFormat
	return spec
}

// pipelineOf is a running table's pipeline as its spec (from the status
// query) and schedules say.
func pipelineOf(spec activities.TableSpec, m pipelines.Maintenance) pipelines.Pipeline {
	spec = spec.Defaults()
	p := pipelines.Pipeline{Table: spec.Table, Topic: spec.Topic, Key: spec.KeyColumns, Settings: spec.SettingsOnly(),
		Bronze: !spec.WithoutBronze, History: !spec.WithoutHistory, HistoryColumns: spec.HistoryColumns, HistoryCollapseTx: spec.HistoryCollapseTx,
		Source: spec.Source, SourceTable: spec.SourceTable, SignalTopic: spec.SignalTopic, Columns: columnsText(spec.Columns), Maintenance: m,
		Layout: spec.Layout, DeleteFormat: spec.DeleteFormat}
	if len(p.Key) == 0 {
		p.Key = nil
	}
	if len(p.HistoryColumns) == 0 {
		p.HistoryColumns = nil
	}
	return p
}

// columnsText is declared columns in the form plans compare: their JSON
// ("" for none).
func columnsText(cols []cdc.Column) string {
	if len(cols) == 0 {
		return ""
	}
	b, _ := json.Marshal(cols)
	return string(b)
}

// observe reads what runs: for each desired table its workflow (the spec
// of a running one from its status query, its schedules; the close status
// of a closed one) and, without a running pipeline, what its existing
// mirror records (when cat is not nil); and every other running table
// workflow, from Temporal visibility. Errors: Temporal's, other than a
// workflow or schedule that does not exist.
func observe(ctx context.Context, c client.Client, cat catalog.Catalog, desired []pipelines.Pipeline) (pipelines.Observed, error) {
	obs := pipelines.Observed{Stored: map[string]pipelines.Stored{}, LastRun: map[string]string{}}
	type seen struct {
		running *pipelines.Pipeline
		lastRun string
		stored  *pipelines.Stored
		err     error
	}
	results := make([]seen, len(desired))
	forEach(len(desired), func(i int) {
		r := &results[i]
		table := desired[i].Table
		desc, err := c.DescribeWorkflowExecution(ctx, workflows.WorkflowID(table), "")
		var nf *serviceerror.NotFound
		switch {
		case errors.As(err, &nf):
		case err != nil:
			r.err = fmt.Errorf("describe the workflow of %s: %w", table, err)
			return
		case desc.WorkflowExecutionInfo.Status == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
			spec, err := runningSpec(ctx, c, table, desc)
			if err != nil {
				r.err = err
				return
			}
			m, err := observeSchedules(ctx, c.ScheduleClient(), spec.Table)
			if err != nil {
				r.err = err
				return
			}
			p := pipelineOf(spec, m)
			r.running = &p
			return
		default:
			r.lastRun = statusName(desc.WorkflowExecutionInfo.Status)
		}
		if cat == nil {
			return
		}
		name, err := lake.ParseTableName(table)
		if err != nil {
			return
		}
		tbl, err := lake.LoadTable(ctx, cat, name.Mirror())
		if err != nil || tbl == nil {
			return
		}
		key, _ := lakecat.KeyColumnsOf(tbl)
		r.stored = &pipelines.Stored{Topic: lakecat.TopicOf(tbl), Key: key}
	})
	want := map[string]bool{}
	for i, r := range results {
		if r.err != nil {
			return obs, r.err
		}
		k := strings.ToLower(desired[i].Table)
		want[k] = true
		switch {
		case r.running != nil:
			obs.Running = append(obs.Running, *r.running)
		case r.lastRun != "":
			obs.LastRun[k] = r.lastRun
		}
		if r.stored != nil {
			obs.Stored[k] = *r.stored
		}
	}
	others, err := listTableWorkflows(ctx, c, true)
	if err != nil {
		return obs, err
	}
	for _, e := range others {
		if !want[strings.ToLower(e.Table)] {
			obs.Running = append(obs.Running, pipelines.Pipeline{Table: e.Table, Topic: e.Topic})
		}
	}
	return obs, nil
}

// runningSpec is a running table's live spec, from its status query; a
// workflow that cannot answer queries yet (its first workflow task has not
// run) has the spec it was started with, from its memo. Errors: the
// query's (a query that times out: no worker answers).
func runningSpec(ctx context.Context, c client.Client, table string, desc *workflowservice.DescribeWorkflowExecutionResponse) (activities.TableSpec, error) {
	qctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	st, err := queryStatus(qctx, c, table)
	if err == nil {
		return st.Spec, nil
	}
	var notReady *serviceerror.WorkflowNotReady
	if p := desc.WorkflowExecutionInfo.GetMemo().GetFields()["spec"]; errors.As(err, &notReady) && p != nil {
		var spec activities.TableSpec
		if derr := converter.GetDefaultDataConverter().FromPayload(p, &spec); derr == nil && spec.Table != "" {
			return spec, nil
		}
	}
	if qctx.Err() != nil {
		return activities.TableSpec{}, fmt.Errorf("read the settings of %s: its workflow did not answer the status query within %s: is a worker running?", table, queryTimeout)
	}
	return activities.TableSpec{}, fmt.Errorf("read the settings of %s: %w", table, err)
}

// scheduleJobs are the maintenance jobs in the order apply handles them.
var scheduleJobs = []string{activities.JobCompact, activities.JobExpire, activities.JobPurge}

// observeSchedules reads a table's maintenance schedules: each job's
// interval (0 when it has no schedule) and the parameters its schedule
// runs the job with. Errors: the schedule service's, other than not found.
func observeSchedules(ctx context.Context, sc client.ScheduleClient, table string) (pipelines.Maintenance, error) {
	var m pipelines.Maintenance
	for _, job := range scheduleJobs {
		desc, err := sc.GetHandle(ctx, workflows.ScheduleID(table, job)).Describe(ctx)
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			continue
		}
		if err != nil {
			return m, fmt.Errorf("describe schedule %s: %w", workflows.ScheduleID(table, job), err)
		}
		var every time.Duration
		if s := desc.Schedule.Spec; s != nil && len(s.Intervals) > 0 {
			every = s.Intervals[0].Every
		}
		var req activities.MaintenanceRequest
		if act, ok := desc.Schedule.Action.(*client.ScheduleWorkflowAction); ok && len(act.Args) > 0 {
			if p, ok := act.Args[0].(*commonpb.Payload); ok {
				_ = converter.GetDefaultDataConverter().FromPayload(p, &req) // unreadable: compared as zero, so apply rewrites it
			}
		}
		switch job {
		case activities.JobCompact:
			m.CompactEvery, m.TargetFileSize = every, req.TargetFileSize
		case activities.JobExpire:
			m.ExpireEvery, m.RetainLast, m.OlderThan, m.CleanOrphans = every, req.RetainLast, req.OlderThan, req.CleanOrphans
			m.BronzeRetention = req.BronzeRetention
		case activities.JobPurge:
			m.PurgeEvery, m.Retention, m.RetentionFloor = every, req.Retention, req.RetentionFloor
		}
	}
	return m, nil
}

// maintRequest is the job request a schedule of m runs.
func maintRequest(spec activities.TableSpec, job string, m pipelines.Maintenance) activities.MaintenanceRequest {
	f := maintFlags{retention: m.Retention, floor: m.RetentionFloor, olderThan: m.OlderThan, targetSize: m.TargetFileSize, retainLast: m.RetainLast, orphans: m.CleanOrphans,
		bronzeRetention: daysFlag(m.BronzeRetention)}
	return f.request(spec, job)
}

// jobOf names the maintenance job a plan field belongs to ("" for the
// table settings).
func jobOf(field string) string {
	switch field {
	case "maintenance.compact_every", "maintenance.target_file_size":
		return activities.JobCompact
	case "maintenance.expire_every", "maintenance.retain_last", "maintenance.older_than", "maintenance.clean_orphans", "maintenance.bronze_retention":
		return activities.JobExpire
	case "maintenance.purge_every", "maintenance.retention", "maintenance.retention_floor":
		return activities.JobPurge
	}
	return ""
}

func jobEvery(m pipelines.Maintenance, job string) time.Duration {
	switch job {
	case activities.JobCompact:
		return m.CompactEvery
	case activities.JobExpire:
		return m.ExpireEvery
	}
	return m.PurgeEvery
}

// applyPlan carries out the plan's creates, updates and stops, several at
// once, and prints what each did in plan order, then a summary. Errors:
// the steps that failed, named (exit 1); the others are applied.
func applyPlan(ctx context.Context, out io.Writer, c client.Client, plan pipelines.Plan, specs map[string]activities.TableSpec) error {
	steps, lines, errs := runSteps(ctx, c, plan, specs)
	done := map[pipelines.Action]int{}
	var failed []string
	for i, s := range steps {
		for _, l := range lines[i] {
			fmt.Fprintln(out, l)
		}
		if errs[i] != nil {
			fmt.Fprintf(out, "! %s %s failed: %v\n", s.Action, s.Table, errs[i])
			failed = append(failed, s.Table)
			continue
		}
		done[s.Action]++
	}
	fmt.Fprintf(out, "applied: %d created, %d updated, %d stopped\n", done[pipelines.ActionCreate], done[pipelines.ActionUpdate], done[pipelines.ActionStop])
	if len(failed) > 0 {
		return fmt.Errorf("%d of %d changes failed (%s); the others were applied: run apply again once the cause is fixed", len(failed), len(steps), strings.Join(failed, ", "))
	}
	return nil
}

// runSteps carries out the plan's creates, then updates, then stops,
// several at once, and returns those steps in that order with the lines
// that say what each did and each one's error (nil: applied).
func runSteps(ctx context.Context, c client.Client, plan pipelines.Plan, specs map[string]activities.TableSpec) ([]pipelines.Step, [][]string, []error) {
	var steps []pipelines.Step
	for _, a := range []pipelines.Action{pipelines.ActionCreate, pipelines.ActionUpdate, pipelines.ActionStop} {
		for _, s := range plan.Steps {
			if s.Action == a {
				steps = append(steps, s)
			}
		}
	}
	lines := make([][]string, len(steps))
	errs := make([]error, len(steps))
	sc := c.ScheduleClient()
	forEach(len(steps), func(i int) {
		lines[i], errs[i] = applyStep(ctx, c, sc, steps[i], specs[strings.ToLower(steps[i].Table)])
	})
	return steps, lines, errs
}

// applyStep carries out one step and returns the lines that say what it
// did.
func applyStep(ctx context.Context, c client.Client, sc client.ScheduleClient, s pipelines.Step, spec activities.TableSpec) ([]string, error) {
	var lines []string
	switch s.Action {
	case pipelines.ActionCreate:
		run, err := startTable(ctx, c, spec)
		if err != nil {
			return nil, err
		}
		lines = append(lines, fmt.Sprintf("+ created %s ← %s (workflow %s)", spec.Table, spec.Topic, run.GetID()))
		for _, job := range scheduleJobs {
			l, err := syncSchedule(ctx, sc, spec, job, s.Desired.Maintenance)
			if err != nil {
				return lines, fmt.Errorf("the pipeline runs, but its maintenance schedules: %w", err)
			}
			lines = append(lines, l...)
		}
	case pipelines.ActionUpdate:
		spec.Table = s.Observed.Table // the running pipeline's name (schedule ids)
		var req workflows.SettingsRequest
		jobs := map[string]bool{}
		for _, ch := range s.Changes {
			switch ch.Field {
			case "layout.mirror":
				req.MirrorLayout = &spec.Layout.Mirror
			case "layout.history":
				req.HistoryLayout = &spec.Layout.History
			case "layout.bronze":
				req.BronzeLayout = &spec.Layout.Bronze
			default:
				if st := payload.LookupSetting(ch.Field); st != nil && st.Live {
					req.Set(st.Name, st.Get(spec))
				} else if job := jobOf(ch.Field); job != "" {
					jobs[job] = true
				} else {
					return nil, fmt.Errorf("%s cannot change while the pipeline runs", ch.Field)
				}
			}
		}
		if req != (workflows.SettingsRequest{}) {
			var now activities.TableSpec
			if err := sendUpdate(ctx, c, spec.Table, workflows.UpdateSettings, req, &now); err != nil {
				return nil, err
			}
			lines = append(lines, fmt.Sprintf("~ updated %s: %s, waiting at most %s; at most %d quarantined records per batch",
				spec.Table, batchBounds(now), now.MaxWait, now.Defaults().MaxQuarantine))
		}
		for _, job := range scheduleJobs {
			if !jobs[job] {
				continue
			}
			l, err := syncSchedule(ctx, sc, spec, job, s.Desired.Maintenance)
			if err != nil {
				return lines, err
			}
			lines = append(lines, l...)
		}
	case pipelines.ActionStop:
		if err := c.SignalWorkflow(ctx, workflows.WorkflowID(s.Table), "", workflows.SignalStop, nil); err != nil {
			return nil, notFoundOr(s.Table, err)
		}
		lines = append(lines, fmt.Sprintf("- stopping %s (stop sent: it completes after its in-flight batch; its tables stay)", s.Table))
		for _, job := range tableScheduleJobs() {
			id := workflows.ScheduleID(s.Table, job)
			err := deleteSchedule(ctx, sc, id)
			var nf *serviceerror.NotFound
			switch {
			case err == nil:
				lines = append(lines, "  deleted schedule "+id)
			case !errors.As(err, &nf):
				return lines, err
			}
		}
	}
	return lines, nil
}

// syncSchedule makes the job's schedule what m says: created or updated
// at its interval with its parameters, or deleted for an interval of 0
// (one that does not exist is left so). It returns what it did.
func syncSchedule(ctx context.Context, sc client.ScheduleClient, spec activities.TableSpec, job string, m pipelines.Maintenance) ([]string, error) {
	id := workflows.ScheduleID(spec.Table, job)
	every := jobEvery(m, job)
	if every <= 0 {
		err := deleteSchedule(ctx, sc, id)
		var nf *serviceerror.NotFound
		switch {
		case errors.As(err, &nf):
			return nil, nil
		case err != nil:
			return nil, err
		}
		return []string{"  deleted schedule " + id}, nil
	}
	if err := upsertSchedule(ctx, sc, id, every, maintRequest(spec, job, m)); err != nil {
		return nil, err
	}
	return []string{fmt.Sprintf("  schedule %s: %s every %s", id, job, pipelines.FormatDuration(every))}, nil
}

// deleteSchedule deletes a schedule; one that does not exist is a
// *serviceerror.NotFound.
func deleteSchedule(ctx context.Context, sc client.ScheduleClient, id string) error {
	return sc.GetHandle(ctx, id).Delete(ctx)
}

// forEach runs f(0..n-1), parallel at a time.
func forEach(n int, f func(i int)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, parallel)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			f(i)
		}()
	}
	wg.Wait()
}

// statusName is a workflow execution status in lower case:
// "running", "completed", "failed", "terminated", "canceled",
// "timed-out", "continued-as-new".
func statusName(s enumspb.WorkflowExecutionStatus) string {
	if n, ok := statusNames[s]; ok {
		return n
	}
	return strings.ToLower(s.String())
}

var statusNames = map[enumspb.WorkflowExecutionStatus]string{
	enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:          "running",
	enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:        "completed",
	enumspb.WORKFLOW_EXECUTION_STATUS_FAILED:           "failed",
	enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED:         "canceled",
	enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED:       "terminated",
	enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW: "continued-as-new",
	enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT:        "timed-out",
}
