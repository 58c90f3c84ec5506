package tableread

import (
	"context"
	"encoding/hex"
	"fmt"

	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
)

// ReadPurgedRows calls fn with each row of the purged-keys table tbl: the
// purged key and the `_seq` of the row the purge removed. Errors: file
// IO, a key or position that is not hex, fn's.
func ReadPurgedRows(ctx context.Context, tbl *table.Table, fn func(cdc.Key, cdc.Seq) error) error {
	rows, _, err := ReadRows(ctx, tbl, nil)
	if err != nil {
		return err
	}
	ident := lakecat.IdentString(tbl.Identifier())
	for _, r := range rows {
		kh, _ := r[lakecat.ColKey].(string)
		sh, _ := r[lakecat.ColSeq].(string)
		kb, err := hex.DecodeString(kh)
		if err != nil {
			return fmt.Errorf("lake: bad %s %q in %s", lakecat.ColKey, kh, ident)
		}
		seq, err := cdc.ParseSeqHex(sh)
		if err != nil {
			return fmt.Errorf("lake: bad %s %q in %s: %w", lakecat.ColSeq, sh, ident, err)
		}
		if err := fn(cdc.Key(kb), seq); err != nil {
			return err
		}
	}
	return nil
}
