package lake

import (
	"context"
	"encoding/hex"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/keyindex"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
)

// BronzeKeysOfTopic returns the distinct primary keys of the bronze rows
// of one topic (e.g. the rows a direct load stored under its own topic
// name), for a resumed re-snapshot's ghost check. It reads the topic and
// key columns of the matching files.
func BronzeKeysOfTopic(ctx context.Context, cat catalog.Catalog, name lakecat.TableName, topic string) (map[cdc.Key]bool, error) {
	out := map[cdc.Key]bool{}
	tbl, err := lakecat.LoadTable(ctx, cat, name.Bronze())
	if err != nil || tbl == nil {
		return out, err
	}
	sc, it, err := tbl.Scan(table.WithRowFilter(iceberg.EqualTo(iceberg.Reference(lakecat.BronzeTopic), topic))).ToArrowRecords(ctx)
	if err != nil {
		return nil, fmt.Errorf("lake: scan bronze topic %s: %w", topic, err)
	}
	ki := sc.FieldIndices(lakecat.ColKey)[0]
	for rec, err := range it {
		if err != nil {
			return nil, fmt.Errorf("lake: scan bronze topic %s: %w", topic, err)
		}
		keys := rec.Column(ki).(*array.String)
		for r := 0; r < int(rec.NumRows()); r++ {
			if keys.IsNull(r) {
				continue
			}
			b, err := hex.DecodeString(keys.Value(r))
			if err != nil {
				return nil, err
			}
			out[cdc.Key(b)] = true
		}
		rec.Release()
	}
	return out, nil
}

// LiveKeysBelow returns the mirror's live keys whose `_seq` is below seq:
// the candidates of a re-snapshot's ghost check.
func (w *MirrorWriter) LiveKeysBelow(ctx context.Context, seq cdc.Seq) ([]cdc.Key, error) {
	w.state.settle()
	tbl, err := lakecat.LoadTable(ctx, w.cat, w.name.Mirror())
	if err != nil || tbl == nil {
		return nil, err
	}
	if err := w.ensureIndex(ctx, tbl); err != nil {
		return nil, err
	}
	var out []cdc.Key
	w.state.ix.Each(func(k cdc.Key, e keyindex.Entry) {
		if !e.Deleted && e.Seq < seq {
			out = append(out, k)
		}
	})
	return out, nil
}

// StoredRows returns the mirror's stored values (source columns, in the
// mirror's column order) of keys, each of which must have a mirror row,
// from the local state log (the table for keys the log lacks). Errors:
// catalog and file IO failures, a key without a stored row.
func (w *MirrorWriter) StoredRows(ctx context.Context, keys []cdc.Key) (map[cdc.Key]*cdc.Row, error) {
	w.state.settle()
	tbl, err := lakecat.LoadTable(ctx, w.cat, w.name.Mirror())
	if err != nil {
		return nil, err
	}
	if tbl == nil {
		return nil, fmt.Errorf("lake: %s: no mirror table to read stored rows from", w.name)
	}
	if err := w.ensureIndex(ctx, tbl); err != nil {
		return nil, err
	}
	sh, err := shapeOf(tbl.Schema(), w.keyCols)
	if err != nil {
		return nil, err
	}
	rows, err := w.storedRows(ctx, tbl, sh, keys)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		if rows[k] == nil {
			return nil, fmt.Errorf("lake: %s: no stored mirror row for key %x", w.name, string(k))
		}
	}
	return rows, nil
}
