package scd2

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/localstate"
	"github.com/lakemirror/lakemirror/internal/lake/rowdelta"
	"github.com/lakemirror/lakemirror/internal/lake/tablestate"
	"github.com/lakemirror/lakemirror/internal/layout"
	"github.com/lakemirror/lakemirror/internal/merge"
	"github.com/lakemirror/lakemirror/internal/payload"
)

// Properties of the history table.
const (
	PropPendingRebuild  = lakecat.PropPendingRebuild   // JSON array of hex keys whose history awaits a rebuild from bronze
	PropHistoryTracked  = "lakemirror.history.tracked" // JSON array of tracked columns; absent = all
	PropHistoryCollapse = "lakemirror.history.collapse-tx"
)

// HistoryWriter applies batches to one history table (SCD type 2) and
// keeps its index between batches. Not safe for concurrent use.
type HistoryWriter struct {
	cat     catalog.Catalog
	name    lakecat.TableName
	keyCols []string
	opts    merge.HistoryOptions
	state   *tablestate.State
	now     func() time.Time
	// withoutBronze: see WriterOptions.WithoutBronze
	withoutBronze bool
	layout        layout.Spec              // the history's partition fields and sort order
	deletes       layout.DeleteFormat      // the delete format the history is created with and must have ("" = position)
	parts         *rowdelta.FilePartitions // the partitions of the history's data files
}

// NewHistoryWriter returns a writer for name's history table, with a
// local state of its own (in the system temp directory) that logs the row
// changes it sees. See NewWriters for a mirror and history pair.
func NewHistoryWriter(cat catalog.Catalog, name lakecat.TableName, keyCols []string, opts merge.HistoryOptions) *HistoryWriter {
	return &HistoryWriter{cat: cat, name: name, keyCols: keyCols, opts: opts, now: time.Now,
		state: tablestate.NewState(cat, name, keyCols, "", false, true), parts: rowdelta.NewFilePartitions()}
}

// HistoryOptions are a history writer's table settings (NewWriters gives
// them from WriterOptions).
type HistoryOptions struct {
	History       merge.HistoryOptions
	WithoutBronze bool                // see WriterOptions.WithoutBronze
	Layout        layout.Spec         // the history's partition fields and sort order
	DeleteFormat  layout.DeleteFormat // the delete format the history is created with and must have ("" = position)
}

// NewHistoryWriterOn returns a writer for name's history table on st, the
// local state it shares with the table's mirror writer (NewWriters).
func NewHistoryWriterOn(cat catalog.Catalog, name lakecat.TableName, keyCols []string, st *tablestate.State, o HistoryOptions) *HistoryWriter {
	w := NewHistoryWriter(cat, name, keyCols, o.History)
	w.state, w.withoutBronze, w.layout, w.deletes = st, o.WithoutBronze, o.Layout, o.DeleteFormat
	return w
}

// State returns the writer's local state.
func (w *HistoryWriter) State() *tablestate.State { return w.state }

// Ensure creates the history table from the mirror's columns when it does
// not exist, and adds to it any column the mirror gained since. The
// tracking options are recorded in its properties.
func (w *HistoryWriter) Ensure(ctx context.Context, mirror *table.Table) (*table.Table, error) {
	w.state.Settle()
	keys, _ := json.Marshal(w.keyCols)
	props := map[string]string{lakecat.PropKeyColumns: string(keys), PropHistoryCollapse: fmt.Sprint(w.opts.CollapseTx)}
	if w.opts.Tracked != nil {
		t, _ := json.Marshal(w.opts.Tracked)
		props[PropHistoryTracked] = string(t)
	}
	tbl, _, err := lakecat.LoadOrCreateLaid(ctx, w.cat, w.name.NamespaceIdent(), w.name.History(),
		func() (*iceberg.Schema, error) { return lakecat.HistorySchema(mirror.Schema(), w.keyCols) }, rowdelta.WithFormatVersion(lakecat.TableProperties(props), w.deletes), &w.layout)
	if err != nil {
		return nil, err
	}
	if err := rowdelta.CheckDeleteFormat(tbl, w.deletes); err != nil {
		return nil, err
	}
	var missing, widened []iceberg.NestedField
	sys, err := lakecat.SystemColumnsOf(mirror.Schema())
	if err != nil {
		return nil, err
	}
	for _, f := range mirror.Schema().Fields() {
		if sys.Has(f.Name) {
			continue
		}
		h, ok := tbl.Schema().FindFieldByName(f.Name)
		if !ok {
			missing = append(missing, f)
			continue
		}
		if !h.Type.Equals(f.Type) {
			widened = append(widened, f) // the mirror's widening (int → long, ...), followed here
		}
	}
	if len(missing) == 0 && len(widened) == 0 {
		return tbl, nil
	}
	tx := tbl.NewTransaction()
	up := tx.UpdateSchema(true, false)
	for _, f := range missing {
		up = up.AddColumn([]string{f.Name}, f.Type, f.Doc, false, nil)
	}
	for _, f := range widened {
		up = up.UpdateColumn([]string{f.Name}, table.ColumnUpdate{FieldType: iceberg.Optional[iceberg.Type]{Val: f.Type, Valid: true}})
	}
	if err := up.Commit(); err != nil {
		return nil, fmt.Errorf("lake: add history columns: %w", err)
	}
	if tbl, err = lakecat.CommitTx(ctx, tbl, tx); err != nil {
		return nil, fmt.Errorf("lake: commit history columns: %w", err)
	}
	return tbl, nil
}

// Apply extends the history with one batch's prepared row changes, in one
// commit carrying the batch's bookkeeping. preSeq holds, per key of the
// batch, the mirror's `_seq` before the batch (the highest position
// applied to the key; absent for new keys); known is false when those are
// unknown (the mirror had committed the batch already), and then every
// key of the batch is treated as late. StageAfter reuses the
// plan of a mirror writer that shares its State.
//
// A key whose changes all follow preSeq is extended in order from its
// open version, which the local state holds with its values (see State):
// the history table is not read. A key with a change at or below preSeq
// that the history does not show (it neither opened nor closed a stored
// version) is late: it is added to the table's pending-rebuild set, which
// Rebuild resolves. Keys already pending stay pending. Every row change of
// the batch is recorded in the local state log for later rebuilds.
// Errors: catalog, file IO and commit conflicts (retryable).
func (w *HistoryWriter) Apply(ctx context.Context, b payload.Batch, events []*cdc.Event, preSeq map[cdc.Key]cdc.Seq, known bool) (payload.HistoryResult, error) {
	w.state.Settle()
	plan := tablestate.NewPlan(b.Seq, events)
	plan.Known = known
	plan.Pre = make([]cdc.Seq, len(plan.Groups))
	for i, g := range plan.Groups {
		plan.Pre[i] = preSeq[g.Key]
	}
	return w.run(ctx, b, plan)
}

// knows reports whether position s opened or closed one of the rows: a
// re-delivered change that needs no rebuild.
func knows(rows []localstate.HistRow, s cdc.Seq) bool {
	for _, v := range rows {
		if v.Seq == s || v.ToSeq == s {
			return true
		}
	}
	return false
}

// needsPrevValues reports whether an upsert among events has a TOAST
// placeholder (whose value is the previous version's).
func needsPrevValues(events []*cdc.Event) bool {
	for _, e := range events {
		if e.Op.IsUpsert() && localstate.HasUnavailable(e.After) {
			return true
		}
	}
	return false
}

// SetLayout gives the writer a new layout (partition fields, sort order,
// compression) for the history's next commits. Not for concurrent use
// with a write.
func (w *HistoryWriter) SetLayout(l layout.Spec) { w.layout = l }
