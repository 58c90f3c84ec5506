package activities

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/tableread"
	"github.com/lakemirror/lakemirror/schemas"
)

// RebuildKeys is the late path of docs/design.md rule 6: for every key the
// history table lists as pending (a batch held a change older than what
// the key had applied), it reads all of the key's records from bronze,
// decodes them, and replaces the key's history with the history of all
// its changes, and its mirror row with the fold of all its changes when
// that differs; each table in one commit. Keys whose rows are already
// right are left alone. The common in-order case never calls it.
//
// Errors: undecodable bronze records (non-retryable), catalog and file IO
// failures (retried); the benign, retryable WorkerLeaving when the worker
// begins to stop while the rebuild waits for the table's lock (leave.go).
func (a *Activities) RebuildKeys(ctx context.Context, req RebuildRequest) (RebuildResult, error) {
	spec := req.Spec.Defaults()
	if err := a.checkCatalog(spec); err != nil {
		return RebuildResult{}, err
	}
	st, name, err := a.state(spec)
	if err != nil {
		return RebuildResult{}, badSpec(err)
	}
	stop := keepAlive(ctx, heartbeatEvery, func() any { return stageDetail(st, "rebuild") }) // also while an earlier attempt holds the table
	defer stop()
	if err := a.lockOrLeave(ctx, &st.mu, spec.Table); err != nil {
		return RebuildResult{}, err
	}
	defer st.mu.Unlock()
	if err := st.settleKeys(ctx, a, name); err != nil {
		return RebuildResult{}, err
	}
	res, err := a.rebuildPending(ctx, st, name)
	if err == nil && a.Metrics != nil {
		a.Metrics.Rebuilt(spec.Table, res.Keys)
		if res.Unwoven > 0 {
			a.Metrics.Unwoven(spec.Table, res.Unwoven)
		}
	}
	return res, err
}

// rebuildPending rebuilds the keys the history lists as pending, or the
// mirror for a table without history (the body of RebuildKeys; the
// caller holds st.mu).
func (a *Activities) rebuildPending(ctx context.Context, st *tableState, name lake.TableName) (RebuildResult, error) {
	var res RebuildResult
	w := st.tableWriter(a, name)
	keys, err := w.Pending(ctx)
	if err != nil || len(keys) == 0 {
		return res, classify(err)
	}
	res.Keys = len(keys)
	byKey, err := a.pastEvents(ctx, st, name, keys)
	if err == nil {
		var unwoven int
		unwoven, err = a.withHeirs(ctx, st, name, byKey)
		res.Unwoven += unwoven
	}
	if errors.Is(err, errNoPast) {
		// no bronze and a local state built after the keys' earlier changes:
		// their history keeps its in-order versions and their mirror row its
		// guarded value (right but for the values a late change would give a
		// later delete without a before image or TOAST placeholder); they
		// leave the pending set, counted
		byKey, res.Unwoven = map[cdc.Key][]*cdc.Event{}, len(keys)
		for _, k := range keys {
			byKey[k] = nil
		}
		err = nil
	}
	if err != nil {
		return res, classify(err)
	}
	for _, es := range byKey {
		res.Events += len(es)
	}
	for _, k := range keys[:min(len(keys), 20)] {
		res.KeySample = append(res.KeySample, keyText(byKey[k], st.keyCols))
	}
	res.Mirror, res.History, err = w.Rebuild(ctx, byKey)
	return res, classify(err)
}

// withHeirs adds to byKey (every change of the keys a rebuild folds)
// every change of the new keys of their key changes that the mirror
// holds past them (lake.MirrorWriter.KeyChangeHeirs), and of those keys'
// own key changes, up to maxKeyChain steps: a change of the old key
// below its key-change delete that came after it (late, or a partition
// behind) changes what the new key's create took for its TOAST
// placeholders, so the new key is rebuilt with it (its create filled
// again from the old key's changes: lake.TableWriter.Rebuild). It
// returns how many such keys have no past to read (no bronze, a local
// state built after their changes: they keep their values, counted as
// unwoven). Errors: pastEvents'.
func (a *Activities) withHeirs(ctx context.Context, st *tableState, name lake.TableName, byKey map[cdc.Key][]*cdc.Event) (int, error) {
	mirror, _ := st.writers(a, name)
	for range maxKeyChain {
		heirs := mirror.KeyChangeHeirs(byKey)
		if len(heirs) == 0 {
			return 0, nil
		}
		more, err := a.pastEvents(ctx, st, name, heirs)
		if errors.Is(err, errNoPast) {
			return len(heirs), nil
		}
		if err != nil {
			return 0, err
		}
		for _, k := range heirs {
			byKey[k] = more[k]
		}
	}
	return 0, nil
}

// pastEvents returns every row change ever applied for each key, from
// the table's local state log. When a worker built its state from
// existing tables, the log lacks the changes applied before: it then
// reads them from bronze, either for the missing keys alone (a key-set
// read, pastKeyEvents) or, once those would cost more (see
// tablestate.State.KeySetReadPays), every bronze record once (decoded and
// prepared like a batch: changes an operator skipped stay skipped, table
// truncates recorded on the mirror apply) into the log, which then serves
// every later rebuild.
func (a *Activities) pastEvents(ctx context.Context, st *tableState, name lake.TableName, keys []cdc.Key) (map[cdc.Key][]*cdc.Event, error) {
	mirror, _ := st.writers(a, name)
	state := mirror.State()
	if byKey, ok, err := state.Events(keys); ok || err != nil {
		return byKey, err
	}
	if err := mirror.EnsureState(ctx); err != nil {
		return nil, err
	}
	if !state.EventsComplete() && st.spec.WithoutBronze {
		return nil, errNoPast
	}
	if missing := state.EventsMissing(keys); len(missing) > 0 {
		if err := st.settleTypes(ctx, a, name); err != nil {
			return nil, err
		}
		pays := state.KeySetReadPays(len(missing))
		switch testPastRead {
		case "keys":
			pays = true
		case "all":
			pays = false
		}
		var err error
		t0 := time.Now()
		if pays {
			err = a.pastKeyEvents(ctx, st, mirror, name, missing)
		} else {
			err = a.allPastEvents(ctx, st, mirror, name)
		}
		if err != nil {
			return nil, err
		}
		if a.BatchLog != nil {
			keys, cost := state.KeyLoads()
			what := "past changes of late keys read from bronze for those keys"
			if !pays {
				what = "past changes loaded from all of bronze"
			}
			a.BatchLog.Info(what, "table", st.spec.Table, "keys", len(missing), "keys_loaded", keys, "read_cost_rows", cost,
				"duration", time.Since(t0).Round(time.Millisecond))
		}
	}
	byKey, ok, err := state.Events(keys)
	if err == nil && !ok {
		err = fmt.Errorf("table %s: the local state lost its past changes while loading them", name)
	}
	return byKey, err
}

// testPastRead, when set, is how pastEvents reads past changes whatever
// they cost: "keys" (key-set reads) or "all" (every bronze record; tests).
var testPastRead string

// allPastEvents loads every bronze record of the table into the local
// state log, decoded and prepared a data file at a time
// (tablestate.State.LoadAllEvents sorts them by key before it adds them). The
// creates a primary-key update made with TOAST placeholders take their
// values from every change of their old keys, which other files may
// hold: they are kept back and prepared at the end with their old keys'
// records (keyChangeCreates).
func (a *Activities) allPastEvents(ctx context.Context, st *tableState, mirror *lake.MirrorWriter, name lake.TableName) error {
	return mirror.State().LoadAllEvents(func(add func(map[cdc.Key][]*cdc.Event) error) error {
		var held []*cdc.Event
		err := tableread.ScanBronze(ctx, a.Catalog, name, func(rows []lake.BronzeRow) error {
			events, err := st.decoders.decodeBronze(rows, false)
			if err != nil {
				return err
			}
			events = slices.DeleteFunc(events, func(e *cdc.Event) bool {
				if needsOldKey(e) {
					held = append(held, e)
					return true
				}
				return false
			})
			byKey, err := preparePast(ctx, mirror, events)
			if err != nil {
				return err
			}
			return add(byKey)
		})
		if err != nil || len(held) == 0 {
			return err
		}
		byKey, _, err := a.keyChangeCreates(ctx, st, mirror, name, held)
		if err != nil {
			return err
		}
		return add(byKey)
	})
}

// keyChangeCreates prepares creates (needsOldKey) with every bronze
// record of their old keys and returns the creates alone, by key, and
// the read's counts. Errors: catalog, storage and decoding failures.
func (a *Activities) keyChangeCreates(ctx context.Context, st *tableState, mirror *lake.MirrorWriter, name lake.TableName, creates []*cdc.Event) (map[cdc.Key][]*cdc.Event, tableread.BronzeKeyScan, error) {
	mine := make(map[*cdc.Event]bool, len(creates))
	for _, e := range creates {
		mine[e] = true
	}
	events, scan, err := a.withOldKeys(ctx, st, name, creates, nil)
	if err != nil {
		return nil, scan, err
	}
	prep, err := preparePast(ctx, mirror, events)
	if err != nil {
		return nil, scan, err
	}
	out := map[cdc.Key][]*cdc.Event{}
	for k, es := range prep {
		for _, e := range es {
			if mine[e] {
				out[k] = append(out[k], e)
			}
		}
	}
	return out, scan, nil
}

// needsOldKey reports whether e is a create a primary-key update made
// with TOAST placeholders, whose values are its old key's.
func needsOldKey(e *cdc.Event) bool {
	return e.OldKey != "" && e.Op.IsUpsert() && e.After != nil &&
		slices.ContainsFunc(e.After.Vals, func(v cdc.Value) bool { return v.Kind == cdc.KindUnavailable })
}

// pastKeyEvents loads the bronze records of keys alone into the local
// state log (tableread.ReadBronzeKeysCounted, then State.LoadKeyEvents). A
// create that a primary-key update made and that carries TOAST
// placeholders takes their values from its old key's changes
// (MirrorWriter.Prepare): those are read too and prepared with it, but
// not loaded.
func (a *Activities) pastKeyEvents(ctx context.Context, st *tableState, mirror *lake.MirrorWriter, name lake.TableName, keys []cdc.Key) error {
	rows, scan, err := tableread.ReadBronzeKeysCounted(ctx, a.Catalog, name, keys)
	if err != nil {
		return err
	}
	events, err := st.decoders.decodeBronze(rows, false)
	if err != nil {
		return err
	}
	events, more, err := a.withOldKeys(ctx, st, name, events, keys)
	if err != nil {
		return err
	}
	scan.KeysScanned += more.KeysScanned
	scan.RowsRead += more.RowsRead
	byKey, err := preparePast(ctx, mirror, events)
	if err != nil {
		return err
	}
	return mirror.State().LoadKeyEvents(keys, byKey, scan)
}

// withOldKeys returns events with every bronze record of the old keys
// their key-change creates with TOAST placeholders need (needsOldKey),
// not among have, and of those keys' own such creates' old keys, up to
// maxKeyChain key changes back, and the reads' counts. Errors: catalog,
// storage and decoding failures.
func (a *Activities) withOldKeys(ctx context.Context, st *tableState, name lake.TableName, events []*cdc.Event, have []cdc.Key) ([]*cdc.Event, tableread.BronzeKeyScan, error) {
	var scan tableread.BronzeKeyScan
	seen := slices.Clone(have)
	next := events
	for range maxKeyChain {
		old := oldKeysNeeded(next, seen)
		if len(old) == 0 {
			break
		}
		seen = append(seen, old...)
		rows, more, err := tableread.ReadBronzeKeysCounted(ctx, a.Catalog, name, old)
		if err != nil {
			return nil, scan, err
		}
		if next, err = st.decoders.decodeBronze(rows, false); err != nil {
			return nil, scan, err
		}
		events = append(events, next...)
		scan.KeysScanned += more.KeysScanned
		scan.RowsRead += more.RowsRead
	}
	return events, scan, nil
}

// maxKeyChain is how many primary-key changes back withOldKeys follows a
// TOAST placeholder; past it the value is the stored row's, if any.
const maxKeyChain = 16

// oldKeysNeeded returns the old keys, not among keys, of the creates in
// events that a primary-key update made with TOAST placeholders.
func oldKeysNeeded(events []*cdc.Event, keys []cdc.Key) []cdc.Key {
	have := make(map[cdc.Key]bool, len(keys))
	for _, k := range keys {
		have[k] = true
	}
	var out []cdc.Key
	for _, e := range events {
		if !have[e.OldKey] && needsOldKey(e) {
			have[e.OldKey] = true
			out = append(out, e.OldKey)
		}
	}
	return out
}

// preparePast prepares past changes read back from bronze as a batch's
// are prepared, for mirror's table, and groups them by key: changes an
// operator skipped (a blocked schema change) stay skipped, records that
// do not fit were quarantined when first applied and stay out, and the
// table truncates recorded on the mirror apply to the keys' older
// changes. Errors: Prepare's and ExpandTruncates'.
func preparePast(ctx context.Context, mirror *lake.MirrorWriter, events []*cdc.Event) (map[cdc.Key][]*cdc.Event, error) {
	prep, err := mirror.Prepare(ctx, events, lake.WithSchemaDecision(lake.DecisionSkip), lake.ForPastChanges())
	if err != nil {
		return nil, err
	}
	if events, err = mirror.ExpandTruncates(ctx, prep.Events); err != nil {
		return nil, err
	}
	byKey := map[cdc.Key][]*cdc.Event{}
	for _, e := range events {
		if e.Key != "" {
			byKey[e.Key] = append(byKey[e.Key], e)
		}
	}
	return byKey, nil
}

// errNoPast: a table without bronze whose local state lacks the keys'
// earlier changes (pastEvents).
var errNoPast = errors.New("the keys' earlier changes are neither in the local state nor in a bronze table")

// decodeBronze decodes bronze rows into their row-change events (with
// the old key of a primary-key change), with a decoder of the pool. A
// keyless row that does not decode is left out (it was quarantined when
// first read); a keyed one is an error (it decoded once: only a decoder
// change fails it). Table truncates are kept when truncates is set
// (decodeBronzeKinds).
func (p *decoderPool) decodeBronze(rows []lake.BronzeRow, truncates bool) ([]*cdc.Event, error) {
	d := p.get()
	defer p.put(d)
	return decodeBronzeKinds(d, rows, truncates)
}

// decodeBronzeKinds is decodeBronze with decoder d. Table truncates
// (keyless op t events) are kept when truncates is set: a re-apply of a
// batch replays them as the batch did; the rebuild takes them from the
// mirror's recorded truncates instead.
func decodeBronzeKinds(d *schemas.Decoder, rows []lake.BronzeRow, truncates bool) ([]*cdc.Event, error) {
	events := make([]*cdc.Event, 0, len(rows))
	for _, r := range rows {
		dec, err := d.Decode(r.Record)
		if err != nil && r.PK == "" {
			continue // a keyless record that does not decode was quarantined when first read
		}
		if err != nil { // bronze rows with a key were decoded once already: only a decoder change gets here
			return nil, err
		}
		if dec.Kind == schemas.KindTruncate && truncates {
			events = append(events, dec.Event)
		}
		if dec.Kind == schemas.KindChange {
			completeEvent(d, r.Topic, dec)
			events = append(events, dec.Event)
		}
	}
	return events, nil
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
