package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/spf13/cobra"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/human"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/maintain"
	"github.com/lakemirror/lakemirror/internal/payload"
	"github.com/lakemirror/lakemirror/internal/pipelines"
	"github.com/lakemirror/lakemirror/workflows"
)

func (a *app) statusCmd() *cobra.Command {
	var out outputFlag
	cmd := &cobra.Command{
		Use:   "status TABLE",
		Short: "Show a table pipeline's phase, offsets, lag and last batch",
		Long: `status shows a table pipeline's phase, offsets and lag per partition (read from
Kafka when reachable, else as of the table's last plan), freshness, watermark, totals,
the last batch and load, the last error (and, while the table's worker is gone and
the table waits to move to another, "waiting for hand-over from worker X (N s left)"
after its phase), and (when the catalog is readable here) the
size of each Iceberg table and the last validation and reconciliation runs (their
failing checks, from <ns>.<table>_validation). For a table of a source group it
shows the group's consistent cut (from the group's workflow): the newest published
cut, its source commit time and how far it trails, a cut being taken, the last
one given up and why, and the tables that hold the next (` + "`starter cut`" + ` reads it). With --output json it prints the status object with the
stable field names listed in docs/operating.md.`,
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
			lr := newLagReader(a.settings)
			defer lr.Close()
			st, note, err := lr.status(cmd.Context(), c, args[0])
			if err != nil {
				return err
			}
			if note != "" {
				fmt.Fprintln(cmd.ErrOrStderr(), "starter:", note)
			}
			addHandOverReason(cmd.Context(), c, &st)
			now := time.Now()
			var gc *groupCutStatus
			if st.Spec.Group != "" {
				gc = groupCutOf(cmd.Context(), c, st.Spec.Group, now)
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), statusWithCut{Status: st, GroupCut: gc})
			}
			printStatusGroupAt(cmd.OutOrStdout(), st, gc, now)
			a.printTableSizes(cmd.Context(), cmd.OutOrStdout(), st.Spec)
			return nil
		},
	}
	out.bind(cmd)
	return cmd
}

// dialStatus connects to Temporal and queries table's status, for the
// commands that act on a table after checking its state; the caller
// closes the client. Errors: the dial's, and queryStatus's (no such table:
// exit code 3).
func (a *app) dialStatus(ctx context.Context, table string) (client.Client, workflows.Status, error) {
	c, err := a.dialWorker(ctx, table)
	if err != nil {
		return nil, workflows.Status{}, err
	}
	st, err := queryStatus(ctx, c, table)
	if err != nil {
		c.Close()
		return nil, st, err
	}
	return c, st, nil
}

// queryStatus asks table's workflow for its status, waiting at most
// queryTimeout for a worker to answer. Errors: no such table (exit code
// 3), a timeout explained by the workers Temporal lists (explainQuery),
// Temporal's.
func queryStatus(ctx context.Context, c client.Client, table string) (workflows.Status, error) {
	var st workflows.Status
	qctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	asked := time.Now()
	v, err := c.QueryWorkflow(qctx, workflows.WorkflowID(table), "", workflows.QueryStatus)
	if err != nil {
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return st, notFoundOr(table, err)
		}
		return st, explainQuery(ctx, c, table, err, time.Since(asked))
	}
	return st, v.Get(&st)
}

// notFoundOr maps a missing workflow to exit code 3.
func notFoundOr(table string, err error) error {
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return notFound("no such table %s: no pipeline runs it (workflow %s does not exist); `starter list` shows the running tables", table, workflows.WorkflowID(table))
	}
	return err
}

// groupText is the status line of the table's source group: "shop,
// transaction topic shop.transaction", "shop, no transaction topic
// (cuts per position)"; "" without a group.
func groupText(spec payload.TableSpec) string {
	switch {
	case spec.Group == "":
		return ""
	case spec.TransactionTopic == "":
		return spec.Group + ", no transaction topic (cuts per position)"
	}
	return spec.Group + ", transaction topic " + spec.TransactionTopic
}

// printStatus renders a status for people, durations as of now.
func printStatus(w io.Writer, st workflows.Status) { printStatusAt(w, st, time.Now()) }

// printStatusAt renders a status for people with durations (freshness)
// measured at now: past a day in days, hours and minutes (human.Duration).
func printStatusAt(w io.Writer, st workflows.Status, now time.Time) {
	printStatusGroupAt(w, st, nil, now)
}

// printStatusGroupAt is printStatusAt with the table's group's cut (gc,
// nil for none) after the group line.
func printStatusGroupAt(w io.Writer, st workflows.Status, gc *groupCutStatus, now time.Time) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "table\t%s\n", st.Table)
	fmt.Fprintf(tw, "topic\t%s\n", st.Topic)
	if st.Spec.Comment != "" {
		fmt.Fprintf(tw, "comment\t%s\n", st.Spec.Comment)
	}
	if g := groupText(st.Spec); g != "" {
		fmt.Fprintf(tw, "group\t%s\n", g)
	}
	if gc != nil {
		printGroupCut(tw, gc, now)
	}
	fmt.Fprintf(tw, "tables\t%s\n", strings.Join(st.Spec.Tables(), ", "))
	fmt.Fprintf(tw, "deletes\t%s\n", st.Spec.DeleteFormat.Describe())
	fmt.Fprintf(tw, "batches\t%s, waiting at most %s\n", strings.TrimPrefix(batchBounds(st.Spec.Defaults()), "batches of "), st.Spec.Defaults().MaxWait)
	phase := st.Phase
	if st.Paused && phase != "paused" {
		phase += " (pause requested)"
	}
	if st.PhaseReason != "" {
		phase += ": " + st.PhaseReason
	}
	fmt.Fprintf(tw, "phase\t%s\n", phase)
	if w := workerLine(st); w != "" {
		fmt.Fprintf(tw, "worker\t%s\n", w)
	}
	var parts []string
	all := maps.Clone(st.HighWatermarks) // partitions not read yet show as "-"
	maps.Copy(all, st.Offsets)
	for _, p := range all.SortedPartitions() {
		next := "-"
		if o, ok := st.Offsets[p]; ok {
			next = strconv.FormatInt(o, 10)
		}
		parts = append(parts, fmt.Sprintf("p%d %s/%d (lag %d)", p, next, st.HighWatermarks[p], st.Lag[p]))
	}
	fmt.Fprintf(tw, "offsets\t%s\n", strings.Join(parts, ", "))
	if st.TopicMissing {
		fmt.Fprintf(tw, "topic state\ttopic %s does not exist (yet); the table waits for it\n", st.Topic)
	}
	source := "Kafka now"
	if st.LagSource != lagFromKafka {
		source = "as of the table's last plan"
	}
	fmt.Fprintf(tw, "lag\t%s (%s)\n", human.Count(st.TotalLag, "record", "records"), source)
	if st.NewestSourceTs > 0 {
		src := time.UnixMicro(st.NewestSourceTs)
		fmt.Fprintf(tw, "freshness\t%s (newest applied source commit %s)\n", human.Duration(now.Sub(src)), src.UTC().Format(time.RFC3339))
	}
	if st.Watermark != "" {
		fmt.Fprintf(tw, "watermark\t%s\n", positionText(st.Watermark))
	}
	if len(st.Backfill) > 0 {
		fmt.Fprintf(tw, "backfill\t%s queued, %d of %s done\n", human.Count(len(st.Backfill), "range", "ranges"), st.Totals.BackfillDone, human.Count(st.Totals.BackfillRequested, "record", "records"))
	}
	t := st.Totals
	fmt.Fprintf(tw, "totals (since start)\t%s, %s, %s: %d applied, %d stale, %d duplicate; %d quarantined; %s; %s written, %s\n",
		human.Count(t.Batches, "batch", "batches"), human.Count(t.Records, "record", "records"), human.Count(t.Changes, "change", "changes"),
		t.Applied, t.Stale, t.Duplicates, t.Quarantined, human.Count(t.Tombstones, "tombstone", "tombstones"),
		human.Count(t.RowsWritten, "mirror row", "mirror rows"), human.Count(t.BronzeRows, "bronze row", "bronze rows"))
	if t.SourceTsFromKafka > 0 {
		fmt.Fprintf(tw, "changes timed by Kafka	%d (the source gave no commit time: their _source_ts is the Kafka record timestamp)\n", t.SourceTsFromKafka)
	}
	if t.UnwovenKeys > 0 && st.Spec.WithoutHistory {
		fmt.Fprintf(tw, "late keys not rebuilt\t%d (no bronze table and a restarted worker: their earlier changes are gone, so a later delete without a before image or a TOAST value may keep the values from before the late change)\n", t.UnwovenKeys)
	} else if t.UnwovenKeys > 0 {
		fmt.Fprintf(tw, "late keys not in history\t%d (no bronze table and a restarted worker: their late change is in the mirror only)\n", t.UnwovenKeys)
	}
	if t.UnknownValues > 0 {
		fmt.Fprintf(tw, "values never known\t%s written as NULL (a TOAST or LOB value the source sent only as \"unchanged\" for a row the mirror did not hold: a stream started without a source snapshot, or a primary-key change whose old row was not known; `starter resnapshot` reads them)\n",
			human.Count(t.UnknownValues, "value", "values"))
	}
	if t.KeysMovedOntoLive > 0 {
		fmt.Fprintf(tw, "keys moved onto a live key\t%d (a primary-key change onto a key another row held: a key swap or shift in one statement of a deferrable primary key, which Debezium's stream cannot place; a key may be deleted or hold another row's TOAST value: `starter resnapshot` reads them)\n",
			t.KeysMovedOntoLive)
	}
	if b := st.LastBatch; b != nil {
		m := b.Mirror
		fmt.Fprintf(tw, "last batch\t%s: %s, %s (%d applied, %d stale, %d duplicate), %d quarantined, %d inserted, %d updated, %d deleted, bronze +%d\n",
			b.BatchID, human.Count(b.Records, "record", "records"), human.Count(b.Changes, "change", "changes"), m.Applied, m.Stale, m.Duplicates, b.Quarantined, m.Inserted, m.Updated, m.Deleted, b.Bronze.Appended)
	}
	if b := st.LastBatch; b != nil && b.State != nil {
		fmt.Fprintf(tw, "local state\t%s\n", localState(b.State))
	}
	if l := st.LastLoad; l != nil {
		ghosts := human.Count(l.Ghosts, "ghost row", "ghost rows") + " soft-deleted"
		if l.GhostsUnchecked {
			ghosts = "ghost rows not checked (no bronze table)"
		}
		fmt.Fprintf(tw, "last load\t%s: %s at WAL position %d, %s\n", l.LoadID, human.Count(l.Rows, "row", "rows"), l.LSN, ghosts)
	}
	if st.LastError != "" {
		fmt.Fprintf(tw, "last error\t%s\n", st.LastError)
	}
	tw.Flush()
}

// workerLine is the status line of the worker holding the table
// (routing, docs/design.md "Routing"): its id, or "none" and why, with
// how the table moved so far: "3f2a9c0d1e7b (claims 2; hand-overs: 1 on
// a worker's stop, 0 by timeout; releases 0; heartbeats lost 0)". ""
// for a table never claimed (no routing, or not yet).
func workerLine(st workflows.Status) string {
	if st.Owner == "" && st.Claims == 0 {
		return ""
	}
	w := strings.TrimPrefix(st.Owner, activities.TaskQueue+"@")
	if st.Owner == "" {
		w = "none"
		if st.Unowned != "" {
			w += " (" + st.Unowned + ")"
		}
	}
	return fmt.Sprintf("%s (claims %d; hand-overs: %d on a worker's stop, %d by timeout; releases %d; heartbeats lost %d)",
		w, st.Claims, st.StopHandOvers, st.HandOvers, st.Releases, st.HeartbeatsLost)
}

// printTableSizes prints, when this command can read the catalog, each of
// the table's Iceberg tables' snapshots, files, rows and metadata size
// (maintain.SizeOf), so metadata growth and the need for compaction or expiry
// show in status.
func (a *app) printTableSizes(ctx context.Context, w io.Writer, spec activities.TableSpec) {
	name, err := lake.ParseTableName(spec.Table)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cat := a.catalogIfReachable(ctx)
	if cat == nil {
		return
	}
	idents := map[string][]string{"bronze": name.Bronze(), "mirror": name.Mirror(), "history": name.History()}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, kind := range spec.Tables() {
		tbl, err := lake.LoadTable(ctx, cat, idents[kind])
		if err != nil || tbl == nil {
			continue
		}
		sz, err := maintain.SizeOf(ctx, tbl)
		if err != nil {
			fmt.Fprintf(tw, "%s table\t%v\n", kind, err)
			continue
		}
		fmt.Fprintf(tw, "%s table\t%d snapshots; %d data + %d delete files, %d rows, %s; metadata %s (%d metadata files)\n", kind,
			sz.Snapshots, sz.DataFiles, sz.DeleteFiles, sz.Records, mib(sz.FilesBytes), mib(sz.MetadataBytes), sz.MetadataFiles)
	}
	for _, t := range []struct {
		kind  string
		ident []string
	}{{"bronze", name.Bronze()}, {"quarantine", name.Quarantine()}} {
		if tbl, err := lake.LoadTable(ctx, cat, t.ident); err == nil && tbl != nil {
			if line := trimLine(tbl); line != "" {
				fmt.Fprintf(tw, "%s retention\t%s\n", t.kind, line)
			}
		}
	}
	tw.Flush()
	printValidationStatus(ctx, w, cat, name)
}

// trimLine is what bronze retention dropped from tbl, for status ("" when
// nothing ever was): the cutoff before which records are gone and the
// last run that dropped files.
func trimLine(tbl *table.Table) string {
	before, err := maintain.TrimmedBefore(tbl)
	if err != nil {
		return err.Error()
	}
	if before.IsZero() {
		return ""
	}
	s := fmt.Sprintf("records ingested before %s are dropped (late-key rebuilds and validation reach back only to then)", before.UTC().Format(time.RFC3339))
	if last, ok := maintain.LastTrim(tbl); ok {
		s += fmt.Sprintf("; last run %s (retention %s) dropped %s, %s, kept %s, %s",
			last.At, pipelines.FormatDuration(last.Retention), human.Count(last.FilesDropped, "file", "files"), human.Count(last.RowsDropped, "row", "rows"),
			human.Count(last.FilesKept, "file", "files"), human.Count(last.RowsKept, "row", "rows"))
	}
	return s
}

// localState renders a table's local state on its worker (as of its last
// batch): the key index in RAM and on disk, the chain log, the worker's
// index budget.
func localState(u *activities.StateUsage) string {
	where := "in RAM"
	if u.IndexSpilled {
		where = "spilled to disk"
	}
	s := fmt.Sprintf("key index of %d keys %s: %s in RAM, %s on disk; chain log %s on disk", u.IndexKeys, where, mib(u.IndexRAMBytes), mib(u.IndexDiskBytes), mib(u.LogBytes))
	if u.WorkerBudgetBytes > 0 {
		s += fmt.Sprintf("; worker's index budget %s (%s a table), its indexes %s in RAM", mib(u.WorkerBudgetBytes), mib(u.TableBudgetBytes), mib(u.WorkerIndexRAMBytes))
	}
	return s
}

// mib renders bytes as MiB with one decimal (KiB below 1 MiB).
func mib(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// positionText renders a source position held in the `_seq` column form
// (hex) for people: in the source's own terms (cdc.DescribeHex: "lsn
// 0/16B3748", "binlog file .000003 position 1234 row 0", ...) followed by
// the `_seq` value a query of the tables compares with; "position H" when
// the width names no connector; "none" for "".
func positionText(h string) string {
	if h == "" {
		return "none"
	}
	d := cdc.DescribeHex(h)
	if s, err := cdc.ParseSeqHex(h); err != nil || d == s.String() {
		return "position " + h
	}
	return d + " (_seq " + h + ")"
}
