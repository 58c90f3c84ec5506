package lake

import (
	"context"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/keyindex"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/parquetio"
	"github.com/lakemirror/lakemirror/internal/lake/rowdelta"
	"github.com/lakemirror/lakemirror/internal/lake/tableread"
)

// The purged-keys table <ns>.<table>_purged records, per tombstone purge,
// each key it removed from the mirror and the `_seq` of the removed row
// (docs/design.md, rule 5). A change for a key the mirror does not hold is
// refused only when the key was purged and the change is at or below the
// purged row's own position: it could resurrect the row. Keys never
// purged, and changes above their purged position (a newer create), apply
// as usual. The table is written before the purge's mirror commit, so a
// crash between the two leaves a key recorded that is still in the
// mirror, which refuses nothing.
//
// Tables purged before the table existed keep the table-wide rule for
// what those purges removed: PropPurgeLegacy holds the purge horizon of
// that time, and a change at or below it for a key absent from the mirror
// is refused whether or not the key was purged.

// PropLastPurge identifies the last purge that removed rows from the
// mirror (its time, RFC 3339 with nanoseconds): a batch fences on it
// (ErrHorizonMoved), as a purge may remove keys without raising the
// horizon.
const PropLastPurge = "lakemirror.last-purge"

// PropPurgeLegacy is lakecat.PropPurgeLegacy: the purge horizon
// reached by purges made before purged keys were recorded per key.
const PropPurgeLegacy = lakecat.PropPurgeLegacy

// Columns of the purged-keys table.
const (
	ColPurgedAt = "_purged_at" // when the purge removed the row
)

// PurgedSchema is the purged-keys table's schema: the encoded key as hex
// (`_key`, as bronze), the removed row's `_seq` and the purge time.
func PurgedSchema() *iceberg.Schema {
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: lakecat.ColKey, Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 2, Name: lakecat.ColSeq, Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 3, Name: ColPurgedAt, Type: iceberg.PrimitiveTypes.TimestampTz, Required: true},
	)
}

// purgedKeys are the keys the purged-keys table holds, each with its
// highest purged position, as of one snapshot of that table.
type purgedKeys struct {
	snap   int64           // snapshot of the purged-keys table these reflect; -1: the table does not exist
	ix     *keyindex.Index // key → highest purged `_seq`
	legacy cdc.Seq         // PropPurgeLegacy of the mirror
}

// refuses reports whether a change at seq for a key absent from the
// mirror must be refused, and why.
func (p *purgedKeys) refuses(k cdc.Key, seq cdc.Seq) (bool, string) {
	if p.legacy != "" && seq <= p.legacy {
		return true, fmt.Sprintf("position %s is at or below %s, the purge horizon of purges made before purged keys were recorded, and the key is not in the mirror", seq.Hex(), p.legacy.Hex())
	}
	if p.snap < 0 {
		return false, ""
	}
	if e, ok := p.ix.Lookup(k); ok && seq <= e.Seq {
		return true, fmt.Sprintf("the key was purged at position %s and this change is at %s, at or below it", e.Seq.Hex(), seq.Hex())
	}
	return false, ""
}

// loadPurged returns the purged keys of the mirror tbl's table, reusing
// cur when the purged-keys table has not moved. A mirror purged before
// purged keys were recorded, without a purged-keys table, refuses by its
// whole horizon (legacy = the horizon). Errors: catalog and file IO.
func (w *MirrorWriter) loadPurged(ctx context.Context, mirror *table.Table, cur *purgedKeys) (*purgedKeys, error) {
	tbl, err := lakecat.LoadTable(ctx, w.cat, w.name.Purged())
	if err != nil {
		return nil, err
	}
	legacy, err := lakecat.PurgeLegacy(mirror, tbl != nil)
	if err != nil {
		return nil, err
	}
	if tbl == nil {
		return &purgedKeys{snap: -1, legacy: legacy}, nil
	}
	snap := lakecat.SnapID(tbl)
	if cur != nil && cur.snap == snap {
		cur.legacy = legacy
		return cur, nil
	}
	p := &purgedKeys{snap: snap, ix: keyindex.New(snap, 0), legacy: legacy}
	if snap == 0 {
		return p, nil
	}
	err = tableread.ReadPurgedRows(ctx, tbl, func(k cdc.Key, seq cdc.Seq) error {
		if e, ok := p.ix.Lookup(k); !ok || seq > e.Seq {
			p.ix.Set(k, seq, true, -1, 0)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// recordPurged appends the keys a purge is about to remove, with their
// rows' positions, to the purged-keys table (created on first use) in
// one commit. Errors: catalog, file IO and commit failures (retryable:
// the purge has not touched the mirror yet).
func (w *MirrorWriter) recordPurged(ctx context.Context, keys []cdc.Key, seqs []cdc.Seq, at time.Time) error {
	tbl, _, err := lakecat.LoadOrCreate(ctx, w.cat, w.name.NamespaceIdent(), w.name.Purged(),
		func() (*iceberg.Schema, error) { return PurgedSchema(), nil }, lakecat.TableProperties(nil))
	if err != nil {
		return err
	}
	sc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		return fmt.Errorf("lake: arrow schema: %w", err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	kb := b.Field(sc.FieldIndices(lakecat.ColKey)[0]).(*array.StringBuilder)
	sb := b.Field(sc.FieldIndices(lakecat.ColSeq)[0]).(*array.StringBuilder)
	tb := b.Field(sc.FieldIndices(ColPurgedAt)[0]).(*array.TimestampBuilder)
	for i, k := range keys {
		kb.Append(hex.EncodeToString([]byte(k)))
		sb.Append(seqs[i].Hex())
		tb.Append(parquetio.Timestamp(at.UnixMicro()))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	files, _, err := rowdelta.WriteRecord(ctx, tbl, "purged", rec)
	df := rowdelta.DataFiles(files)
	if err != nil {
		return err
	}
	_, _, err = rowdelta.CommitRowDelta(ctx, tbl, "purged keys", df, rowdelta.DeleteSet{}, iceberg.Properties{"lakemirror.maintenance": "purge"})
	return err
}
