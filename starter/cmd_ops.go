package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/lake"
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
	cmd := &cobra.Command{
		Use:   "backfill TABLE (--from TIME | --range P:FROM-TO ...)",
		Short: "Re-apply past Kafka records to a table (safe: applied changes are no-ops, bronze is not duplicated)",
		Long: `backfill queues a re-apply of records the table has already passed: explicit offset
ranges per partition (--range 0:100-200, end exclusive), or everything from a time on
(--from 2026-11-29T10:00:00Z or --from 2h for "two hours ago"), up to the table's
current position. The workflow applies it between regular batches. With --wait a
progress bar (rate, ETA) follows it to the end.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
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
				t, err := parseTime(from)
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
			fmt.Fprintf(cmd.OutOrStdout(), "backfill of %s accepted: %d records: %s\n", args[0], acc.Records, strings.Join(parts, " "))
			if !wait || acc.Records == 0 {
				return nil
			}
			// this backfill ends when everything queued before it and it is done
			base := before.Totals.BackfillDone
			total := before.Totals.BackfillRequested - before.Totals.BackfillDone + acc.Records
			get := func(ctx context.Context) (workflows.Status, error) { return queryStatus(ctx, c, args[0]) }
			return follow(cmd.Context(), get, args[0], newProgress(cmd.ErrOrStderr(), "backfill "+args[0], "records"),
				func(st workflows.Status) (int64, int64, bool) {
					done := st.Totals.BackfillDone - base
					return done, total, done >= total
				})
		},
	}
	cmd.Flags().StringSliceVar(&ranges, "range", nil, "offset range P:FROM-TO (end exclusive); repeatable")
	cmd.Flags().StringVar(&from, "from", "", "re-apply from this time on: RFC 3339 or a duration ago (e.g. 90m)")
	cmd.Flags().BoolVar(&wait, "wait", false, "follow the backfill to its end with a progress bar")
	return cmd
}

func (a *app) waitCmd() *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "wait TABLE",
		Short: "Wait until a table has caught up with its topic (progress bar with rate and ETA)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := runner.Dial(a.settings, nil)
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
			return follow(ctx, get, args[0], newProgress(cmd.ErrOrStderr(), "catch-up "+args[0], "records"),
				func(st workflows.Status) (int64, int64, bool) {
					return caughtUp(first, st)
				})
		},
	}
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
	for {
		st, err := get(ctx)
		if err != nil {
			return err
		}
		done, total, finished := measure(st)
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
	var batch, maxBatch, maxQuarantine int
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "settings TABLE [--batch-size N] [--max-batch-size N] [--max-wait D] [--max-quarantine N]",
		Short: "Change a running table's batch bounds (takes effect at the next batch)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var req workflows.SettingsRequest
			if cmd.Flags().Changed("batch-size") {
				req.MaxEvents = &batch
			}
			if cmd.Flags().Changed("max-wait") {
				req.MaxWait = &wait
			}
			if cmd.Flags().Changed("max-batch-size") {
				req.MaxBatchEvents = &maxBatch
			}
			if cmd.Flags().Changed("max-quarantine") {
				req.MaxQuarantine = &maxQuarantine
			}
			if req.MaxEvents == nil && req.MaxWait == nil && req.MaxBatchEvents == nil && req.MaxQuarantine == nil {
				return usage("give --batch-size, --max-batch-size, --max-wait and/or --max-quarantine")
			}
			if err := req.Validate(); err != nil {
				return usage("%v", err)
			}
			c, err := runner.Dial(a.settings, nil)
			if err != nil {
				return err
			}
			defer c.Close()
			var spec activities.TableSpec
			if err := sendUpdate(cmd.Context(), c, args[0], workflows.UpdateSettings, req, &spec); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %s, waiting at most %s; at most %d quarantined records per batch\n",
				args[0], batchBounds(spec), spec.MaxWait, spec.Defaults().MaxQuarantine)
			return nil
		},
	}
	cmd.Flags().IntVar(&batch, "batch-size", 0, "maximum records per batch")
	cmd.Flags().IntVar(&maxBatch, "max-batch-size", 0, "how large a batch may grow while the table is more than two batches behind (0 = no growth)")
	cmd.Flags().IntVar(&maxQuarantine, "max-quarantine", 0, "records of one batch that may go to the quarantine table before the table blocks (raise it, then `retry`, to lift a quarantine-limit block)")
	cmd.Flags().DurationVar(&wait, "max-wait", 0, "how long a batch waits to fill")
	return cmd
}

func (a *app) listCmd() *cobra.Command {
	var asJSON, all bool
	cmd := &cobra.Command{
		Use:   "list [--all]",
		Short: "List running table pipelines with phase and lag (--all: also stopped, failed and terminated ones)",
		Long: `list shows the running table pipelines with their phase, lag and batches. With --all it
lists every table workflow Temporal's visibility knows, running or closed, with its
status: running, completed (a stopped pipeline: its phase says stopped), failed,
terminated, canceled or timed-out, and when it closed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := runner.Dial(a.settings, nil)
			if err != nil {
				return err
			}
			defer c.Close()
			if all {
				return a.listAll(cmd.Context(), cmd.OutOrStdout(), c, asJSON)
			}
			lr := newLagReader(a.settings)
			defer lr.Close()
			running, err := listTableWorkflows(cmd.Context(), c, true)
			if err != nil {
				return err
			}
			var sts []workflows.Status
			for _, e := range running {
				v, err := c.QueryWorkflow(cmd.Context(), e.WorkflowID, "", workflows.QueryStatus)
				if err != nil {
					continue
				}
				var st workflows.Status
				if v.Get(&st) == nil {
					_ = lr.refresh(cmd.Context(), &st) // on failure LAG is the workflow's, from its last plan
					sts = append(sts, st)
				}
			}
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(sts)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "TABLE\tTOPIC\tPHASE\tLAG\tBATCHES\tLAST BATCH")
			for _, st := range sts {
				last := "-"
				if !st.LastBatchAt.IsZero() {
					last = time.Since(st.LastBatchAt).Round(time.Second).String() + " ago"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\n", st.Table, st.Topic, st.Phase, st.TotalLag, st.Totals.Batches, last)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&all, "all", false, "also list stopped, failed and terminated pipelines (the latest run of each table workflow, with its close status)")
	return cmd
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

// parseTime reads RFC 3339 or a duration meaning "that long ago".
func parseTime(s string) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil {
		return time.Now().Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("--from %q is neither RFC 3339 nor a duration", s)
	}
	return t, nil
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
