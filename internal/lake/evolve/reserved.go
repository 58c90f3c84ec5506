package evolve

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/payload"
)

// PropIgnoredColumns lists the source columns an operator chose to leave
// out of mirror and history because their names are reserved (a system
// column's, see systemColumns): JSON array. Their values stay in bronze's
// raw records only.
const PropIgnoredColumns = "lakemirror.ignored-columns"

// ignoredColumns reads PropIgnoredColumns (nil when absent or unreadable,
// or tbl nil).
func ignoredColumns(tbl *table.Table) []string {
	if tbl == nil {
		return nil
	}
	var out []string
	_ = json.Unmarshal([]byte(tbl.Properties()[PropIgnoredColumns]), &out)
	return out
}

// reservedIn returns, per source column name in the events (their
// Connect schemas and row images) reserved in the mirror (reserve: the
// system column it collides with, "" if none), the events carrying it.
func reservedIn(events []*cdc.Event, reserve func(string) string) map[string][]*cdc.Event {
	var out map[string][]*cdc.Event
	add := func(name string, e *cdc.Event) {
		if reserve(name) == "" {
			return
		}
		if out == nil {
			out = map[string][]*cdc.Event{}
		}
		if l := out[name]; len(l) == 0 || l[len(l)-1] != e {
			out[name] = append(l, e)
		}
	}
	for _, e := range events {
		for _, c := range e.Schema {
			add(c.Name, e)
		}
		for _, img := range []*cdc.Row{e.Before, e.After} {
			if img != nil {
				for _, n := range img.Cols.Names {
					add(n, e)
				}
			}
		}
	}
	return out
}

// ReservedPlan is what Prepare does with a batch's reserved source column
// names.
type ReservedPlan struct {
	Ignored map[string]bool     // left out of the tables (recorded, or decided now)
	Record  []string            // decided now (evolve): to add to PropIgnoredColumns
	Skipped map[*cdc.Event]bool // decided now (skip): for the quarantine
}

// SettleReserved decides the batch's source columns named like a system
// column before the table is created or changed. A name the table
// already leaves out (PropIgnoredColumns) is left out again. For a new
// one, decision evolve leaves it out from now on (recorded with the
// table), skip sends the events carrying it to the quarantine, and no
// decision is a *SchemaBlockedError naming it (kind "reserved"). A key
// column with such a name is a *lakecat.ReservedColumnError (Key): the table
// cannot leave it out. tbl is the mirror, nil before it exists; the
// reserved names follow its schema (sysSet.reserved). Errors also:
// lakecat.SoftDeleteColumn's.
func SettleReserved(tbl *table.Table, events []*cdc.Event, keyCols []string, decision string) (ReservedPlan, error) {
	var p ReservedPlan
	var sc *iceberg.Schema
	if tbl != nil {
		sc = tbl.Schema()
	}
	sys, err := lakecat.SystemColumnsOf(sc)
	if err != nil {
		return p, err
	}
	reservedAs := func(name string) string { return sys.Reserved(name, sc) }
	found := reservedIn(events, reservedAs)
	if len(found) == 0 {
		return p, nil
	}
	for n := range found {
		if slices.Contains(keyCols, n) { // cannot be left out: no decision helps
			return p, &lakecat.ReservedColumnError{Column: n, Reserved: reservedAs(n), Key: true}
		}
	}
	p.Ignored = map[string]bool{}
	for _, n := range ignoredColumns(tbl) {
		p.Ignored[n] = true
	}
	var fresh []string
	for n := range found {
		if !p.Ignored[n] {
			fresh = append(fresh, n)
		}
	}
	slices.Sort(fresh)
	if len(fresh) == 0 {
		return p, nil
	}
	switch decision {
	case payload.DecisionEvolve:
		for _, n := range fresh {
			p.Ignored[n] = true
		}
		p.Record = fresh
	case payload.DecisionSkip:
		p.Skipped = map[*cdc.Event]bool{}
		for _, n := range fresh {
			for _, e := range found[n] {
				p.Skipped[e] = true
			}
		}
	default:
		blocked := &SchemaBlockedError{Fingerprint: "reserved:" + fmt.Sprint(fresh)}
		for _, n := range fresh {
			blocked.Changes = append(blocked.Changes, SchemaChange{Column: n, Kind: "reserved", From: reservedAs(n)})
		}
		return p, blocked
	}
	return p, nil
}

// RecordIgnored adds names to the mirror's PropIgnoredColumns. Errors:
// commit failures.
func RecordIgnored(ctx context.Context, tbl *table.Table, names []string) (*table.Table, error) {
	all := ignoredColumns(tbl)
	for _, n := range names {
		if !slices.Contains(all, n) {
			all = append(all, n)
		}
	}
	b, _ := json.Marshal(all)
	tx := tbl.NewTransaction()
	if err := tx.SetProperties(iceberg.Properties{PropIgnoredColumns: string(b)}); err != nil {
		return nil, err
	}
	out, err := lakecat.CommitTx(ctx, tbl, tx)
	if err != nil {
		return nil, fmt.Errorf("lake: record ignored columns: %w", err)
	}
	return out, nil
}
