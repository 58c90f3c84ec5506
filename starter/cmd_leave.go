package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/lakemirror/lakemirror/workflows"
)

// leftJSON is leave's --output json.
type leftJSON struct {
	Table string `json:"table"`
	Group string `json:"group"`
	// Cut is the group's last published cut when the table left (0:
	// none); Untagged the Iceberg tables whose tag consistent was removed;
	// Error why it was not.
	Cut      int64    `json:"cut,omitempty"`
	Untagged []string `json:"untagged,omitempty"`
	Error    string   `json:"error,omitempty"`
}

// leaveWait is how long leave waits for the group to take the table out.
const leaveWait = 90 * time.Second

func (a *app) leaveCmd() *cobra.Command {
	var group string
	var out outputFlag
	cmd := &cobra.Command{
		Use:   "leave TABLE [--group GROUP]",
		Short: "Take a stopped table out of its source group, so that the group's cuts go on without it",
		Long: `A source group takes a cut only when every table of it takes part: a table that
does not run (stopped for good, or its workflow ended) has every later attempt given
up ("table ... does not run ... take it out of the group"). leave takes it out: a
pending cut that includes it is given up, the group no longer waits for its data
collection, its tag consistent is removed from its mirror and history (the group's
later cuts do not include it; readers of the group at consistent would otherwise mix
its last cut with later ones), and its cut-<n> tags stay. The table must not run:
stop it first (starter stop TABLE). Started again with --group (or group: in the
pipelines file), it joins again.

--group names the group; without it, the group is the one the table's last run
named.`,
		Example: "  starter stop shop.ledger && starter leave shop.ledger\n  starter leave shop.ledger --group shop --output json",
		Args:    tableArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			asJSON, err := out.json()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			table := args[0]
			c, err := a.dialWorker(ctx, "")
			if err != nil {
				return err
			}
			defer c.Close()
			if err := notRunning(ctx, c, table); err != nil {
				return err
			}
			if group == "" {
				st, err := queryStatus(ctx, c, table)
				if err != nil {
					return fmt.Errorf("%w; give the group with --group", err)
				}
				if group = st.Spec.Group; group == "" {
					return usage("%s's last run named no group; give it with --group", table)
				}
			}
			g, err := queryGroupCut(ctx, c, group)
			if err != nil {
				return err
			}
			if !slices.Contains(g.Tables, table) {
				return notFound("%s is not in group %s (its tables: %s); nothing was sent", table, group, strings.Join(g.Tables, ", "))
			}
			if err := c.SignalWorkflow(ctx, workflows.GroupWorkflowID(group), "", workflows.SignalGroupLeave, table); err != nil {
				return fmt.Errorf("signal group %s: %w", group, err)
			}
			res := leftJSON{Table: table, Group: group}
			for deadline := time.Now().Add(leaveWait); ; time.Sleep(time.Second) {
				if g, err = queryGroupCut(ctx, c, group); err == nil {
					if l, ok := g.Left[table]; ok {
						res.Cut, res.Untagged, res.Error = l.Cut, l.Untagged, l.Error
						break
					}
				}
				if time.Now().After(deadline) {
					return fmt.Errorf("group %s did not take %s out within %v (the signal was sent; starter cut %s shows the group)", group, table, leaveWait, group)
				}
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), res)
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "%s taken out of group %s\n", table, group)
			switch {
			case res.Error != "":
				fmt.Fprintf(w, "warning: %s\n", res.Error)
			case len(res.Untagged) > 0:
				fmt.Fprintf(w, "tag consistent removed from %s\n", strings.Join(res.Untagged, ", "))
			default:
				fmt.Fprintln(w, "it had no tag consistent")
			}
			if res.Cut > 0 {
				fmt.Fprintf(w, "its tags cut-<n> up to cut-%d stay; the group's later cuts do not include it\n", res.Cut)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&group, "group", "", "the table's source group (default: the one its last run named)")
	out.bind(cmd)
	return cmd
}

// notRunning fails when table's workflow runs: a running table reports
// to its group and would join it again.
func notRunning(ctx context.Context, c client.Client, table string) error {
	d, err := c.DescribeWorkflowExecution(ctx, workflows.WorkflowID(table), "")
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return nil
	}
	if err != nil {
		return err
	}
	if d.GetWorkflowExecutionInfo().GetStatus() == enums.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return usage("%s runs: stop it first (starter stop %s), or start it again without --group; nothing was sent", table, table)
	}
	return nil
}
