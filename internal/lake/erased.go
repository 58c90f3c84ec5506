package lake

import (
	"context"
	"errors"
	"slices"

	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/erasure"
)

// The mirror writer's side of erasure on request (internal/lake/erasure,
// docs/design.md, "Erasure"): Prepare refuses the changes of erased keys
// at or below their erasure position (erasure.Guard), Write stores their
// records without raw key, value or headers, and a batch prepared before
// an erasure's guard prepares again (purgeFence).

// StageErased is the quarantine stage of a change of an erased key at or
// below its erasure position: the change is refused, and neither the
// quarantine nor bronze keeps its raw key, value or headers.
const StageErased = "erased"

// prepareErasure loads the erased keys for a Prepare of the mirror tbl
// (past: changes read back for a rebuild, which are not checked).
// Errors: catalog and file IO, a malformed horizon or erasures table.
func (w *MirrorWriter) prepareErasure(ctx context.Context, tbl *table.Table, past bool) error {
	return w.erasure.Prepare(ctx, w.cat, w.name, tbl, w.keyCols, past)
}

// erasedReject is the quarantine entry of a change of an erased key at or
// below its erasure position, or nil (erasure.Guard.Refuses).
func (w *MirrorWriter) erasedReject(e *cdc.Event) *ConformError {
	refuse, why := w.erasure.Refuses(e)
	if !refuse {
		return nil
	}
	return &ConformError{Origin: e.Origin, Stage: StageErased, Err: errors.New(why)}
}

// purgeFence is what a batch's Prepare checks the mirror against and its
// Stage compares (ErrHorizonMoved): the purge horizon, the last purge and
// the last erasure.
func purgeFence(tbl *table.Table) string {
	p := tbl.Properties()
	return p[PropPurgeHorizon] + "/" + p[PropLastPurge] + "/" + p[erasure.PropLastErasure]
}

// redactErased applies the refusals of erased keys (the last Prepare's,
// whose events are given) to a batch's bronze records and quarantine
// entries: a record refused as erased keeps only its Kafka coordinates,
// timestamp and ingestion time in bronze (a row that tells the offset was
// read) and its quarantine entry has no raw key or value; the create of a
// key change whose old key is erased, at or below its erasure position,
// applies, forgets the old key, and its bronze record loses the
// __debezium.oldkey header (so does the delete of a key change whose new
// key is erased: it forgets the new key and loses __debezium.newkey). A
// record that is no row change (a tombstone, an undecodable record) has
// no position: with keyOf, one whose Kafka key is an erased key's is
// redacted the same way, in bronze and in the quarantine.
func (w *MirrorWriter) redactErased(bronze []BronzeRecord, quarantine []QuarantineRecord, events []*cdc.Event, keyOf func([]byte) (*cdc.Row, bool)) {
	g := &w.erasure
	if !g.Active() {
		return
	}
	type at = [2]int64
	erased, strip := map[at]bool{}, map[at]bool{}
	erasedKey := func(b []byte) bool {
		if keyOf == nil || b == nil {
			return false
		}
		row, ok := keyOf(b)
		if !ok {
			return false
		}
		return g.Erased(row)
	}
	for i := range quarantine {
		q := &quarantine[i]
		if q.Stage == StageErased || (q.Stage == StageDecode && erasedKey(q.Key)) {
			q.Key, q.Value = nil, nil
			erased[at{int64(q.Partition), q.Offset}] = true
		}
	}
	for _, e := range events {
		if g.RefusesKeyAt(e.OldKey, e.Seq) {
			strip[at{int64(e.Origin.Partition), e.Origin.Offset}] = true
			e.OldKey = "" // nor does the local state log keep it (the erased key has no row to take values from)
		}
		if g.RefusesKeyAt(e.NewKey, e.Seq) {
			strip[at{int64(e.Origin.Partition), e.Origin.Offset}] = true
			e.NewKey = "" // the erased key is not refilled from this one's changes
		}
	}
	for i := range bronze {
		r := &bronze[i]
		o := at{int64(r.Partition), r.Offset}
		switch {
		case erased[o] || (r.Op == "" && r.PK == "" && erasedKey(r.Key)):
			r.Key, r.Value, r.Headers, r.Op, r.Seq, r.SourceTs, r.PK = nil, nil, nil, "", "", 0, ""
		case strip[o]:
			r.Headers = slices.DeleteFunc(slices.Clone(r.Headers), func(h BronzeHeader) bool { return h.Key == erasure.HeaderOldKey || h.Key == erasure.HeaderNewKey })
		}
	}
}
