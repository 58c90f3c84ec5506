package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/validate"
	"github.com/lakemirror/lakemirror/workflows"
)

func (a *app) validateCmd() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "validate TABLE",
		Short: "Check that the table's mirror is right: partitioning, op transitions, offset continuity, watermarks, replay, re-apply",
		Long: `validate starts a ValidationWorkflow for the table and waits for it. It reads bronze
and the mirror (and the topic's retained log where bronze has holes) and runs six checks:

  partitioning  every key's events are in one Kafka partition
  transitions   per key in log order (_seq): no create while the row exists, no update
                or delete after a delete (snapshot reads r count as creates)
  continuity    the batches' offsets join up to the table's position, the position is
                not below the log start (records deleted unread), and every hole in
                bronze is Kafka's own (transaction markers, aborted or compacted records)
  watermark     the applied position and the end offsets never move back across the
                mirror's snapshots; no mirror row has _seq above the applied position
  replay        re-applying bronze's changes would change no mirror row: every key's row
                is at or above its last change, deleted iff that change is a delete (or
                the key was purged); late keys awaiting a rebuild are left out
  reapply       the mirror's newest batches (up to 5), applied again from bronze into a
                scratch table copied from the mirror before them, give the mirror after
                them, row for row (the scratch table is dropped afterwards)

Each run writes one row per check to <ns>.<table>_validation. Exit code 1 when a check
fails, 0 when all pass. The table's workflow must be running (its spec is read from it).`,
		Example: "  starter validate shop.orders\n  starter validate shop.orders --output json",
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
			run, err := c.ExecuteWorkflow(cmd.Context(), client.StartWorkflowOptions{
				ID: workflows.ValidationWorkflowID(args[0], time.Now()), TaskQueue: activities.TaskQueue,
			}, workflows.ValidationWorkflowName, st.Spec)
			if err != nil {
				return err
			}
			var res activities.ValidationResult
			if err := run.Get(cmd.Context(), &res); err != nil {
				return err
			}
			return printCheckRun(cmd.OutOrStdout(), output == "json", res, func(w io.Writer) { printValidation(w, res) },
				res.Failed, len(res.Checks), res.RunID)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "text or json")
	return cmd
}

// printValidation writes a run as text: one line per check, its findings
// indented under it, then the watermarks.
func printValidation(w io.Writer, res activities.ValidationResult) {
	fmt.Fprintf(w, "validation of %s (run %s, %s)\n", res.Table, res.RunID, res.CheckedAt.Format(time.RFC3339))
	for _, c := range res.Checks {
		fmt.Fprintf(w, "%-4s %-12s %s; %s\n", strings.ToUpper(c.Verdict), c.Check, c.Observed, c.Scope)
		if c.Verdict == validate.Fail {
			for _, line := range strings.Split(c.Details(), "\n") {
				fmt.Fprintf(w, "       %s\n", line)
			}
		}
	}
	for _, s := range res.Skipped {
		why := res.SkipReasons[s]
		if why == "" {
			why = "the table keeps no bronze" // a worker from before skip reasons
		}
		fmt.Fprintf(w, "SKIP %-12s %s\n", s, why)
	}
	wm, et := positionText(res.SourceWatermark), "none"
	if !res.EventTimeWatermark.IsZero() {
		et = res.EventTimeWatermark.Format(time.RFC3339Nano)
	}
	fmt.Fprintf(w, "source watermark %s, event-time watermark %s\n", wm, et)
}
