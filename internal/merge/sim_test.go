package merge

import (
	"fmt"
	"sort"
	"strings"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// simRow is a stored mirror row in the test's in-memory model.
type simRow struct {
	Seq     cdc.Seq
	Deleted bool
	Vals    *cdc.Row
}

// simMirror applies batches with GroupByKey + Fold exactly as the lake
// writer does, but in memory.
type simMirror map[cdc.Key]simRow

func (m simMirror) apply(batch []*cdc.Event, keyCols []string) {
	for _, g := range GroupByKey(batch) {
		old, found := m[g.Key]
		o := Fold(Stored{Found: found, Seq: old.Seq, Deleted: old.Deleted}, g, keyCols)
		if !o.Changed {
			continue
		}
		vals := o.Values
		if o.ValuesFromStored {
			vals = old.Vals
		}
		if vals != nil && found {
			filled := &cdc.Row{Cols: vals.Cols, Vals: append([]cdc.Value(nil), vals.Vals...)}
			for i, v := range filled.Vals {
				if v.Kind == cdc.KindUnavailable {
					filled.Vals[i], _ = old.Vals.Get(vals.Cols.Names[i])
				}
			}
			vals = filled
		}
		m[g.Key] = simRow{Seq: o.Seq, Deleted: o.Deleted, Vals: vals}
	}
}

// dump renders the mirror sorted by key, one line per row.
func (m simMirror) dump() string {
	var lines []string
	for _, r := range m {
		var b strings.Builder
		if r.Vals != nil {
			for i, n := range r.Vals.Cols.Names {
				fmt.Fprintf(&b, "%s=%s ", n, show(r.Vals.Vals[i]))
			}
		}
		fmt.Fprintf(&b, "@%d deleted=%v", r.Seq.Words()[len(r.Seq.Words())-1], r.Deleted)
		lines = append(lines, b.String())
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func show(v cdc.Value) string {
	switch v.Kind {
	case cdc.KindNull:
		return "NULL"
	case cdc.KindInt:
		return fmt.Sprint(v.I)
	case cdc.KindString:
		return v.S
	case cdc.KindDecimal:
		return v.DecimalText()
	case cdc.KindUnavailable:
		return "?"
	}
	return fmt.Sprintf("%v", v)
}

var orderCols = cdc.NewColumns([]string{"order_id", "status", "amount"})

// ev builds an orders event at position seq (a PostgreSQL lsn).
func ev(op cdc.Op, seq uint64, id int64, status string, cents int64) *cdc.Event {
	row := &cdc.Row{Cols: orderCols, Vals: []cdc.Value{cdc.Int(id), cdc.String(status), cdc.Decimal(cents, 2)}}
	if status == "" {
		row.Vals[1], row.Vals[2] = cdc.Null(), cdc.Null()
	}
	e := &cdc.Event{Op: op, Seq: cdc.PostgresSeq(0, seq)}
	if op == cdc.OpDelete {
		e.Before = row
	} else {
		e.After = row
	}
	k, err := cdc.KeyOf(row, []string{"order_id"})
	if err != nil {
		panic(err)
	}
	e.Key = k
	return e
}
