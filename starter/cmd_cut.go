package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/cuts"
	"github.com/lakemirror/lakemirror/workflows"
)

func (a *app) cutCmd() *cobra.Command {
	var at string
	var out outputFlag
	cmd := &cobra.Command{
		Use:   "cut GROUP|TABLE [--at POSITION|TIME]",
		Short: "Show a source group's newest consistent cut: its tag and each table's snapshots",
		Long: `cut shows the newest consistent cut a source group published (docs/design.md,
"Consistent cuts across a source group"): every transaction committed at or below
its position W is in every table of the group, and nothing above it. It prints the
cut's number, W, the source commit time of W, and per table the Iceberg snapshot
of its mirror and history at the cut, with the tag to read them at (cut-<n>), and
how to read them (Spark and Trino: FOR VERSION AS OF 'cut-<n>'; pyiceberg:
snapshot_by_name).

A TABLE argument (namespace.table) names its group. The cuts are read from the
group's table <ns>._cuts through the catalog. --at picks the newest cut at or
before a position (the hex _seq of the group's connector, as the tables' _seq
column holds it) or a source commit time (RFC 3339). With --output json it prints
the cut as one object (fields in docs/operating.md).`,
		Example: "  starter cut shop\n  starter cut shop.orders --at 2026-12-06T10:00:00Z\n  starter cut shop --at 00000000016b3748ffffffffffffffff --output json",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			asJSON, err := out.json()
			if err != nil {
				return err
			}
			sel, err := parseCutAt(at)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			c, group, err := a.dialGroup(ctx, args[0])
			if err != nil {
				return err
			}
			defer c.Close()
			g, err := queryGroupCut(ctx, c, group)
			if err != nil {
				return err
			}
			if path := a.settings.Catalog.LocalCatalogMissing(); path != "" {
				return notFound("no Iceberg catalog at %s: run cut where the worker keeps its data (--data-dir, env LAKEMIRROR_DATA_DIR) or give --catalog-uri", path)
			}
			cat, err := lake.OpenCatalog(ctx, a.settings.Catalog)
			if err != nil {
				return err
			}
			if cl, ok := cat.(interface{ Close() error }); ok {
				defer cl.Close()
			}
			var rows []cuts.Row
			for _, first := range cutTables(g) {
				r, err := cuts.Read(ctx, cat, first, group)
				if err != nil {
					return err
				}
				rows = append(rows, r...)
			}
			v, err := pickCut(group, rows, sel)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), v)
			}
			printCut(cmd.OutOrStdout(), v)
			return nil
		},
	}
	cmd.Flags().StringVar(&at, "at", "", "the newest cut at or before this source position (hex _seq) or source commit time (RFC 3339); default: the newest cut")
	out.bind(cmd)
	return cmd
}

// dialGroup connects to Temporal (requiring a worker, which answers the
// group's query) and resolves arg to a group: a table (namespace.table)
// names its spec's group, anything else is a group name. Errors: the
// dial's, a table that does not run (exit code 3) or has no group
// (usage).
func (a *app) dialGroup(ctx context.Context, arg string) (client.Client, string, error) {
	if !strings.Contains(arg, ".") {
		c, err := a.dialWorker(ctx, "")
		return c, arg, err
	}
	c, st, err := a.dialStatus(ctx, arg)
	if err != nil {
		return nil, "", err
	}
	if st.Spec.Group == "" {
		c.Close()
		return nil, "", usage("%s belongs to no source group: its spec has no group (start it with --group, or group: in the pipelines file)", arg)
	}
	return c, st.Spec.Group, nil
}

// queryGroupCut asks group's workflow for its cut (workflows.QueryCut),
// waiting at most queryTimeout. Errors: no such group (exit code 3),
// Temporal's.
func queryGroupCut(ctx context.Context, c client.Client, group string) (workflows.GroupCut, error) {
	var g workflows.GroupCut
	qctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	v, err := c.QueryWorkflow(qctx, workflows.GroupWorkflowID(group), "", workflows.QueryCut)
	if err != nil {
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return g, notFound("no such group %s: no table of it runs (workflow %s does not exist); a table joins a group with start --group or group: in the pipelines file", group, workflows.GroupWorkflowID(group))
		}
		return g, fmt.Errorf("query group %s: %w", group, err)
	}
	return g, v.Get(&g)
}

// cutTables are a table of each namespace the group's tables (now, and
// those its newest cut tagged) are in: the group table `_cuts` is in the
// namespace of the first table (sorted) when a cut was published, so
// each of them is read.
func cutTables(g workflows.GroupCut) []lake.TableName {
	all := slices.Clone(g.Tables)
	if g.Published != nil {
		for _, t := range g.Published.Tagged {
			all = append(all, t.Table)
		}
	}
	seen := map[string]bool{}
	var out []lake.TableName
	for _, t := range all {
		n, err := lake.ParseTableName(t)
		if err != nil || seen[n.Namespace] {
			continue
		}
		seen[n.Namespace] = true
		out = append(out, n)
	}
	return out
}

// cutAt is what --at selects: the newest cut at or below a position
// (Seq set), or with a source commit time at or before Time; neither:
// the newest cut.
type cutAt struct {
	Text string
	Seq  cdc.Seq
	Time time.Time
}

// parseCutAt reads --at: an RFC 3339 time, else a hex `_seq` position
// (dots between its words allowed). Errors: usage.
func parseCutAt(s string) (cutAt, error) {
	if s == "" {
		return cutAt{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return cutAt{Text: s, Time: t}, nil
	}
	seq, err := cdc.ParseSeqHex(strings.ToLower(strings.ReplaceAll(s, ".", "")))
	if err != nil || seq == "" {
		return cutAt{}, usage("--at %q: give a source position as the tables' _seq holds it (hex, 16 digits a word) or a source commit time (RFC 3339, e.g. 2026-12-06T10:00:00Z)", s)
	}
	return cutAt{Text: s, Seq: seq}, nil
}

// cutView is one published cut as cut prints it (--output json: these
// field names are stable).
type cutView struct {
	Group       string     `json:"group"`
	Cut         int64      `json:"cut"`
	Tag         string     `json:"tag"`
	W           string     `json:"w"`
	TxID        string     `json:"tx_id,omitempty"`
	SourceTs    *time.Time `json:"source_ts,omitempty"`
	PublishedAt time.Time  `json:"published_at"`
	// PerPosition: the cut is consistent per position, not per
	// transaction (the group has no transaction topic): a transaction
	// may straddle W.
	PerPosition bool           `json:"per_position,omitempty"`
	Tables      []cutTableView `json:"tables"`
	Read        string         `json:"read"`
}

// cutTableView is one table of a cut: its mirror's and history's Iceberg
// tables and their snapshots at the cut (0: empty at the cut, no tag).
type cutTableView struct {
	Table           string `json:"table"`
	Mirror          string `json:"mirror"`
	MirrorSnapshot  int64  `json:"mirror_snapshot_id"`
	History         string `json:"history"`
	HistorySnapshot int64  `json:"history_snapshot_id"`
}

// pickCut is the newest of the group's cuts in rows (its `_cuts` rows)
// that sel selects. Errors (exit code 3): no cut, none at or before sel.
func pickCut(group string, rows []cuts.Row, sel cutAt) (cutView, error) {
	byCut := map[int64][]cuts.Row{}
	var numbers []int64
	for _, r := range rows {
		if r.Group != group {
			continue
		}
		if _, ok := byCut[r.Number]; !ok {
			numbers = append(numbers, r.Number)
		}
		if !slices.ContainsFunc(byCut[r.Number], func(o cuts.Row) bool { return o.Table == r.Table }) {
			byCut[r.Number] = append(byCut[r.Number], r)
		}
	}
	if len(numbers) == 0 {
		return cutView{}, notFound("the group %s has published no cut: see `starter status TABLE` of a table of the group for what holds it", group)
	}
	slices.Sort(numbers)
	pick := int64(-1)
	for _, n := range numbers {
		r := byCut[n][0]
		switch {
		case sel.Seq != "":
			w, err := cdc.ParseSeqHex(r.W)
			if err != nil || w.Compare(sel.Seq) > 0 {
				continue
			}
		case !sel.Time.IsZero():
			if r.SourceTsMs == 0 || time.UnixMilli(r.SourceTsMs).After(sel.Time) {
				continue
			}
		}
		pick = n
	}
	if pick < 0 {
		first := byCut[numbers[0]][0]
		if !sel.Time.IsZero() && first.SourceTsMs == 0 {
			return cutView{}, notFound("--at %s: the cuts of group %s have no source commit time (cuts per position): give --at a position (hex _seq)", sel.Text, group)
		}
		return cutView{}, notFound("--at %s is before the first cut of group %s (cut %d at %s%s)", sel.Text, group, first.Number, first.W, sourceTimeText(first.SourceTsMs))
	}
	rs := byCut[pick]
	slices.SortFunc(rs, func(a, b cuts.Row) int { return strings.Compare(a.Table, b.Table) })
	r := rs[0]
	v := cutView{Group: group, Cut: r.Number, Tag: cuts.Tag(r.Number), W: r.W, TxID: r.TxID, PublishedAt: r.PublishedAt.UTC(), PerPosition: r.PerPosition}
	if r.SourceTsMs != 0 {
		ts := time.UnixMilli(r.SourceTsMs).UTC()
		v.SourceTs = &ts
	}
	for _, t := range rs {
		tv := cutTableView{Table: t.Table, MirrorSnapshot: t.Mirror, HistorySnapshot: t.History}
		if n, err := lake.ParseTableName(t.Table); err == nil {
			tv.Mirror, tv.History = lake.IdentString(n.Mirror()), lake.IdentString(n.History())
		}
		v.Tables = append(v.Tables, tv)
	}
	example := "<ns>.<table>"
	if len(v.Tables) > 0 && v.Tables[0].Mirror != "" {
		example = v.Tables[0].Mirror
	}
	v.Read = fmt.Sprintf("read every table at tag %s: Spark and Trino `SELECT * FROM %s FOR VERSION AS OF '%s'`; pyiceberg `tbl.scan(snapshot_id=tbl.snapshot_by_name('%s').snapshot_id)`; or at the snapshot ids above",
		v.Tag, example, v.Tag, v.Tag)
	if v.PerPosition {
		v.Read += "; per position: every change at or below W is in the tables and none above, but a transaction may straddle W (part of it in the tables)"
	}
	return v, nil
}

// cutPositionText renders a cut's W for people: positionText, but a
// PostgreSQL W (the END's commit LSN as the first word, 0 as the second:
// above every change of the transactions committed at or before it) as
// "commit at lsn 0/6F (_seq ...)", not as a source snapshot's position.
func cutPositionText(h string) string {
	if d, ok := strings.CutPrefix(positionText(h), "source snapshot at "); ok {
		return "commit at " + d
	}
	return positionText(h)
}

// sourceTimeText is ", source commit time T" for a cut's END time in ms
// ("" for 0: unknown).
func sourceTimeText(ms int64) string {
	if ms == 0 {
		return ""
	}
	return ", source commit time " + time.UnixMilli(ms).UTC().Format(time.RFC3339Nano)
}

// printCut renders a cut for people.
func printCut(w io.Writer, v cutView) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "group\t%s\n", v.Group)
	fmt.Fprintf(tw, "cut\t%d (tag %s)\n", v.Cut, v.Tag)
	if v.PerPosition {
		fmt.Fprintf(tw, "consistent\tper position, not per transaction (no transaction topic): a transaction may straddle W\n")
		fmt.Fprintf(tw, "W\t%s\n", positionText(v.W))
	} else {
		fmt.Fprintf(tw, "W\t%s\n", cutPositionText(v.W))
	}
	if v.TxID != "" {
		fmt.Fprintf(tw, "transaction\t%s\n", v.TxID)
	}
	src := "unknown (a cut per position)"
	if v.SourceTs != nil {
		src = v.SourceTs.Format(time.RFC3339Nano)
		if v.PerPosition {
			src += " (the newest change the tables had applied when they froze)"
		}
	}
	fmt.Fprintf(tw, "source commit time\t%s\n", src)
	fmt.Fprintf(tw, "published\t%s\n", v.PublishedAt.Format(time.RFC3339))
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TABLE\tMIRROR\tSNAPSHOT\tHISTORY\tSNAPSHOT\tTAG")
	snap := func(id int64) string {
		if id == 0 {
			return "-"
		}
		return strconv.FormatInt(id, 10)
	}
	for _, t := range v.Tables {
		tag := v.Tag
		if t.MirrorSnapshot == 0 && t.HistorySnapshot == 0 {
			tag = "- (empty at the cut)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", t.Table, t.Mirror, snap(t.MirrorSnapshot), t.History, snap(t.HistorySnapshot), tag)
	}
	tw.Flush()
	fmt.Fprintln(w)
	fmt.Fprintln(w, v.Read)
}
