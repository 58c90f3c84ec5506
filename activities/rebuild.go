package activities

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/schemas"
)

// RebuildKeys is the late path of design.md rule 6: for every key the
// history table lists as pending (a batch held a change older than what
// the key had applied), it reads all of the key's records from bronze,
// decodes them, and replaces the key's history with the history of all
// its changes, and its mirror row with the fold of all its changes when
// that differs; each table in one commit. Keys whose rows are already
// right are left alone. The common in-order case never calls it.
//
// Errors: undecodable bronze records (non-retryable), catalog and file IO
// failures (retried).
func (a *Activities) RebuildKeys(ctx context.Context, req RebuildRequest) (RebuildResult, error) {
	spec := req.Spec.Defaults()
	st, name, err := a.state(spec)
	if err != nil {
		return RebuildResult{}, badSpec(err)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	stop := keepAlive(ctx, 5*time.Second, func() any { return "rebuild" })
	defer stop()
	if err := a.ensureKeyColumns(ctx, st, name); err != nil {
		return RebuildResult{}, err
	}
	res, err := a.rebuildPending(ctx, st, name)
	if err == nil && a.Metrics != nil {
		a.Metrics.Rebuilt(spec.Table, res.Keys)
	}
	return res, err
}

// rebuildPending rebuilds the keys the history lists as pending (the
// body of RebuildKeys; the caller holds st.mu).
func (a *Activities) rebuildPending(ctx context.Context, st *tableState, name lake.TableName) (RebuildResult, error) {
	var res RebuildResult
	mirror, history := st.writers(a, name)
	keys, err := history.Pending(ctx)
	if err != nil || len(keys) == 0 {
		return res, classify(err)
	}
	res.Keys = len(keys)
	rows, err := lake.ReadBronzeKeys(ctx, a.Catalog, name, keys)
	if err != nil {
		return res, classify(err)
	}
	res.Events = len(rows)
	events := make([]*cdc.Event, 0, len(rows))
	for _, r := range rows {
		rec := schemas.Record{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Key: r.Key, Value: r.Value, Timestamp: r.Timestamp}
		for _, h := range r.Headers {
			rec.Headers = append(rec.Headers, schemas.Header{Key: h.Key, Value: h.Value})
		}
		dec, err := st.decoder.Decode(rec)
		if err != nil { // bronze rows with a key were decoded once already: only a decoder change gets here
			return res, classify(err)
		}
		if dec.Kind == schemas.KindChange {
			if dec.OldKey != nil && dec.Event.Op.IsUpsert() {
				if k, err := st.decoder.DecodeKey(dec.OldKey); err == nil {
					dec.Event.OldKey = k
				}
			}
			events = append(events, dec.Event)
		}
	}
	// changes an operator skipped (a blocked schema change) stay skipped
	prep, err := mirror.Prepare(ctx, events, lake.WithSchemaDecision(lake.DecisionSkip))
	if err != nil {
		return res, classify(err)
	}
	// records that do not fit were quarantined when first applied; table
	// truncates recorded on the mirror apply to the keys' older changes
	if events, err = mirror.ExpandTruncates(ctx, prep.Events); err != nil {
		return res, classify(err)
	}
	byKey := make(map[cdc.Key][]*cdc.Event, len(keys))
	for _, k := range keys {
		byKey[k] = nil
	}
	for _, e := range events {
		if _, ok := byKey[e.Key]; ok {
			byKey[e.Key] = append(byKey[e.Key], e)
		}
	}
	for _, k := range keys[:min(len(keys), 20)] {
		res.KeySample = append(res.KeySample, keyText(byKey[k], st.keyCols))
	}
	if res.Mirror, err = mirror.Rebuild(ctx, byKey); err != nil {
		return res, classify(err)
	}
	if res.History, err = history.Rebuild(ctx, byKey); err != nil {
		return res, classify(err)
	}
	return res, nil
}

// keyText renders a key as "col=value,..." from one of its events.
func keyText(events []*cdc.Event, keyCols []string) string {
	if len(events) == 0 {
		return "?"
	}
	img := events[0].Image()
	var parts []string
	for _, c := range keyCols {
		v, _ := img.Get(c)
		parts = append(parts, fmt.Sprintf("%s=%s", c, valueText(v)))
	}
	return strings.Join(parts, ",")
}

func valueText(v cdc.Value) string {
	switch v.Kind {
	case cdc.KindInt, cdc.KindDate, cdc.KindTime, cdc.KindTimestamp, cdc.KindTimestampTZ:
		return fmt.Sprint(v.I)
	case cdc.KindDecimal:
		return v.DecimalText()
	case cdc.KindString:
		return v.S
	}
	return fmt.Sprintf("%x", v.S)
}
