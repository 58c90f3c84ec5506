package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/human"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/layout"
	"github.com/lakemirror/lakemirror/internal/payload"
	"github.com/lakemirror/lakemirror/worker/runner"
	"github.com/lakemirror/lakemirror/workflows"
)

// sendUpdate sends an update to a table workflow and waits for its answer.
func sendUpdate(ctx context.Context, c client.Client, table, name string, arg, out any) error {
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: workflows.WorkflowID(table), UpdateName: name,
		Args: []any{arg}, WaitForStage: client.WorkflowUpdateStageCompleted})
	if err != nil {
		return notFoundOr(table, err)
	}
	if err := h.Get(ctx, out); err != nil {
		var ae *temporal.ApplicationError
		if errors.As(err, &ae) { // the handler's own reason, without the activity error chain
			return errors.New(ae.Message())
		}
		return err
	}
	return nil
}

func (a *app) backfillCmd() *cobra.Command {
	var ranges []string
	var from string
	var wait bool
	var out outputFlag
	cmd := &cobra.Command{
		Use:   "backfill TABLE (--from TIME | --range P:FROM-TO ...)",
		Short: "Re-apply past Kafka records to a table (safe: applied changes are no-ops, bronze is not duplicated)",
		Long: `backfill queues a re-apply of records the table has already passed: explicit offset
ranges per partition (--range 0:100-200, end exclusive), or everything from a time on
(--from 2026-11-29T10:00:00Z, 2026-11-29T10:00:00+01:00, or a duration ago: 90m,
2h, 2d, 1d12h), up to the table's
current position. The workflow applies it between regular batches. With --wait a
progress bar (rate, ETA) follows it to the end.`,
		Args: tableArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			asJSON, err := out.json()
			if err != nil {
				return err
			}
			var req workflows.BackfillRequest
			for _, r := range ranges {
				rg, err := parseRange(r)
				if err != nil {
					return usage("%v", err)
				}
				req.Ranges = append(req.Ranges, rg)
			}
			if from != "" && len(ranges) > 0 {
				return usage("give --range or --from, not both")
			}
			if from != "" {
				t, err := parseTime(from, time.Now())
				if err != nil {
					return usage("%v", err)
				}
				if t.After(time.Now()) {
					return usage("--from %s is in the future: nothing to re-apply", t.UTC().Format(time.RFC3339))
				}
				req.From = t
			}
			if len(req.Ranges) == 0 && req.From.IsZero() {
				return usage("give --range or --from")
			}
			c, before, err := a.dialStatus(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			defer c.Close()
			var acc workflows.BackfillAccepted
			if err := sendUpdate(cmd.Context(), c, args[0], workflows.UpdateBackfill, req, &acc); err != nil {
				return err
			}
			var parts []string
			for _, r := range acc.Ranges {
				parts = append(parts, fmt.Sprintf("p%d [%d,%d)", r.Partition, r.From, r.To))
			}
			res := backfillJSON{Table: args[0], Records: acc.Records, Ranges: acc.Ranges}
			if res.Ranges == nil {
				res.Ranges = []lake.Range{}
			}
			if !asJSON {
				fmt.Fprintf(cmd.OutOrStdout(), "backfill of %s accepted: %d records: %s\n", args[0], acc.Records, strings.Join(parts, " "))
			}
			if wait && acc.Records > 0 {
				// this backfill ends when everything queued before it and it is done
				base := before.Totals.BackfillDone
				total := before.Totals.BackfillRequested - before.Totals.BackfillDone + acc.Records
				get := func(ctx context.Context) (workflows.Status, error) { return queryStatus(ctx, c, args[0]) }
				if err := follow(cmd.Context(), get, args[0], newProgress(cmd.ErrOrStderr(), "backfill "+args[0], "records"),
					func(st workflows.Status) (int64, int64, bool) {
						done := st.Totals.BackfillDone - base
						return done, total, done >= total
					}); err != nil {
					return err
				}
				res.Done = true
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), res)
			}
			return nil
		},
	}
	out.bind(cmd)
	cmd.Flags().StringSliceVar(&ranges, "range", nil, "offset range P:FROM-TO (end exclusive); repeatable")
	cmd.Flags().StringVar(&from, "from", "", "re-apply from this time on: RFC 3339 (2026-11-29T10:00:00Z, with an offset such as +01:00) or a duration ago (90m, 2h, 2d, 1d12h; d = 24 h)")
	cmd.Flags().BoolVar(&wait, "wait", false, "follow the backfill to its end with a progress bar")
	return cmd
}

// backfillJSON is what backfill prints with --output json
// (docs/operating.md): the table, the records queued and their offset
// ranges (end exclusive), and with --wait whether it was followed to its
// end (always true then: a --wait that fails exits with an error instead).
type backfillJSON struct {
	Table   string       `json:"table"`
	Records int64        `json:"records"`
	Ranges  []lake.Range `json:"ranges"`
	Done    bool         `json:"done"`
}

func (a *app) waitCmd() *cobra.Command {
	var timeout time.Duration
	var out outputFlag
	cmd := &cobra.Command{
		Use:   "wait TABLE",
		Short: "Wait until a table has caught up with its topic (progress bar with rate and ETA)",
		Long: `wait follows a table until it has caught up with its topic: it has planned
against the topic, has no lag and runs no backfill. The progress bar goes to
stderr; with --output json it prints the caught-up table's status object to stdout
(the fields of status --output json). A blocked table ends the wait with exit 1.`,
		Args: tableArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			asJSON, err := out.json()
			if err != nil {
				return err
			}
			c, err := a.dialWorker(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			first, err := queryStatus(ctx, c, args[0])
			if err != nil {
				return err
			}
			lr := newLagReader(a.settings)
			defer lr.Close()
			get := func(ctx context.Context) (workflows.Status, error) {
				st, _, err := lr.status(ctx, c, args[0])
				return st, err
			}
			var last workflows.Status
			err = follow(ctx, get, args[0], newProgress(cmd.ErrOrStderr(), "catch-up "+args[0], "records"),
				func(st workflows.Status) (int64, int64, bool) {
					last = st
					return caughtUp(first, st)
				})
			if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) && cmd.Context().Err() == nil {
				return fmt.Errorf("%s did not catch up within --timeout %s: phase %s, lag %d records", args[0], timeout, last.Phase, last.TotalLag)
			}
			if err == nil && asJSON {
				return writeJSON(cmd.OutOrStdout(), last)
			}
			return err
		},
	}
	out.bind(cmd)
	cmd.Flags().DurationVar(&timeout, "timeout", time.Hour, "give up after this long (exit 1)")
	return cmd
}

// caughtUp measures a catch-up from status first to st: records applied
// since first, that plus the current lag as the total, and whether the
// table has caught up: it has planned against an existing topic (it knows
// the partitions' high watermarks), has no lag and runs no backfill. A
// table waiting for its topic to be created has not caught up.
func caughtUp(first, st workflows.Status) (done, total int64, finished bool) {
	done = max(st.Totals.Records-first.Totals.Records, 0)
	finished = !st.TopicMissing && len(st.HighWatermarks) > 0 && st.TotalLag == 0 &&
		st.Phase != workflows.PhaseBackfill && st.Phase != workflows.PhaseStarting
	return done, done + st.TotalLag, finished
}

// follow polls the table's status and shows progress until done reports
// true; a blocked table ends it with an error.
func follow(ctx context.Context, get func(context.Context) (workflows.Status, error), table string, p *progress, measure func(workflows.Status) (done, total int64, finished bool)) error {
	defer p.finish()
	for first := true; ; first = false {
		st, err := get(ctx)
		if err != nil {
			return err
		}
		done, total, finished := measure(st)
		if first && finished && done == 0 && total == 0 {
			p.line("already caught up (lag 0 records)") // not a 0/0 bar
			return nil
		}
		p.update(done, total)
		if finished {
			return nil
		}
		if st.Phase == workflows.PhaseBlocked || st.Phase == workflows.PhaseSchemaBlocked {
			return fmt.Errorf("%s is %s: %s", table, st.Phase, st.LastError)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func (a *app) settingsCmd() *cobra.Command {
	var values activities.TableSpec // the flags of payload.Settings' live settings
	var lay layoutFlags
	var deleteFormat string
	var out outputFlag
	cmd := &cobra.Command{
		Use:   "settings TABLE [--batch-size N] [--max-wait D] [...] [--mirror-partition-by F ...] [--history-partition-by F ...] [--bronze-compression C]",
		Short: "Change a running table's batch bounds or layout (takes effect at the next batch)",
		Long: `settings changes a running table's batch bounds, quarantine limit or layout
(partition fields, sort order, Parquet compression) through a workflow update;
the change takes effect at the table's next batch. It prints the table's
effective settings, or with --output json the table's spec as
the workflow holds it after the change (the fields of "spec" in status --output json).
Without a setting to change, it prints them as they are.`,
		Args: tableArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			asJSON, err := out.json()
			if err != nil {
				return err
			}
			var req workflows.SettingsRequest
			for i := range payload.Settings {
				if st := &payload.Settings[i]; st.Live && cmd.Flags().Changed(st.Flag()) {
					req.Set(st.Name, st.Get(values))
				}
			}
			if _, err := lay.tables(); err != nil {
				return usage("%v", err)
			}
			if err := lay.noEmptyCodec(cmd.Flags()); err != nil {
				return err
			}
			if cmd.Flags().Changed("delete-format") {
				f, err := layout.ParseDeleteFormat(deleteFormat)
				if err != nil {
					return usage("--delete-format: %v", err)
				}
				req.DeleteFormat = &f // the workflow refuses a change (SettingsRequest.CheckDeleteFormat)
			}
			if err := req.Validate(); req != (workflows.SettingsRequest{}) && err != nil {
				return settingError(err) // the layout flags were checked above
			}
			c, err := a.dialWorker(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			defer c.Close()
			cur := func() (layout.Tables, error) { // the layout flags left out keep the table's
				st, err := queryStatus(cmd.Context(), c, args[0])
				return st.Spec.Layout, err
			}
			if err := lay.request(cmd.Flags(), &req, cur); err != nil {
				return err
			}
			change := req != (workflows.SettingsRequest{})
			var spec activities.TableSpec
			if !change { // no flag: print the settings in effect
				st, err := queryStatus(cmd.Context(), c, args[0])
				if err != nil {
					return err
				}
				spec = st.Spec
			} else if err := sendUpdate(cmd.Context(), c, args[0], workflows.UpdateSettings, req, &spec); err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), spec)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %s, waiting at most %s; at most %d quarantined records per batch\n",
				args[0], batchBounds(spec), spec.MaxWait, spec.Defaults().MaxQuarantine)
			switch {
			case !change:
				if l := layoutText(spec.Layout); l != "" {
					fmt.Fprintf(cmd.OutOrStdout(), "%s: layout %s\n", args[0], l)
				}
			case req.MirrorLayout != nil || req.HistoryLayout != nil || req.BronzeLayout != nil:
				fmt.Fprintf(cmd.OutOrStdout(), "%s: layout %s (files written from the next batch on; compaction rewrites older files of another partition spec, other files keep their codec)\n", args[0], layoutText(spec.Layout))
			}
			return nil
		},
	}
	lay.bind(cmd.Flags())
	out.bind(cmd)
	bindSettings(cmd.Flags(), &values, activities.TableSpec{}, true)
	cmd.Flags().StringVar(&deleteFormat, "delete-format", "", "the table's delete format, position or dv: fixed when the tables are created, so a running table refuses a change and says how to make it")
	return cmd
}

func (a *app) listCmd() *cobra.Command {
	var out outputFlag
	var showAll bool
	cmd := &cobra.Command{
		Use:   "list [--all]",
		Short: "List running table pipelines with phase and lag (--all: also stopped, failed and terminated ones)",
		Long: `list shows every running table pipeline: table, topic, phase, lag (records, read
from Kafka when reachable) and batches, sorted by table. With --output json it prints
a JSON array of the tables' status objects (the fields of ` + "`status --output json`" + `,
see docs/operating.md). A table whose status query fails is listed with phase
"unknown" and the error (last_error in JSON), and list exits 1.

With --all it lists every table workflow Temporal's visibility knows, running or
closed, with its status: running, completed (a stopped pipeline: its phase says
stopped), failed, terminated, canceled or timed-out, and when it closed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			asJSON, err := out.json()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			c, err := a.dialWorker(ctx, "")
			if err != nil {
				return err
			}
			defer c.Close()
			if showAll {
				return a.listAll(ctx, cmd.OutOrStdout(), c, asJSON)
			}
			lr := newLagReader(a.settings)
			defer lr.Close()
			runs, err := runner.RunningTables(ctx, c)
			if err != nil {
				return err
			}
			all := []workflows.Status{}
			failed := 0
			for _, r := range runs {
				st, err := queryStatus(ctx, c, r.Table)
				if err != nil {
					if ctx.Err() != nil {
						return ctx.Err()
					}
					failed++
					fmt.Fprintf(cmd.ErrOrStderr(), "starter: %s: %v\n", r.Table, err)
					all = append(all, workflows.Status{Table: r.Table, Topic: r.Spec.Topic, Phase: phaseUnknown, LastError: "status query failed: " + err.Error(), Spec: r.Spec})
					continue
				}
				_ = lr.refresh(ctx, &st) // on failure LAG is the workflow's, from its last plan
				all = append(all, st)
			}
			sort.Slice(all, func(i, j int) bool { return all[i].Table < all[j].Table })
			if asJSON {
				if err := writeJSON(cmd.OutOrStdout(), all); err != nil {
					return err
				}
			} else {
				tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "TABLE\tTOPIC\tPHASE\tLAG\tBATCHES\tLAST BATCH")
				for _, st := range all {
					last := "-"
					if !st.LastBatchAt.IsZero() {
						last = human.Duration(time.Since(st.LastBatchAt)) + " ago"
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\n", st.Table, st.Topic, st.Phase, st.TotalLag, st.Totals.Batches, last)
				}
				if err := tw.Flush(); err != nil {
					return err
				}
			}
			if failed > 0 {
				return fmt.Errorf("the status of %d of %d tables could not be read (above)", failed, len(all))
			}
			return nil
		},
	}
	out.bind(cmd)
	cmd.Flags().BoolVar(&showAll, "all", false, "also list stopped, failed and terminated pipelines (the latest run of each table workflow, with its close status)")
	return cmd
}

// phaseUnknown is list's phase of a table whose status query failed.
const phaseUnknown = "unknown"

// outputFlag is --output text|json, with --json as its older spelling.
type outputFlag struct {
	format string
	asJSON bool
}

func (o *outputFlag) bind(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&o.format, "output", "o", "text", "output format: text (for people) or json (for scripts; stable field names, see docs/operating.md)")
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "same as --output json")
}

// json reports whether JSON was asked for. Errors: an unknown format
// (usage, exit code 2).
func (o *outputFlag) json() (bool, error) {
	switch o.format {
	case "text":
		return o.asJSON, nil
	case "json":
		return true, nil
	}
	return false, usage("--output %q: give text or json", o.format)
}

// jsonLinesFlag is --output of a command whose only format is JSON lines
// (dump, demo): it takes json, the default, so that every command that
// prints results takes --output json; any other value is a usage error.
type jsonLinesFlag struct {
	format string
	asJSON bool
}

func (o *jsonLinesFlag) bind(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&o.format, "output", "o", "json", "output format: json (JSON lines, one object per row: the only format of "+cmd.Name()+")")
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "same as --output json")
}

// check returns a usage error (exit code 2) for a format other than json.
func (o *jsonLinesFlag) check(command string) error {
	if o.format != "json" {
		return usage("--output %q: %s prints JSON lines only: give json or leave --output out", o.format, command)
	}
	return nil
}

// parseRange reads "P:FROM-TO".
func parseRange(s string) (lake.Range, error) {
	p, rest, ok := strings.Cut(s, ":")
	from, to, ok2 := strings.Cut(rest, "-")
	if !ok || !ok2 {
		return lake.Range{}, fmt.Errorf("range %q is not P:FROM-TO", s)
	}
	pi, err1 := strconv.ParseInt(p, 10, 32)
	fi, err2 := strconv.ParseInt(from, 10, 64)
	ti, err3 := strconv.ParseInt(to, 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || ti <= fi || fi < 0 {
		return lake.Range{}, fmt.Errorf("range %q is not P:FROM-TO with 0 <= FROM < TO", s)
	}
	return lake.Range{Partition: int32(pi), From: fi, To: ti}, nil
}

// parseTime reads --from: an RFC 3339 time (with Z or an offset such as
// +01:00, fractional seconds allowed), or a duration meaning "that long
// before now": Go's units (h, m, s, ms, ...) plus d for days of 24 hours,
// combined as in 2d, 1d12h or 90m. Errors: anything else, and a negative
// duration.
func parseTime(s string, now time.Time) (time.Time, error) {
	if d, ok := parseAgo(s); ok {
		if d < 0 {
			return time.Time{}, fmt.Errorf("--from %q: a duration ago cannot be negative", s)
		}
		return now.Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("--from %q is neither an RFC 3339 time (2026-11-29T10:00:00Z, 2026-11-29T10:00:00+01:00) nor a duration ago (90m, 2h, 2d, 1d12h)", s)
	}
	return t, nil
}

// parseAgo reads a duration with an optional leading day count ("2d",
// "1d12h", "1.5d"); ok is false when s is not one.
func parseAgo(s string) (time.Duration, bool) {
	sign := time.Duration(1)
	rest := s
	if strings.HasPrefix(rest, "-") {
		sign, rest = -1, rest[1:]
	}
	var days float64
	if i := strings.IndexByte(rest, 'd'); i > 0 {
		n, err := strconv.ParseFloat(rest[:i], 64)
		if err != nil || n < 0 || strings.ContainsAny(rest[:i], "eE+-") {
			return 0, false
		}
		days, rest = n, rest[i+1:]
	}
	var d time.Duration
	if rest != "" {
		var err error
		if d, err = time.ParseDuration(rest); err != nil || d < 0 {
			return 0, false
		}
	} else if days == 0 && !strings.HasSuffix(s, "d") {
		return 0, false
	}
	return sign * (time.Duration(days*float64(24*time.Hour)) + d), true
}

// batchBounds says how a table's batches are bounded: "batches of at
// most N records" and, with growth while behind, "(up to M while behind)".
func batchBounds(spec activities.TableSpec) string {
	out := fmt.Sprintf("batches of at most %d records", spec.MaxEvents)
	if spec.MaxBatchEvents > spec.MaxEvents {
		out += fmt.Sprintf(" (up to %d while more than two batches behind)", spec.MaxBatchEvents)
	}
	return out
}
