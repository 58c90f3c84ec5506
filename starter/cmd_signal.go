package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"go.temporal.io/api/serviceerror"

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
					if _, ok := err.(*serviceerror.NotFound); ok {
						return notFound("no running pipeline for %s (workflow %s)", args[0], id)
					}
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "sent %s to %s\n", d.signal, args[0])
				return nil
			},
		})
	}
	return cmds
}
