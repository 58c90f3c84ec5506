//go:build !nodev

package main

import (
	"fmt"
	"strings"

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
