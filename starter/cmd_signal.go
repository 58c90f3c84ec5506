package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/workflows"
)

// signalCmds are the subcommands that send one signal to a table workflow.
func (a *app) signalCmds() []*cobra.Command {
	defs := []struct{ name, signal, short string }{
		{"pause", workflows.SignalPause, "Pause a table after its in-flight batch; its Kafka position is held"},
		{"resume", workflows.SignalResume, "Resume a paused table"},
		{"stop", workflows.SignalStop, "Stop a table's pipeline after its in-flight batch (the workflow completes)"},
		{"retry", workflows.SignalRetry, "Retry the batch that left a table blocked"},
	}
	var cmds []*cobra.Command
	for _, d := range defs {
		var wait time.Duration
		var out outputFlag
		cmd := &cobra.Command{
			Use:   d.name + " TABLE",
			Short: d.short,
			Args:  tableArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				asJSON, err := out.json()
				if err != nil {
					return err
				}
				c, err := a.dial(cmd.Context())
				if err != nil {
					return err
				}
				defer c.Close()
				if d.signal == workflows.SignalRetry {
					if err := a.requireWorker(cmd.Context(), c, args[0]); err != nil {
						return err
					}
					st, err := queryStatus(cmd.Context(), c, args[0])
					if err != nil {
						return err
					}
					if st.Phase != workflows.PhaseBlocked && st.Phase != workflows.PhaseRetrying {
						return fmt.Errorf("%s is not blocked or retrying (phase %s); nothing to retry, nothing was sent", args[0], st.Phase)
					}
				}
				id := workflows.WorkflowID(args[0])
				// pause and resume go as control signals, which the
				// workflow applies in the order sent (workflows/signals.go)
				name, arg := d.signal, any(nil)
				if d.signal == workflows.SignalPause || d.signal == workflows.SignalResume {
					name, arg = workflows.SignalControl, d.signal
				}
				if err := c.SignalWorkflow(cmd.Context(), id, "", name, arg); err != nil {
					return notFoundOr(args[0], err)
				}
				sent := sentJSON{Table: args[0], WorkflowID: id, Signal: d.signal}
				if !asJSON {
					fmt.Fprintf(cmd.OutOrStdout(), "sent %s to %s\n", d.signal, args[0])
				}
				a.warnNoWorker(cmd.Context(), cmd.ErrOrStderr(), c, "the signal takes effect when one runs")
				if wait > 0 {
					phase, err := waitForPause(cmd.Context(), c, args[0], d.signal == workflows.SignalPause, wait)
					if err != nil {
						return err
					}
					if !asJSON {
						fmt.Fprintf(cmd.OutOrStdout(), "%s is %s\n", args[0], phase)
					}
					sent.Phase = phase
				}
				if asJSON {
					return writeJSON(cmd.OutOrStdout(), sent)
				}
				return nil
			},
		}
		out.bind(cmd)
		if d.signal == workflows.SignalPause || d.signal == workflows.SignalResume {
			cmd.Flags().DurationVar(&wait, "wait", 0, "wait up to this long until the table is "+map[bool]string{true: "paused (its in-flight batch done)", false: "no longer paused"}[d.signal == workflows.SignalPause]+", then print its phase (exit 1 on timeout); 0 = do not wait")
		}
		cmds = append(cmds, cmd)
	}
	cmds = append(cmds, a.schemaCmd(), a.resnapshotCmd())
	return cmds
}

func (a *app) schemaCmd() *cobra.Command {
	var evolve, skip bool
	var out outputFlag
	cmd := &cobra.Command{
		Use:   "schema TABLE (--evolve | --skip)",
		Short: "Decide on a source schema change that blocked a table",
		Long: `A table stops in phase schema-blocked when its events' schema changes in a way the
pipeline will not apply on its own: an incompatible type change (say string to int, or a
decimal's scale), or a column dropped at the source while the table holds values in it (a
rename is both). A narrowing of a column the table already holds wider (int64 to int32)
needs no decision: the values fit and apply. status shows
the change. --evolve accepts it for good: the table keeps its column types (values that do
not fit go to the quarantine table) and dropped columns stay (new rows hold NULL). --skip
puts this batch's changes that carry the new schema in the quarantine table; the next
batch with it blocks again.`,
		Args: tableArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			asJSON, err := out.json()
			if err != nil {
				return err
			}
			if evolve == skip {
				return usage("give exactly one of --evolve and --skip")
			}
			decision := lake.DecisionEvolve
			if skip {
				decision = lake.DecisionSkip
			}
			c, st, err := a.dialStatus(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			defer c.Close()
			if st.Phase != workflows.PhaseSchemaBlocked {
				return fmt.Errorf("%s is not waiting for a schema decision (phase %s); nothing was sent", args[0], st.Phase)
			}
			if err := c.SignalWorkflow(cmd.Context(), workflows.WorkflowID(args[0]), "", workflows.SignalSchema, decision); err != nil {
				return notFoundOr(args[0], err)
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), sentJSON{Table: args[0], WorkflowID: workflows.WorkflowID(args[0]), Signal: workflows.SignalSchema, Decision: decision})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "sent schema decision %q to %s\n", decision, args[0])
			return nil
		},
	}
	out.bind(cmd)
	cmd.Flags().BoolVar(&evolve, "evolve", false, "accept the change")
	cmd.Flags().BoolVar(&skip, "skip", false, "quarantine this batch's changes that carry it")
	return cmd
}

func (a *app) resnapshotCmd() *cobra.Command {
	var incremental bool
	var out outputFlag
	cmd := &cobra.Command{
		Use:   "resnapshot TABLE [--incremental]",
		Short: "Re-snapshot a table: directly from its source database, or through Debezium",
		Long: `resnapshot starts over from the source, between batches. By default it reads the table
directly from the source database the pipeline was started with (--source): rows are
applied at the snapshot's position, so rows whose changes were lost are repaired, and live
mirror rows the source no longer has (ghost rows) are soft-deleted; status reports how
many. With --incremental it sends Debezium's execute-snapshot signal (incremental) to the
connector's signal topic (--signal-topic at start) and the connector's snapshot reads flow
through the topic.`,
		Args: tableArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			asJSON, err := out.json()
			if err != nil {
				return err
			}
			mode := workflows.ResnapshotDirect
			if incremental {
				mode = workflows.ResnapshotIncremental
			}
			c, st, err := a.dialStatus(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			defer c.Close()
			switch {
			case incremental && (st.Spec.SignalTopic == "" || st.Spec.SourceTable == ""):
				return usage("%s was started without --signal-topic and --source-table, which an incremental re-snapshot needs (the connector's signal topic and the table as schema.table): stop it and start it again with both", args[0])
			case !incremental && (st.Spec.Source == "" || st.Spec.SourceTable == ""):
				return usage("%s was started without --source and --source-table, which a direct re-snapshot needs; use --incremental (with --signal-topic) or start the table again with a source", args[0])
			}
			if err := c.SignalWorkflow(cmd.Context(), workflows.WorkflowID(args[0]), "", workflows.SignalResnapshot, mode); err != nil {
				return notFoundOr(args[0], err)
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), sentJSON{Table: args[0], WorkflowID: workflows.WorkflowID(args[0]), Signal: workflows.SignalResnapshot, Mode: mode})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "requested a %s re-snapshot of %s; follow it with: starter status %s\n", mode, args[0], args[0])
			return nil
		},
	}
	out.bind(cmd)
	cmd.Flags().BoolVar(&incremental, "incremental", false, "ask the Debezium connector for an incremental snapshot instead of reading the source directly")
	return cmd
}

// sentJSON is what a command that sends a table workflow a signal prints
// with --output json (docs/operating.md): the table, its workflow id, the
// signal's name (workflows.Signal*), the schema decision or re-snapshot
// mode it carried, and with --wait the phase the table reached.
type sentJSON struct {
	Table      string `json:"table"`
	WorkflowID string `json:"workflow_id"`
	Signal     string `json:"signal"`
	Decision   string `json:"decision,omitempty"`
	Mode       string `json:"mode,omitempty"`
	Phase      string `json:"phase,omitempty"`
}

// waitForPause polls table's status (every 200 ms, at most wait) until
// its phase is paused (paused true) or no longer paused (false), and
// returns that phase. Errors: the status query's; the timeout, naming the
// phase the table is in.
func waitForPause(ctx context.Context, c client.Client, table string, paused bool, wait time.Duration) (string, error) {
	deadline := time.Now().Add(wait)
	for {
		st, err := queryStatus(ctx, c, table)
		if err != nil {
			return "", err
		}
		if (st.Phase == workflows.PhasePaused) == paused {
			return st.Phase, nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("%s is still %s after %s (the signal was sent; it takes effect after the in-flight batch)", table, st.Phase, wait)
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
