package lake

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/cdc/typing"
	"github.com/lakemirror/lakemirror/internal/lake/erasure"
	"github.com/lakemirror/lakemirror/internal/lake/evolve"
	"github.com/lakemirror/lakemirror/internal/lake/keyindex"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/rowdelta"
	"github.com/lakemirror/lakemirror/internal/lake/tablestate"
	"github.com/lakemirror/lakemirror/internal/layout"
)

// MirrorWriter applies batches to one mirror table and keeps its
// primary-key index between batches. One writer per table per process;
// not safe for concurrent use.
type MirrorWriter struct {
	cat     catalog.Catalog
	name    lakecat.TableName
	keyCols []string
	state   *tablestate.State
	now     func() time.Time
	plan    *tablestate.Plan // the last Apply's batch, for the history writer
	// prepared holds the purge horizon the last Prepare checked the batch
	// against, for Stage to fence on (ErrHorizonMoved); nil after Stage.
	prepared *string
	// refill: the new keys of key-change creates in the last Prepare's
	// batch whose TOAST placeholders the local state could not fill
	// exactly (fillFromOldKeys); the stage lists them for a rebuild
	refill map[cdc.Key]bool
	// rawAfter and unlogged: the key-change creates of that batch listed
	// as heirs (State.Heirs), with their after images as they came, for
	// the local state log (the log keeps those, or, for unlogged keys,
	// leaves the creates out)
	rawAfter map[*cdc.Event]*cdc.Row
	unlogged []cdc.Key
	// unknownFromOldKeys: TOAST placeholders of that batch's key-change
	// creates whose old key's value was not known, written as NULL
	// (counted in MirrorResult.UnknownPlaceholders)
	unknownFromOldKeys int
	purged             *purgedKeys              // the purged keys as of the last Prepare (purged.go)
	erasure            erasure.Guard            // the erased keys as of the last Prepare (erased.go)
	layout             layout.Spec              // the mirror's partition fields and sort order
	deletes            layout.DeleteFormat      // the delete format the mirror is created with and must have ("" = position)
	parts              *rowdelta.FilePartitions // the partitions of the mirror's data files
	// withoutBronze: the table keeps no bronze (WriterOptions.WithoutBronze)
	withoutBronze bool
	// schemaOf builds the schema a new mirror is created with (nil:
	// lakecat.MirrorSchema); tests set it to create tables of an earlier layout.
	schemaOf func(cols []cdc.Column, keyCols []string) (*iceberg.Schema, error)
}

// NewMirrorWriter returns a writer for the mirror of name with the given
// primary-key columns, with a local state of its own (in the system temp
// directory) that logs the row changes it applies. See NewWriters for a
// mirror and history pair.
func NewMirrorWriter(cat catalog.Catalog, name lakecat.TableName, keyCols []string) *MirrorWriter {
	return &MirrorWriter{cat: cat, name: name, keyCols: keyCols, now: time.Now,
		state: tablestate.NewState(cat, name, keyCols, "", true, false), parts: rowdelta.NewFilePartitions()}
}

// Index returns the writer's current key index (nil before the first
// batch), for tests and status.
func (w *MirrorWriter) Index() *keyindex.Index { return w.state.Index() }

// State returns the writer's local state.
func (w *MirrorWriter) State() *tablestate.State { return w.state }

// Ensure creates the mirror table if it does not exist, with columns from
// the events (their Connect schema when present, else inferred from the
// values; see typing.InferColumns). It returns nil, nil when the table
// does not exist and events hold no row image to take columns from.
func (w *MirrorWriter) Ensure(ctx context.Context, events []*cdc.Event) (*table.Table, error) {
	w.state.Settle()
	tbl, err := lakecat.LoadTable(ctx, w.cat, w.name.Mirror())
	if err != nil {
		return nil, err
	}
	return w.ensure(ctx, tbl, events, evolve.ReservedPlan{})
}

// ensure is Ensure for the mirror as loaded (tbl, nil when it does not
// exist), leaving out the source columns rp leaves out, recorded on the
// table (evolve.PropIgnoredColumns) when it creates it or rp decided them now.
func (w *MirrorWriter) ensure(ctx context.Context, tbl *table.Table, events []*cdc.Event, rp evolve.ReservedPlan) (*table.Table, error) {
	if tbl != nil {
		if len(rp.Record) > 0 {
			var err error
			if tbl, err = evolve.RecordIgnored(ctx, tbl, rp.Record); err != nil {
				return nil, err
			}
		}
		if err := rowdelta.CheckDeleteFormat(tbl, w.deletes); err != nil {
			return nil, err
		}
		return lakecat.Relaid(ctx, tbl, w.layout)
	}
	cols := slices.DeleteFunc(columnsFromEvents(events), func(c cdc.Column) bool { return rp.Ignored[c.Name] })
	if len(cols) == 0 {
		return nil, nil
	}
	keys, _ := json.Marshal(w.keyCols)
	props := map[string]string{lakecat.PropKeyColumns: string(keys), PropBitsOrder: BitsMostSignificantFirst}
	if len(rp.Ignored) > 0 {
		names := slices.Sorted(maps.Keys(rp.Ignored))
		b, _ := json.Marshal(names)
		props[evolve.PropIgnoredColumns] = string(b)
	}
	if since := evolve.CreationSince(events, cols); since != "" {
		props[evolve.PropColumnSince] = since
	}
	// truncates bronze took before the mirror existed (batches with no
	// row change), or the namespace kept for a table without bronze,
	// apply to changes below them that arrive later
	pending, err := pendingTruncates(ctx, w.cat, w.name)
	if err != nil {
		return nil, err
	}
	marks, err := bronzeTruncates(ctx, w.cat, w.name)
	if err != nil {
		return nil, err
	}
	if len(marks) > 0 || len(pending) > 0 {
		if props[PropTruncates], _, err = addTruncates(marks, pending); err != nil {
			return nil, err
		}
	}
	// keys erased from the tables' earlier life stay erased
	if h, err := erasure.Horizon(ctx, w.cat, w.name); err != nil {
		return nil, err
	} else if h != "" {
		props[erasure.PropErasureHorizon] = h
	}
	tbl, _, err = lakecat.LoadOrCreateLaid(ctx, w.cat, w.name.NamespaceIdent(), w.name.Mirror(),
		func() (*iceberg.Schema, error) {
			if w.schemaOf != nil {
				return w.schemaOf(cols, w.keyCols)
			}
			return lakecat.MirrorSchema(cols, w.keyCols)
		},
		rowdelta.WithFormatVersion(lakecat.TableProperties(props), w.deletes), &w.layout)
	if err == nil {
		// lost a creation race to a writer with another setting
		err = rowdelta.CheckDeleteFormat(tbl, w.deletes)
	}
	if err == nil && len(pending) > 0 {
		// the mirror holds them now; left behind by a failure here, they
		// are merged again (each once) if the mirror is ever created anew
		_, _ = ClearPendingTruncates(ctx, w.cat, w.name)
	}
	return tbl, err
}

// columnsFromEvents takes the column list of the first event carrying a
// schema, else infers one from all events' values.
func columnsFromEvents(events []*cdc.Event) []cdc.Column {
	for _, e := range events {
		if e.Schema != nil {
			return e.Schema
		}
	}
	return typing.InferColumns(events)
}

// PrepareOption adjusts Prepare.
type PrepareOption func(*prepareConfig)

type prepareConfig struct {
	decision string
	past     bool
}

// WithSchemaDecision applies an operator's decision (DecisionEvolve or
// DecisionSkip) to the schema change that blocked this batch.
func WithSchemaDecision(d string) PrepareOption { return func(c *prepareConfig) { c.decision = d } }

// ForPastChanges prepares changes already applied once (read back from
// bronze for the late path), not a batch: they are the keys' history, so
// no purge refuses any of them (a purged key's pre-purge changes are what
// its history versions came from), and no batch is fenced on them.
func ForPastChanges() PrepareOption { return func(c *prepareConfig) { c.past = true } }

// Prepared is a batch readied by Prepare.
type Prepared struct {
	Table    *table.Table    // the mirror; nil when it does not exist and the events hold no row
	Added    []string        // columns added because they first appeared in the events
	Events   []*cdc.Event    // the events to apply: every event but the rejected ones
	Rejected []*ConformError // row changes with a value that does not fit its column (for the quarantine)
	// CarriedDeleteValues counts values of deletes' before images that did
	// not fit their column and took the key's last known value instead
	// (see shape.conformEvent); the deletes themselves applied.
	CarriedDeleteValues int
}

// Prepare readies a batch's events for Apply (and for the bronze table's
// key column): it creates the mirror if needed (see Ensure), adds columns
// that first appear in the events (see evolve), and aligns every row image
// to the table's columns with values converted to their column types,
// recomputing each event's Key from the typed values. A row change with a
// value that does not fit its column is rejected (returned for the
// quarantine, left out of Events), never written as NULL. Errors: catalog
// failures (retryable), column types with no Iceberg equivalent, and a
// *SchemaBlockedError when the events' schema changed in a way that needs
// an operator's decision (see WithSchemaDecision).
func (w *MirrorWriter) Prepare(ctx context.Context, events []*cdc.Event, opts ...PrepareOption) (Prepared, error) {
	w.state.Settle()
	var cfg prepareConfig
	for _, o := range opts {
		o(&cfg)
	}
	p := Prepared{Events: events}
	cur, err := lakecat.LoadTable(ctx, w.cat, w.name.Mirror())
	if err != nil {
		return p, err
	}
	rp, err := evolve.SettleReserved(cur, events, w.keyCols, cfg.decision)
	if err != nil {
		return p, err
	}
	live := events
	if len(rp.Skipped) > 0 {
		live = slices.DeleteFunc(slices.Clone(events), func(e *cdc.Event) bool { return rp.Skipped[e] })
	}
	tbl, err := w.ensure(ctx, cur, live, rp)
	if err != nil {
		return p, err
	}
	if tbl == nil { // no row image to create the table from
		for _, e := range events {
			if rp.Skipped[e] {
				p.Rejected = append(p.Rejected, skippedBySchema(e, whyReserved))
			}
		}
		p.Events = live
		return p, nil
	}
	var skipped map[*cdc.Event]bool
	if tbl, p.Added, skipped, err = evolve.Evolve(ctx, tbl, live, w.keyCols, cfg.decision, rp.Ignored); err != nil {
		return p, err
	}
	for e := range rp.Skipped {
		skipped[e] = true
	}
	p.Table = tbl
	// changes of transactions a re-snapshot did not see sort above its rows
	if err := liftSnapshots(tbl, events); err != nil {
		return p, err
	}
	sh, err := tablestate.ShapeOf(tbl.Schema(), w.keyCols)
	if err != nil {
		return p, err
	}
	var horizon cdc.Seq
	if !cfg.past {
		if horizon, err = w.purgeHorizon(ctx, tbl); err != nil {
			return p, err
		}
		checked := purgeFence(tbl)
		w.prepared = &checked
	}
	if err := w.prepareErasure(ctx, tbl, cfg.past); err != nil {
		return p, err
	}
	if horizon != "" {
		if w.purged, err = w.loadPurged(ctx, tbl, w.purged); err != nil {
			return p, err
		}
	}
	kept := make([]*cdc.Event, 0, len(events))
	for _, e := range events {
		if rej := w.erasedReject(e); rej != nil {
			p.Rejected = append(p.Rejected, rej)
			continue
		}
		if skipped[e] {
			why := whySchema
			if rp.Skipped[e] {
				why = whyReserved
			}
			p.Rejected = append(p.Rejected, skippedBySchema(e, why))
			continue
		}
		if e.Op.IsUpsert() || e.Op == cdc.OpDelete {
			_, carried, err := sh.ConformEvent(e)
			if err != nil {
				p.Rejected = append(p.Rejected, &ConformError{Origin: e.Origin, Stage: StageConform, Err: err})
				continue
			}
			p.CarriedDeleteValues += carried
			if horizon != "" && e.Seq <= horizon {
				if _, found := w.state.Ix.Lookup(e.Key); !found {
					if refuse, why := w.purged.refuses(e.Key, e.Seq); refuse {
						p.Rejected = append(p.Rejected, &ConformError{Origin: e.Origin, Stage: StagePurged,
							Err: fmt.Errorf("%s: applying it could resurrect a purged row", why)})
						continue
					}
				}
			}
		}
		kept = append(kept, e)
	}
	p.Events = kept
	if !cfg.past {
		w.rawAfter, w.unlogged, w.unknownFromOldKeys = nil, nil, 0
	}
	refill, err := w.fillFromOldKeys(ctx, tbl, sh, kept, cfg.past)
	if err != nil {
		return p, err
	}
	if !cfg.past {
		w.refill = refill
	}
	return p, nil
}

// skippedBySchema is the quarantine entry of an event an operator's skip
// decision left out, and why it needed one.
func skippedBySchema(e *cdc.Event, why string) *ConformError {
	return &ConformError{Origin: e.Origin, Stage: StageSchema, Err: fmt.Errorf("skipped by an operator: %s", why)}
}

const (
	whySchema   = "its source schema changed incompatibly"
	whyReserved = "it has a source column with a reserved name"
)

// purgeHorizon returns the mirror's purge horizon ("" when it was never
// purged), with the key index ready to tell which keys it holds.
func (w *MirrorWriter) purgeHorizon(ctx context.Context, tbl *table.Table) (cdc.Seq, error) {
	h := tbl.Properties()[PropPurgeHorizon]
	if h == "" {
		return "", nil
	}
	s, err := cdc.ParseSeqHex(h)
	if err != nil {
		return "", err
	}
	return s, w.ensureIndex(ctx, tbl)
}

// PreBatchSeqs returns, for the keys of the batch the last Apply wrote,
// their `_seq` before it (absent for keys new to the mirror), and false
// when the last Apply wrote nothing new (the batch was already committed,
// or it failed) so those positions are unknown.
func (w *MirrorWriter) PreBatchSeqs() (map[cdc.Key]cdc.Seq, bool) {
	w.state.Settle()
	if w.plan == nil || !w.plan.Known {
		return nil, false
	}
	out := make(map[cdc.Key]cdc.Seq, len(w.plan.Groups))
	for i, g := range w.plan.Groups {
		if w.plan.Pre[i] != "" {
			out[g.Key] = w.plan.Pre[i]
		}
	}
	return out, true
}

// EnsureState makes the writer's local state reflect the mirror's current
// snapshot (building it from the tables when needed). Errors: catalog and
// file IO failures.
func (w *MirrorWriter) EnsureState(ctx context.Context) error {
	if err := w.state.AwaitBuild(ctx); err != nil {
		return err
	}
	w.state.Settle()
	tbl, err := lakecat.LoadTable(ctx, w.cat, w.name.Mirror())
	if err != nil {
		return err
	}
	return w.state.EnsureMirror(ctx, tbl)
}

// ensureIndex makes the local state (key index and log) reflect tbl's
// current snapshot, rebuilding it from the tables when the worker has
// none or finds the table at another snapshot.
func (w *MirrorWriter) ensureIndex(ctx context.Context, tbl *table.Table) error {
	return w.state.EnsureMirror(ctx, tbl)
}
