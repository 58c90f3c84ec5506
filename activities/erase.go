package activities

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/apache/iceberg-go/table"
	"go.temporal.io/sdk/temporal"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/erasure"
	"github.com/lakemirror/lakemirror/schemas"
)

// Erase erases keys from the table's bronze, mirror, history, quarantine
// and purged tables (erasure.Erase), on the worker holding the table's
// state and under its lock, so between two of its batches; then it drops
// that state (which holds the keys' values: its key index, its chain
// log, its sidecar) and builds it again from the erased tables. Records
// without a typed key are matched with the table's decoder. Errors: a
// request that does not fit the table (non-retryable InvalidTableSpec),
// a refused erasure (non-retryable ErasureRefused; nothing changed),
// catalog, storage and commit failures (retried: the erasure continues
// where it stopped).
func (a *Activities) Erase(ctx context.Context, req EraseRequest) (lake.EraseResult, error) {
	spec := req.Spec.Defaults()
	if err := a.checkCatalog(spec); err != nil {
		return lake.EraseResult{}, err
	}
	st, name, done, err := a.jobState(spec)
	defer done()
	if err != nil {
		return lake.EraseResult{}, badSpec(err)
	}
	stop := keepAlive(ctx, 5*time.Second, func() any { return "erase " + req.ID })
	defer stop()
	st.mu.Lock()
	defer st.mu.Unlock()
	if p := st.prefetch.swap(nil); p != nil {
		p.cancel() // records read ahead are decoded again by the next batch, against the guard
	}
	mirror, err := lake.LoadTable(ctx, a.Catalog, name.Mirror())
	if err != nil {
		return lake.EraseResult{}, err
	}
	var matcher erasure.RawMatcher
	if mirror != nil {
		opts := a.decoderOptions(spec)
		opts.KeyColumns = req.Keys.KeyColumns
		opts.TableColumns = tableTypes(spec, mirror)
		matcher = &eraseMatcher{dec: schemas.NewDecoder(opts), mirror: mirror, keyCols: req.Keys.KeyColumns}
	}
	res, err := erasure.Erase(ctx, a.Catalog, name, erasure.EraseRequest{ID: req.ID, Keys: req.Keys, RequestedBy: req.RequestedBy,
		RequestedAt: req.RequestedAt, Force: req.Force, Matcher: matcher})
	if st.mirror != nil {
		// the local state holds the keys' values: dropped, and (once the
		// erasure is done) built again from the tables now, which deletes
		// its old log file
		st.mirror.State().Invalidate()
		if err == nil {
			if berr := st.mirror.EnsureState(ctx); berr != nil {
				return res, berr
			}
		}
	}
	var ke *erasure.EraseKeyError
	var re *erasure.ErasureRefusedError
	switch {
	case errors.As(err, &ke):
		return res, badSpec(err)
	case errors.As(err, &re):
		return res, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeErasureRefused, err)
	}
	return res, err
}

// eraseMatcher reads raw Kafka records for an erasure (erasure.RawMatcher)
// with a decoder of the table: keys typed as the mirror stores them.
type eraseMatcher struct {
	dec     *schemas.Decoder
	mirror  *table.Table
	keyCols []string
}

func (m *eraseMatcher) RecordKeys(key, value []byte) []cdc.Key {
	if key != nil {
		if k, ok := m.SerializedKey(key); ok {
			return []cdc.Key{k}
		}
	}
	if value == nil {
		return nil
	}
	d, err := m.dec.Decode(schemas.Record{Key: key, Value: value})
	if err != nil || d.Event == nil {
		return nil
	}
	if img := d.Event.Image(); img != nil {
		if k, err := erasure.TypedKey(m.mirror, m.keyCols, img); err == nil {
			return []cdc.Key{k}
		}
	}
	if d.Event.Key != "" {
		return []cdc.Key{d.Event.Key}
	}
	return nil
}

func (m *eraseMatcher) SerializedKey(b []byte) (cdc.Key, bool) {
	row, err := m.dec.DecodeKeyRow(b)
	if err != nil {
		return "", false
	}
	k, err := erasure.TypedKey(m.mirror, m.keyCols, row)
	return k, err == nil
}

// keyOf reads a serialized Kafka key as a row of the key columns with
// one of the pool's decoders (lake.WriteInput.KeyOf).
func (p *decoderPool) keyOf(b []byte) (*cdc.Row, bool) {
	d := p.get()
	defer p.put(d)
	row, err := d.DecodeKeyRow(b)
	if err != nil {
		return nil, false
	}
	return &cdc.Row{Cols: row.Cols, Vals: slices.Clone(row.Vals)}, true
}
