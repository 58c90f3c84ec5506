//go:build !nodev

package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/lakemirror/lakemirror/internal/human"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/sample"
)

// compareExpected diffs the mirror rows (sorted by order_id) with the
// generator's expected rows and describes every difference; "" = equal.
// delCol is the mirror's soft-delete column (lakecat.SoftDeleteColumn).
func compareExpected(rows []lake.Row, delCol string, want []sample.Row) string {
	var diffs []string
	if len(rows) != len(want) {
		diffs = append(diffs, fmt.Sprintf("%d rows, want %d", len(rows), len(want)))
	}
	for i := 0; i < min(len(rows), len(want)); i++ {
		got, w := rows[i], want[i]
		id := fmt.Sprint(got["order_id"])
		check := func(col string, g, e any) {
			if fmt.Sprint(g) != fmt.Sprint(e) {
				diffs = append(diffs, fmt.Sprintf("order_id %s: %s = %v, want %v", id, col, g, e))
			}
		}
		check("order_id", got["order_id"], w.OrderID)
		check(delCol, got[delCol], w.Deleted)
		check(lake.ColSeq, got[lake.ColSeq], w.Seq.Hex())
		if w.Status != "" {
			check("status", got["status"], w.Status)
			check("customer", got["customer"], w.Customer)
			check("amount", got["amount"], w.Amount)
		}
	}
	return strings.Join(diffs, "\n")
}

// demoSampleRows is how many live rows the demo's summary shows.
const demoSampleRows = 3

// writeDemoSummary writes to log what the mirror rows (sorted by the key
// columns keys) hold before the demo prints them all: how many are live
// and soft-deleted (delCol), how many of the soft-deleted hold only their
// key (every source column srcCols but the key columns null: deletes of
// keys the stream never created, which leave no values to keep, listing
// the first keys), and the first live rows as the mirror prints them. The
// mirror's first rows by key are often such deletes, all null but their
// key; the summary says why before a person reads them.
func writeDemoSummary(log io.Writer, table string, rows []lake.Row, cols, keys, srcCols []string, delCol string) error {
	var live []lake.Row
	var keyOnly []string
	for _, r := range rows {
		if r[delCol] != true {
			live = append(live, r)
			continue
		}
		only := true
		for _, c := range srcCols {
			if !slices.Contains(keys, c) && r[c] != nil {
				only = false
				break
			}
		}
		if only {
			keyOnly = append(keyOnly, demoKeyText(r, keys))
		}
	}
	fmt.Fprintf(log, "demo: mirror %s: %s sorted by %s: %d live, %d soft-deleted (%s true)\n",
		table, human.Count(len(rows), "row", "rows"), strings.Join(keys, ","), len(live), len(rows)-len(live), delCol)
	if n := len(keyOnly); n > 0 {
		shown := strings.Join(keyOnly[:min(n, demoSampleRows)], ", ")
		if n > demoSampleRows {
			shown += ", …"
		}
		fmt.Fprintf(log, "demo: %d of the soft-deleted rows hold only their key, the other columns null: deletes of keys the stream never created (%s)\n", n, shown)
	}
	if len(live) == 0 {
		return nil
	}
	if len(live) > demoSampleRows {
		fmt.Fprintf(log, "demo: the first %d of %d live rows:\n", demoSampleRows, len(live))
	} else {
		fmt.Fprintf(log, "demo: the %s:\n", human.Count(len(live), "live row", "live rows"))
	}
	var b strings.Builder
	if err := lake.WriteJSONLines(&b, live[:min(len(live), demoSampleRows)], cols); err != nil {
		return err
	}
	for _, line := range strings.SplitAfter(b.String(), "\n") {
		if line != "" {
			fmt.Fprint(log, "  ", line)
		}
	}
	return nil
}

// demoKeyText names a row's key "col=value" per key column, joined by ",".
func demoKeyText(r lake.Row, keys []string) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%v", k, r[k])
	}
	return strings.Join(parts, ",")
}
