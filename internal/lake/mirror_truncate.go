package lake

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/keyindex"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
)

// PropTruncates records the table truncates (Debezium op t) applied to a
// mirror: a JSON array of {"seq": hex position, "ts": µs}. Late changes
// and late-key rebuilds consult it so that a change older than a truncate
// stays truncated whenever it arrives. Bronze records the truncates of
// the records it appends under the same property, for a mirror created
// after them (see bronzeTruncates).
const PropTruncates = "lakemirror.truncates"

type truncateMark struct {
	Seq string `json:"seq"`
	Ts  int64  `json:"ts"`
}

func readTruncates(tbl *table.Table) ([]truncateMark, error) {
	var out []truncateMark
	if t := tbl.Properties()[PropTruncates]; t != "" {
		if err := json.Unmarshal([]byte(t), &out); err != nil {
			return nil, fmt.Errorf("lake: bad %s: %w", PropTruncates, err)
		}
	}
	return out, nil
}

// ExpandTruncates turns table truncates into per-key events (op t with
// the key set, applied by merge.Fold and merge.Replay as "delete if
// live"): every truncate of the batch (keyless op t events) applies to
// every key the mirror holds live below its position, to every key the
// mirror holds past it whose history has a version spanning it (a late
// truncate) and to every key of the batch with a change below it; every
// truncate recorded on the mirror applies to the keys of the batch that
// have a change below it. It returns events plus the
// per-key events; the keyless truncates stay (Apply records them).
// Errors: catalog and file IO failures (reading the key index).
func (w *MirrorWriter) ExpandTruncates(ctx context.Context, events []*cdc.Event) ([]*cdc.Event, error) {
	w.state.Settle()
	var marks []truncateMark
	var batchMarks []*cdc.Event
	for _, e := range events {
		if e.Op == cdc.OpTruncate && e.Key == "" {
			batchMarks = append(batchMarks, e)
			marks = append(marks, truncateMark{Seq: e.Seq.Hex(), Ts: e.SourceTs})
		}
	}
	tbl, err := lakecat.LoadTable(ctx, w.cat, w.name.Mirror())
	if err != nil {
		return nil, err
	}
	var recorded []truncateMark
	if tbl != nil {
		if recorded, err = readTruncates(tbl); err != nil {
			return nil, err
		}
		marks = append(marks, recorded...)
	}
	if len(marks) == 0 {
		return events, nil
	}
	// the lowest position of each key of the batch
	first := map[cdc.Key]lowest{}
	for _, e := range events {
		if e.Key == "" || (!e.Op.IsUpsert() && e.Op != cdc.OpDelete) {
			continue
		}
		l := first[e.Key]
		l.add(e.Seq)
		first[e.Key] = l
	}
	out := slices.Clone(events)
	type added struct {
		k   cdc.Key
		seq string
	}
	done := map[added]bool{}
	add := func(k cdc.Key, m truncateMark, origin cdc.Origin) error {
		if done[added{k, m.Seq}] {
			return nil
		}
		done[added{k, m.Seq}] = true
		seq, err := cdc.ParseSeqHex(m.Seq)
		if err != nil {
			return err
		}
		out = append(out, &cdc.Event{Op: cdc.OpTruncate, Seq: seq, Key: k, SourceTs: m.Ts, Origin: origin})
		return nil
	}
	for _, m := range marks {
		t, err := cdc.ParseSeqHex(m.Seq)
		if err != nil {
			return nil, err
		}
		for k, l := range first {
			applies := l.below(t)
			if !applies {
				if applies, err = w.readAfterStored(ctx, tbl, k, l, t); err != nil {
					return nil, err
				}
			}
			if applies {
				if err := add(k, m, cdc.Origin{}); err != nil {
					return nil, err
				}
			}
		}
	}
	if len(batchMarks) > 0 && tbl != nil {
		if err := w.ensureIndex(ctx, tbl); err != nil {
			return nil, err
		}
		var late []*cdc.Event // truncates whose keys past them need the history's check
		for _, t := range batchMarks {
			m := truncateMark{Seq: t.Seq.Hex(), Ts: t.SourceTs}
			var err error
			w.state.Ix.Each(func(k cdc.Key, e keyindex.Entry) {
				if err == nil && !e.Deleted && cdc.TruncateCovers(t.Seq, e.Seq) {
					err = add(k, m, t.Origin)
				}
			})
			if err != nil {
				return nil, err
			}
			if w.state.OwnsHistory {
				late = append(late, t)
			}
		}
		if late, err = w.notYetApplied(ctx, tbl, recorded, late); err != nil {
			return nil, err
		}
		if err := w.expandLate(late, add); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// lowest is the lowest position of a key's changes in a batch, kept apart
// for PostgreSQL source snapshot reads at (0, LSN), which a truncate
// below them by position may not cover (cdc.TruncateCovers).
type lowest struct {
	change, read cdc.Seq // "" when none
	lastRead     cdc.Seq // the highest read, "" when none
}

func (l *lowest) add(s cdc.Seq) {
	p := &l.change
	if _, read := cdc.PostgresReadLSN(s); read {
		p = &l.read
		l.lastRead = max(l.lastRead, s)
	}
	if *p == "" || s < *p {
		*p = s
	}
}

// readAfterStored reports whether the key k of the batch (its positions
// l) has a PostgreSQL source snapshot read taken after the table truncate
// at t while its mirror row is at or below t (deleted by it or before
// it): merge.Fold then needs the truncate among the key's events to apply
// the read, whose position sorts below the row's. Errors: catalog and
// file IO failures (reading the key index).
func (w *MirrorWriter) readAfterStored(ctx context.Context, tbl *table.Table, k cdc.Key, l lowest, t cdc.Seq) (bool, error) {
	if l.lastRead == "" || tbl == nil || !cdc.PostgresReadAfterTruncate(l.lastRead, t) {
		return false, nil
	}
	if err := w.ensureIndex(ctx, tbl); err != nil {
		return false, err
	}
	e, ok := w.state.Ix.Lookup(k)
	if !ok || e.Seq > t {
		return false, nil
	}
	_, read := cdc.PostgresReadLSN(e.Seq)
	return !read, nil
}

// below reports whether the truncate at t applies to one of the changes.
func (l lowest) below(t cdc.Seq) bool {
	return l.change != "" && cdc.TruncateCovers(t, l.change) || l.read != "" && cdc.TruncateCovers(t, l.read)
}

// notYetApplied returns the truncates of late that an earlier batch did
// not apply: a truncate the mirror has recorded was applied, to mirror and
// history, by a batch the history has committed too (its checkpoint is at
// the mirror's or later), past keys included. A redelivered truncate thus
// costs no history check. Errors: catalog failures, malformed bookkeeping.
func (w *MirrorWriter) notYetApplied(ctx context.Context, mirror *table.Table, recorded []truncateMark, late []*cdc.Event) ([]*cdc.Event, error) {
	if len(late) == 0 || len(recorded) == 0 {
		return late, nil
	}
	history, err := lakecat.LoadTable(ctx, w.cat, w.name.History())
	if err != nil || history == nil {
		return late, err
	}
	if between, err := batchBetweenCommits(mirror, history); err != nil {
		return nil, err
	} else if between {
		return late, nil // it may be this one
	}
	seen := map[string]bool{}
	for _, m := range recorded {
		seen[m.Seq] = true
	}
	out := late[:0:0]
	for _, t := range late {
		if !seen[t.Seq.Hex()] {
			out = append(out, t)
		}
	}
	return out, nil
}

// expandLate gives the per-key truncate of each of the truncates late to
// every key already past it (or last read by a source snapshot taken
// after it) whose history has a version spanning it: the
// key was live at the truncate, so that version must close there (the
// per-key event is late for the key: the weave or RebuildKeys replays it
// with the key's other changes). Once the version is closed there, none
// spans it. Each such key's history is read once for all the truncates.
func (w *MirrorWriter) expandLate(late []*cdc.Event, add func(cdc.Key, truncateMark, cdc.Origin) error) error {
	if len(late) == 0 {
		return nil
	}
	lo := late[0].Seq
	at := make([]cdc.Seq, len(late))
	for i, t := range late {
		at[i], lo = t.Seq, min(lo, t.Seq)
	}
	var past []cdc.Key
	w.state.Ix.Each(func(k cdc.Key, e keyindex.Entry) {
		if e.Seq > lo || readAfterAny(e.Seq, at) {
			past = append(past, k)
		}
	})
	spans := make([]bool, len(late))
	for _, k := range past {
		if err := w.state.VersionsSpanning(k, at, spans); err != nil {
			return err
		}
		for i, sp := range spans {
			if sp {
				if err := add(k, truncateMark{Seq: late[i].Seq.Hex(), Ts: late[i].SourceTs}, late[i].Origin); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// readAfterAny reports whether s is a PostgreSQL source snapshot read
// taken after one of the truncates at (cdc.PostgresReadAfterTruncate): it
// sorts below them, but the key's history may hold a version opened
// before one of them by an earlier read.
func readAfterAny(s cdc.Seq, at []cdc.Seq) bool {
	return slices.ContainsFunc(at, func(t cdc.Seq) bool { return cdc.PostgresReadAfterTruncate(s, t) })
}

// truncatesJSON merges the batch's truncates into the recorded ones.
func truncatesJSON(tbl *table.Table, events []*cdc.Event) (string, bool, error) {
	var batch []truncateMark
	for _, e := range events {
		if e.Op == cdc.OpTruncate && e.Key == "" {
			batch = append(batch, truncateMark{Seq: e.Seq.Hex(), Ts: e.SourceTs})
		}
	}
	return mergeTruncates(tbl, batch)
}

// mergeTruncates returns the JSON of tbl's recorded truncates (its
// PropTruncates) with marks added, ascending by position, and whether
// there are marks to add (false: leave the property as it is). Errors: a
// malformed recorded property.
func mergeTruncates(tbl *table.Table, marks []truncateMark) (string, bool, error) {
	if len(marks) == 0 {
		return "", false, nil
	}
	all, err := readTruncates(tbl)
	if err != nil {
		return "", false, err
	}
	return addTruncates(all, marks)
}

// addTruncates returns the JSON of the marks all and marks together,
// each once, ascending by position, and true.
func addTruncates(all, marks []truncateMark) (string, bool, error) {
	all = slices.Clone(all)
	for _, m := range marks {
		if !slices.Contains(all, m) {
			all = append(all, m)
		}
	}
	slices.SortFunc(all, func(a, b truncateMark) int { return cmp.Compare(a.Seq, b.Seq) })
	b, err := json.Marshal(all)
	return string(b), true, err
}

// bronzeTruncates is the PropTruncates of the bronze table of name (nil
// when bronze does not exist or records none): a mirror created after a
// batch that held a truncate and no row change starts with it, so that a
// change below the truncate that arrives later is truncated. Errors:
// catalog failures, a malformed property.
func bronzeTruncates(ctx context.Context, cat catalog.Catalog, name TableName) ([]truncateMark, error) {
	tbl, err := LoadTable(ctx, cat, name.Bronze())
	if err != nil || tbl == nil {
		return nil, err
	}
	return readTruncates(tbl)
}

// PropPendingTruncatesPrefix prefixes the namespace property that keeps
// the table truncates of a table without bronze that arrived before its
// mirror existed ("lakemirror.truncates.<table>", the table's name
// within its namespace; the JSON of PropTruncates). With bronze, bronze
// records them (bronzeTruncates); without it nothing else would, and a
// change below such a truncate that arrives later would not be
// truncated. The mirror starts with them when it is created, and the
// property is then removed; `starter drop --drop-tables` removes it too.
const PropPendingTruncatesPrefix = "lakemirror.truncates."

// truncatesProp is the namespace property keeping table t's truncates
// before its mirror exists.
func truncatesProp(t lakecat.TableName) string { return PropPendingTruncatesPrefix + t.Name }

// keylessTruncates returns the marks of the table truncates (keyless op
// t events) among events.
func keylessTruncates(events []*cdc.Event) []truncateMark {
	var out []truncateMark
	for _, e := range events {
		if e.Op == cdc.OpTruncate && e.Key == "" {
			out = append(out, truncateMark{Seq: e.Seq.Hex(), Ts: e.SourceTs})
		}
	}
	return out
}

// pendingTruncates returns the truncates recorded on name's namespace
// before its mirror existed (PropPendingTruncatesPrefix), nil when none.
// Errors: catalog failures, a malformed property.
func pendingTruncates(ctx context.Context, cat catalog.Catalog, name TableName) ([]truncateMark, error) {
	props, err := cat.LoadNamespaceProperties(ctx, name.NamespaceIdent())
	if errors.Is(err, catalog.ErrNoSuchNamespace) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("lake: namespace %s properties: %w", name.Namespace, err)
	}
	text := props[truncatesProp(name)]
	if text == "" {
		return nil, nil
	}
	var out []truncateMark
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		return nil, fmt.Errorf("lake: bad %s %q on namespace %s: %w", truncatesProp(name), text, name.Namespace, err)
	}
	return out, nil
}

// recordPendingTruncates adds the table truncates among events to the
// ones recorded on name's namespace (PropPendingTruncatesPrefix),
// creating the namespace when needed; a retried batch adds nothing new.
// Errors: catalog failures.
func recordPendingTruncates(ctx context.Context, cat catalog.Catalog, name TableName, events []*cdc.Event) error {
	marks := keylessTruncates(events)
	if len(marks) == 0 {
		return nil
	}
	had, err := pendingTruncates(ctx, cat, name)
	if err != nil {
		return err
	}
	js, _, err := addTruncates(had, marks)
	if err != nil {
		return err
	}
	if err := lakecat.EnsureNamespace(ctx, cat, name.NamespaceIdent()); err != nil {
		return err
	}
	if _, err := cat.UpdateNamespaceProperties(ctx, name.NamespaceIdent(), nil, map[string]string{truncatesProp(name): js}); err != nil {
		return fmt.Errorf("lake: record the truncates of %s on namespace %s: %w", name, name.Namespace, err)
	}
	return nil
}

// ClearPendingTruncates removes the truncates recorded on name's
// namespace before its mirror existed (PropPendingTruncatesPrefix) and
// reports whether there were any. Errors: catalog failures.
func ClearPendingTruncates(ctx context.Context, cat catalog.Catalog, name TableName) (bool, error) {
	had, err := pendingTruncates(ctx, cat, name)
	if err != nil || had == nil {
		return false, err
	}
	if _, err := cat.UpdateNamespaceProperties(ctx, name.NamespaceIdent(), []string{truncatesProp(name)}, nil); err != nil {
		return false, fmt.Errorf("lake: remove the truncates recorded for %s: %w", name, err)
	}
	return true, nil
}
