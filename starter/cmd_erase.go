package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/human"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/erasure"
	"github.com/lakemirror/lakemirror/workflows"
)

func (a *app) eraseCmd() *cobra.Command {
	var keys []string
	var requestedBy string
	var force, yes bool
	var out outputFlag
	cmd := &cobra.Command{
		Use:   "erase TABLE --key col=value[,col=value] [--key ...]",
		Short: "Erase keys on request: remove their rows from every file of bronze, mirror, history, quarantine and purged",
		Long: `erase removes every row of the given primary keys from the table's bronze, mirror,
history, quarantine and purged tables: the data files of the current Iceberg snapshots
that hold them are written again without them, the older snapshots that still reach
the old files are expired and those files deleted (docs/operating.md, "Erasure on request").
It runs as an EraseWorkflow on the worker holding the table, between two batches.

From then on a change of an erased key at or below the erasure position (a backfill,
a redelivery of its old Kafka records) is refused and stored nowhere: not in the
mirror or history, and in bronze and the quarantine without its key and value. A
newer change of the key applies.

The erasure is recorded in <ns>.<table>_erasures: who (--requested-by, else the OS
user), when, rows per table, files rewritten and deleted; the keys only as salted
hashes. The key values never reach Temporal: the starter hashes them against that
table before it starts the workflow.

A branch or tag that keeps a snapshot holding a key refuses the erasure (nothing is
changed); --force erases everywhere else and keeps that snapshot, with a warning.
Not erased: Kafka itself (its records stay until their retention), copies outside
the five tables (a validation table's findings, readers' own copies). Asks for the
table name on a terminal unless --yes.`,
		Example: "  starter erase shop.customers --key id=42 --requested-by dpo@example.com\n" +
			"  starter erase shop.orders --key tenant=7,order_id=1001 --key tenant=7,order_id=1002 --yes --output json",
		Args: tableArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			asJSON, err := out.json()
			if err != nil {
				return err
			}
			if len(keys) == 0 {
				return usage("give the keys to erase: --key col=value[,col=value] (repeatable)")
			}
			name, err := lake.ParseTableName(args[0])
			if err != nil {
				return usage("%v", err)
			}
			if requestedBy == "" {
				requestedBy = osUser()
			}
			if path := a.settings.Catalog.LocalCatalogMissing(); path != "" {
				return notFound("no Iceberg catalog at %s: run erase where the worker keeps its data (--data-dir, env LAKEMIRROR_DATA_DIR) or give --catalog-uri", path)
			}
			ctx := cmd.Context()
			c, st, err := a.dialStatus(ctx, args[0])
			if err != nil {
				return err
			}
			defer c.Close()
			w := cmd.OutOrStdout()
			if !yes {
				fmt.Fprintf(w, "erase %s from %s (bronze, mirror, history, quarantine, purged): irreversible\n", human.Count(len(keys), "key", "keys"), args[0])
				if err := a.confirm(w, fmt.Sprintf("Type the table name (%s) to confirm:", args[0]), args[0]); err != nil {
					return err
				}
			}
			cat, err := lake.OpenCatalog(ctx, a.settings.Catalog)
			if err != nil {
				return err
			}
			if cl, ok := cat.(interface{ Close() error }); ok {
				defer cl.Close()
			}
			hashed, err := erasure.HashEraseKeys(ctx, cat, name, keys)
			var ke *erasure.EraseKeyError
			if errors.As(err, &ke) {
				return usage("%v", err)
			}
			if err != nil {
				return err
			}
			now := time.Now()
			id := workflows.EraseWorkflowID(args[0], now.UnixMilli())
			req := activities.EraseRequest{Spec: st.Spec, Keys: hashed, RequestedBy: requestedBy, RequestedAt: now.UTC(), Force: force}
			run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: activities.TaskQueue}, workflows.EraseWorkflowName, req)
			if err != nil {
				return err
			}
			var res lake.EraseResult
			if err := run.Get(ctx, &res); err != nil {
				var ae *temporal.ApplicationError
				if errors.As(err, &ae) {
					return fmt.Errorf("erasure %s: %s", id, ae.Message())
				}
				return fmt.Errorf("erasure %s: %w", id, err)
			}
			if asJSON {
				return writeJSON(w, res)
			}
			printErasure(w, args[0], res)
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&keys, "key", nil, "a key to erase: col=value[,col=value], every key column once (repeatable)")
	cmd.Flags().StringVar(&requestedBy, "requested-by", "", "who asked for the erasure, for the audit row (default: the OS user)")
	cmd.Flags().BoolVar(&force, "force", false, "erase although a branch or tag keeps snapshots holding a key (they and their files are kept; a warning says so)")
	cmd.Flags().BoolVar(&yes, "yes", false, "erase without asking for a confirmation")
	out.bind(cmd)
	return cmd
}

// osUser names the user running the starter.
func osUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "unknown"
}

// printErasure renders an erasure's result for people: a line per table
// and the warnings. It names no key.
func printErasure(w io.Writer, table string, res lake.EraseResult) {
	state := "erased"
	if res.AlreadyCompleted {
		state = "already erased"
	}
	fmt.Fprintf(w, "%s %s of %s (erasure %s, requested by %s): changes of them at or below %s are refused from now on\n",
		state, human.Count(res.Keys, "key", "keys"), table, res.ID, res.RequestedBy, positionText(res.Position))
	for _, kind := range []string{"bronze", "mirror", "history", "quarantine", "purged"} {
		t, ok := res.Tables[kind]
		if !ok {
			continue
		}
		fmt.Fprintf(w, "  %-10s %s, %s rewritten, %s deleted, %s expired\n",
			kind, human.Count(t.Rows, "row", "rows"), human.Count(len(t.FilesRewritten), "file", "files"),
			human.Count(len(t.FilesDeleted), "file", "files"), human.Count(len(t.SnapshotsExpired), "snapshot", "snapshots"))
	}
	for _, warn := range res.Warnings {
		fmt.Fprintf(w, "  warning: %s\n", warn)
	}
	fmt.Fprintln(w, "  Kafka still holds the keys' records until its retention deletes them; the audit is in the table's _erasures table")
}
