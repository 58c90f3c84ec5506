package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/spf13/cobra"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"

	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/worker/runner"
	"github.com/lakemirror/lakemirror/workflows"
)

// tableIdents are the Iceberg tables the pipeline of name may create, in
// the order drop removes them.
func tableIdents(name lake.TableName) []table.Identifier {
	return []table.Identifier{name.Mirror(), name.Bronze(), name.History(), name.Quarantine(), name.Purged(), name.Validation()}
}

func (a *app) dropCmd() *cobra.Command {
	var dropTables, yes bool
	var timeout time.Duration
	var out outputFlag
	cmd := &cobra.Command{
		Use:   "drop TABLE [--drop-tables] [--yes]",
		Short: "Stop a table's pipeline and delete its schedules; --drop-tables also drops its Iceberg tables",
		Long: `drop stops the table's pipeline (the stop signal; it waits until the workflow has
completed, at most --timeout) and deletes its maintenance, validation and reconciliation schedules. With --drop-tables it
then drops the Iceberg tables <ns>.<table>, _bronze, _history, _quarantine, _purged and _validation
that exist, with their files (the catalog's purge) and, on a local warehouse, the empty
directories left at their locations; the table can then start over from
its topic. It asks for a confirmation on a terminal (type the table name) unless --yes;
without a terminal and without --yes it refuses (exit 2). Exit 3 when the table has no
pipeline, schedule or (with --drop-tables) Iceberg table.`,
		Example: "  starter drop shop.orders\n  starter drop shop.orders --drop-tables --yes",
		Args:    tableArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			asJSON, err := out.json()
			if err != nil {
				return err
			}
			if !asJSON {
				_, err := a.drop(cmd.Context(), cmd.OutOrStdout(), args[0], dropTables, yes, timeout)
				return err
			}
			// the plan and the confirmation go to stderr, the result
			// (also what was done before a failure) to stdout
			res, err := a.drop(cmd.Context(), cmd.ErrOrStderr(), args[0], dropTables, yes, timeout)
			if res != nil {
				if werr := writeJSON(cmd.OutOrStdout(), res); err == nil {
					err = werr
				}
			}
			return err
		},
	}
	out.bind(cmd)
	cmd.Flags().BoolVar(&dropTables, "drop-tables", false, "also drop the table's Iceberg tables (mirror, bronze, history, quarantine, purged) and their files")
	cmd.Flags().BoolVar(&yes, "yes", false, "drop without asking for a confirmation")
	cmd.Flags().DurationVar(&timeout, "timeout", 5*time.Minute, "how long to wait for the pipeline to stop (its in-flight batch) before giving up (exit 1, nothing dropped)")
	return cmd
}

// droppedJSON is what drop prints with --output json (docs/operating.md):
// what it did, in its order. Printed also when a step fails after it did
// something (with what was done before the failure); nothing is printed
// when it fails before doing anything.
type droppedJSON struct {
	Table            string   `json:"table"`
	WorkflowID       string   `json:"workflow_id"`
	Stopped          bool     `json:"stopped"`           // the running pipeline was stopped
	SchedulesDeleted []string `json:"schedules_deleted"` // schedule ids
	TablesDropped    []string `json:"tables_dropped"`    // Iceberg tables, namespace.table
	StartRemoved     bool     `json:"start_removed"`     // the recorded start (from latest) was removed
	Warnings         []string `json:"warnings"`
}

// drop stops, deletes and drops what tableName's pipeline has (see
// dropCmd), writing its plan, the confirmation and its progress to out.
// It returns what it did (nil when it failed before doing anything). Errors: usage, not
// found (exit 3), the confirmation's, and the first failing step's.
func (a *app) drop(ctx context.Context, out io.Writer, tableName string, dropTables, yes bool, timeout time.Duration) (*droppedJSON, error) {
	res, err := a.dropTable(ctx, out, tableName, dropTables, yes, timeout)
	if err != nil && res != nil && !res.Stopped && len(res.SchedulesDeleted) == 0 && len(res.TablesDropped) == 0 && !res.StartRemoved {
		res = nil
	}
	return res, err
}

func (a *app) dropTable(ctx context.Context, out io.Writer, tableName string, dropTables, yes bool, timeout time.Duration) (*droppedJSON, error) {
	name, err := lake.ParseTableName(tableName)
	if err != nil {
		return nil, usage("%v", err)
	}
	c, err := runner.Dial(a.settings, nil)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	id := workflows.WorkflowID(tableName)
	running := false
	desc, err := c.DescribeWorkflowExecution(ctx, id, "")
	var nf *serviceerror.NotFound
	switch {
	case errors.As(err, &nf):
		desc = nil
	case err != nil:
		return nil, fmt.Errorf("describe workflow %s: %w", id, err)
	default:
		running = desc.WorkflowExecutionInfo.Status == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
	}
	sc := c.ScheduleClient()
	var schedules []string
	for _, job := range tableScheduleJobs() {
		sid := workflows.ScheduleID(tableName, job)
		_, err := sc.GetHandle(ctx, sid).Describe(ctx)
		switch {
		case err == nil:
			schedules = append(schedules, sid)
		case !errors.As(err, &nf):
			return nil, fmt.Errorf("describe schedule %s: %w", sid, err)
		}
	}
	var cat catalog.Catalog
	var tables []table.Identifier
	var start *lakecat.StartRecord // where the pipeline started from latest before any commit
	var locations []string         // of tables, for the empty directories a purge leaves
	if dropTables {
		if missing := a.settings.Catalog.LocalCatalogMissing(); missing == "" {
			if cat, err = lake.OpenCatalog(ctx, a.settings.Catalog); err != nil {
				return nil, fmt.Errorf("--drop-tables needs the catalog: %w", err)
			}
			if cl, ok := cat.(interface{ Close() error }); ok {
				defer cl.Close()
			}
			for _, ident := range tableIdents(name) {
				tbl, err := lake.LoadTable(ctx, cat, ident)
				if err != nil {
					return nil, err
				}
				if tbl != nil {
					tables = append(tables, ident)
					locations = append(locations, tbl.Location())
				}
			}
			if start, err = lakecat.ReadStart(ctx, cat, name); err != nil {
				return nil, err
			}
		}
	}
	if desc == nil && len(schedules) == 0 && len(tables) == 0 && start == nil {
		what := "pipeline or schedule"
		if dropTables {
			what = "pipeline, schedule or Iceberg table"
		}
		return nil, notFound("%s has no %s (workflow %s)", tableName, what, id)
	}

	fmt.Fprintf(out, "drop %s:\n", tableName)
	switch {
	case running:
		fmt.Fprintf(out, "  stop the pipeline (workflow %s, running) and wait for it to complete\n", id)
	case desc != nil:
		fmt.Fprintf(out, "  the pipeline is not running (workflow %s: %s)\n", id, statusName(desc.WorkflowExecutionInfo.Status))
	}
	for _, sid := range schedules {
		fmt.Fprintf(out, "  delete schedule %s\n", sid)
	}
	var idents []string
	for _, ident := range tables {
		idents = append(idents, lake.IdentString(ident))
	}
	if len(tables) > 0 {
		fmt.Fprintf(out, "  drop Iceberg tables %s and their files\n", strings.Join(idents, ", "))
	} else if dropTables {
		fmt.Fprintln(out, "  no Iceberg tables to drop")
	}
	if start != nil {
		fmt.Fprintf(out, "  remove the recorded start (offsets %v of topic %s, namespace property %s%s)\n", start.Offsets, start.Topic, lakecat.PropStartPrefix, name.Name)
	}
	res := &droppedJSON{Table: tableName, WorkflowID: id, SchedulesDeleted: []string{}, TablesDropped: []string{}, Warnings: []string{}}
	if !yes {
		if err := a.confirm(out, fmt.Sprintf("Type the table name (%s) to confirm:", tableName), tableName); err != nil {
			return res, err
		}
	}

	if running {
		if err := c.SignalWorkflow(ctx, id, "", workflows.SignalStop, nil); err != nil && !errors.As(err, &nf) {
			return res, fmt.Errorf("stop %s: %w", tableName, err)
		}
		wctx, cancel := context.WithTimeout(ctx, timeout)
		err := c.GetWorkflow(wctx, id, "").Get(wctx, nil)
		cancel()
		if err != nil {
			return res, fmt.Errorf("%s did not stop within %s (%v); nothing else was changed: run drop again once it has stopped", tableName, timeout, err)
		}
		res.Stopped = true
		fmt.Fprintf(out, "stopped %s\n", tableName)
	}
	for _, sid := range schedules {
		if err := deleteSchedule(ctx, sc, sid); err != nil && !errors.As(err, &nf) {
			return res, fmt.Errorf("delete schedule %s: %w", sid, err)
		}
		res.SchedulesDeleted = append(res.SchedulesDeleted, sid)
		fmt.Fprintf(out, "deleted schedule %s\n", sid)
	}
	for i, ident := range tables {
		if err := dropTable(ctx, cat, ident); err != nil {
			return res, fmt.Errorf("drop %s: %w (dropped before it: %s)", idents[i], err, strings.Join(idents[:i], ", "))
		}
		res.TablesDropped = append(res.TablesDropped, idents[i])
		fmt.Fprintf(out, "dropped %s\n", idents[i])
		// a purge on a local warehouse leaves the table's directories
		// (data/, metadata/): remove the empty ones; a file someone else
		// put there stays, and so does its directory
		if _, err := removeEmptyLocalDirs(locations[i]); err != nil {
			w := fmt.Sprintf("%s: empty directories of %s not removed: %v", idents[i], locations[i], err)
			res.Warnings = append(res.Warnings, w)
			fmt.Fprintf(out, "warning: %s\n", w)
		}
	}
	if cat != nil { // --drop-tables: a table without bronze that never had a mirror kept its truncates on the namespace
		if had, err := lake.ClearPendingTruncates(ctx, cat, name); err != nil {
			return res, fmt.Errorf("%w (the tables are dropped; run drop again to remove them)", err)
		} else if had {
			fmt.Fprintf(out, "removed the table truncates recorded for %s before its mirror existed (namespace property %s%s)\n", tableName, lake.PropPendingTruncatesPrefix, name.Name)
		}
	}
	if start != nil {
		if err := lakecat.ClearStart(ctx, cat, name); err != nil {
			return res, fmt.Errorf("%w (the tables are dropped; run drop again to remove the start record)", err)
		}
		res.StartRemoved = true
		fmt.Fprintf(out, "removed the recorded start of %s\n", tableName)
	}
	return res, nil
}

// dropTable drops an Iceberg table with its files (the catalog's purge
// when it has one; else only from the catalog).
func dropTable(ctx context.Context, cat catalog.Catalog, ident table.Identifier) error {
	if p, ok := cat.(catalog.PurgeableTable); ok {
		return p.PurgeTable(ctx, ident)
	}
	return cat.DropTable(ctx, ident)
}
