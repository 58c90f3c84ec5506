package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/apache/iceberg-go/catalog"

	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/validation"
	"github.com/lakemirror/lakemirror/internal/validate"
)

// printValidationStatus prints, from <ns>.<table>_validation, the last
// validation run and the last reconciliation run (runs whose id starts
// with lakemirror-reconcile-): when it checked, how many checks, and the
// failing ones with how many keys each named. Nothing when the table has
// no validation table.
func printValidationStatus(ctx context.Context, w io.Writer, cat catalog.Catalog, name lake.TableName) {
	tbl, err := lake.LoadTable(ctx, cat, name.Validation())
	if err != nil || tbl == nil || tbl.CurrentSnapshot() == nil {
		return
	}
	rows, _, err := lake.ReadRows(ctx, tbl, nil)
	if err != nil {
		fmt.Fprintf(w, "validation\t%v\n", err)
		return
	}
	type run struct {
		at     string
		checks int
		failed []string
	}
	last := map[string]*run{} // "validation" or "reconciliation" → its latest run
	runs := map[string]*run{}
	for _, r := range rows {
		id, _ := r[validation.ValRunID].(string)
		at, _ := r[validation.ValCheckedAt].(string)
		kind := "last validation"
		if strings.HasPrefix(id, "lakemirror-reconcile-") {
			kind = "last reconciliation"
		}
		ru := runs[id]
		if ru == nil {
			ru = &run{at: at}
			runs[id] = ru
		}
		ru.checks++
		if v, _ := r[validation.ValVerdict].(string); v == validate.Fail {
			check, _ := r[validation.ValCheck].(string)
			obs, _ := r[validation.ValObserved].(string)
			ru.failed = append(ru.failed, check+" ("+obs+")")
		}
		if l := last[kind]; l == nil || at > l.at {
			last[kind] = ru
		}
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, kind := range []string{"last validation", "last reconciliation"} {
		ru := last[kind]
		if ru == nil {
			continue
		}
		verdict := "all passed"
		if len(ru.failed) > 0 {
			slices.Sort(ru.failed)
			verdict = fmt.Sprintf("%d failed: %s", len(ru.failed), strings.Join(ru.failed, "; "))
		}
		fmt.Fprintf(tw, "%s\t%s: %d checks, %s\n", kind, ru.at, ru.checks, verdict)
	}
	tw.Flush()
}
