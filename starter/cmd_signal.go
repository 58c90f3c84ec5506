package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/worker/runner"
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
		cmds = append(cmds, &cobra.Command{
			Use:   d.name + " TABLE",
			Short: d.short,
			Args:  cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				c, err := runner.Dial(a.settings, nil)
				if err != nil {
					return err
				}
				defer c.Close()
				id := workflows.WorkflowID(args[0])
				if err := c.SignalWorkflow(cmd.Context(), id, "", d.signal, nil); err != nil {
					return notFoundOr(args[0], err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "sent %s to %s\n", d.signal, args[0])
				return nil
			},
		})
	}
	cmds = append(cmds, a.schemaCmd())
	return cmds
}

func (a *app) schemaCmd() *cobra.Command {
	var evolve, skip bool
	cmd := &cobra.Command{
		Use:   "schema TABLE (--evolve | --skip)",
		Short: "Decide on a source schema change that blocked a table",
		Long: `A table stops in phase schema-blocked when its events' schema changes in a way the
pipeline will not apply on its own: a narrowing or incompatible type change, or a column
dropped at the source while the table holds values in it (a rename is both). status shows
the change. --evolve accepts it for good: the table keeps its column types (values that do
not fit go to the quarantine table) and dropped columns stay (new rows hold NULL). --skip
puts this batch's changes that carry the new schema in the quarantine table; the next
batch with it blocks again.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if evolve == skip {
				return usage("give exactly one of --evolve and --skip")
			}
			decision := lake.DecisionEvolve
			if skip {
				decision = lake.DecisionSkip
			}
			c, err := runner.Dial(a.settings, nil)
			if err != nil {
				return err
			}
			defer c.Close()
			if err := c.SignalWorkflow(cmd.Context(), workflows.WorkflowID(args[0]), "", workflows.SignalSchema, decision); err != nil {
				return notFoundOr(args[0], err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "sent schema decision %q to %s\n", decision, args[0])
			return nil
		},
	}
	cmd.Flags().BoolVar(&evolve, "evolve", false, "accept the change")
	cmd.Flags().BoolVar(&skip, "skip", false, "quarantine this batch's changes that carry it")
	return cmd
}
