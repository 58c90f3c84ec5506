package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/human"
	"github.com/lakemirror/lakemirror/internal/validate"
	"github.com/lakemirror/lakemirror/workflows"
)

func (a *app) reconcileCmd() *cobra.Command {
	var output, src, srcTable string
	var repair bool
	var chunk int
	var pause, floor, ceiling, timeout time.Duration
	cmd := &cobra.Command{
		Use:   "reconcile TABLE [--source NAME|DSN] [--source-table SCHEMA.TABLE] [--repair]",
		Short: "Compare the table's mirror with its source database (PostgreSQL, MySQL, MariaDB), and repair differences",
		Long: `reconcile starts a ReconcileWorkflow for the table and waits for it. It reads the source
table in key order, --chunk rows per key range, each range in its own REPEATABLE READ
READ ONLY transaction, pausing --pause between ranges, and compares each range's row
count and order-independent checksum with the mirror's live rows of the same keys;
ranges that differ are diffed key by key. Keys that differ are read again from the source
once the mirror has caught up (the settling period after the read has passed, and the
mirror's applied position is past the read's position or its Kafka position reached the
topic's end): only keys that still differ then are reported, so rows changed at the
source after the watermark are not. Checks:

  reconcile-ghost    live in the mirror, absent from the source (a lost delete, a row the
                     source never committed)
  reconcile-missing  in the source, absent or soft-deleted in the mirror (a lost create, a
                     wrongly applied delete)
  reconcile-changed  same key, different values (a lost update)
  op-balance         bronze's creates − deletes, key by key, equal the mirror's live rows
                     (a mirror write without its record in bronze)

The settling period is the p99 of bronze's recent source-commit-to-apply delays, at least
--settle-floor and at most --settle-max. With --repair every difference is written back
from the source at the re-read's position, through the normal sequence-guarded merge (a
newer streamed change still wins); ghost rows are soft-deleted.

--source is a name the worker maps to a DSN (-sources), by default the table's own
(start --source); a DSN given here (postgres://..., mysql://user:pass@host:3306/db) is
recorded in the workflow's history. Each run writes one row per check to
<ns>.<table>_validation. Exit code 1 when a check fails (also when --repair repaired it:
run again to confirm), 0 when all pass. To run it on a schedule, against a source
name: starter schedule TABLE --reconcile-every 24h [--reconcile-source NAME].`,
		Example: "  starter reconcile shop.orders\n  starter reconcile shop.orders --source mysql://repl:secret@db:3306/shop --source-table shop.orders --repair",
		Args:    tableArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "text" && output != "json" {
				return usage("--output %q: give text or json", output)
			}
			c, st, err := a.dialStatus(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			defer c.Close()
			req := activities.ReconcileRequest{Spec: st.Spec, Source: src, SourceTable: srcTable, Chunk: chunk, Pause: pause,
				SettleFloor: floor, SettleCeiling: ceiling, CatchUpTimeout: timeout, Repair: repair}
			if req.Source == "" {
				req.Source = st.Spec.Source
			}
			if req.SourceTable == "" {
				req.SourceTable = st.Spec.SourceTable
			}
			if req.Source == "" || req.SourceTable == "" {
				return usage("%s was started without --source and --source-table: give --source NAME|DSN and --source-table", args[0])
			}
			if pause == 0 {
				req.Pause = -1
			}
			if floor == 0 {
				req.SettleFloor = -1
			}
			run, err := c.ExecuteWorkflow(cmd.Context(), client.StartWorkflowOptions{
				ID: workflows.ReconcileWorkflowID(args[0], time.Now()), TaskQueue: activities.TaskQueue,
			}, workflows.ReconcileWorkflowName, req)
			if err != nil {
				return err
			}
			var res activities.ReconcileResult
			if err := run.Get(cmd.Context(), &res); err != nil {
				return err
			}
			return printCheckRun(cmd.OutOrStdout(), output == "json", res, func(w io.Writer) { printReconcile(w, res) },
				res.Failed, len(res.Checks), res.RunID)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "text or json")
	cmd.Flags().StringVar(&src, "source", "", "source database: a name configured on the worker (-sources) or a DSN (default: the table's)")
	cmd.Flags().StringVar(&srcTable, "source-table", "", "source table: schema.table (PostgreSQL) or database.table (MySQL, MariaDB) (default: the table's)")
	cmd.Flags().BoolVar(&repair, "repair", false, "write every difference back from the source (ghost rows soft-deleted)")
	d := defaultReconcile
	cmd.Flags().IntVar(&chunk, "chunk", d.Chunk, "rows per key range read from the source (at most 10000)")
	cmd.Flags().DurationVar(&pause, "pause", d.Pause, "pause between two key ranges (0: none)")
	cmd.Flags().DurationVar(&floor, "settle-floor", d.SettleFloor, "least settling period (0: none)")
	cmd.Flags().DurationVar(&ceiling, "settle-max", d.SettleCeiling, "most settling period")
	cmd.Flags().DurationVar(&timeout, "catch-up-timeout", d.CatchUpTimeout, "how long to wait for the mirror to catch up with a source read before retrying")
	return cmd
}

// defaultReconcile holds the parameters `reconcile` runs with unless its
// flags say otherwise, and that a reconcile schedule's runs use: 1,000
// rows per key range, 100 ms between ranges, a settling period of 30 s to
// 1 h, an hour for the mirror to catch up with a read.
var defaultReconcile = activities.ReconcileRequest{Chunk: 1000, Pause: 100 * time.Millisecond,
	SettleFloor: 30 * time.Second, SettleCeiling: time.Hour, CatchUpTimeout: time.Hour}

// printReconcile writes a run as text: one line per check, its findings
// indented under it, then the settling period and what was repaired.
func printReconcile(w io.Writer, res activities.ReconcileResult) {
	fmt.Fprintf(w, "reconciliation of %s with %s (run %s, %s)\n", res.Table, res.Scope.SourceTable, res.RunID, res.CheckedAt.Format(time.RFC3339))
	for _, c := range res.Checks {
		fmt.Fprintf(w, "%-4s %-17s %s\n", strings.ToUpper(c.Verdict), c.Check, c.Observed)
		if c.Verdict == validate.Fail || c.Check == activities.CheckRepair {
			for _, line := range strings.Split(c.Details(), "\n") {
				fmt.Fprintf(w, "       %s\n", line)
			}
		}
	}
	for _, s := range res.Skipped {
		fmt.Fprintf(w, "SKIP %-17s the table keeps no bronze\n", s)
	}
	sc := res.Scope
	fmt.Fprintf(w, "%d key ranges (%d differed), %d source rows, %d live mirror rows; %d keys re-read, %d unsettled\n",
		sc.Ranges, sc.DifferedRanges, sc.SourceRows, sc.MirrorLive, sc.Rechecked, sc.Unsettled)
	if res.MeasuredP99 <= 0 {
		fmt.Fprintf(w, "settling period %s (--settle-floor: no recent source-commit-to-apply delays measured)\n", human.Period(res.Settling))
		return
	}
	fmt.Fprintf(w, "settling period %s (p99 of recent source-commit-to-apply delays %s%s)\n",
		human.Period(res.Settling), human.Period(res.MeasuredP99), settlingBound(res.Settling, res.MeasuredP99))
}

// settlingBound says when the settling period is not the measured p99:
// capped by --settle-max (the source's commit times lie far behind its
// apply, e.g. an old capture replayed) or raised to --settle-floor.
func settlingBound(settle, p99 time.Duration) string {
	switch {
	case p99 > settle:
		return "; capped by --settle-max"
	case p99 < settle:
		return "; raised to --settle-floor"
	}
	return ""
}
