package activities

import (
	"context"
	"maps"

	"github.com/lakemirror/lakemirror/internal/lake"
)

// Recover reads the table's committed position from Iceberg: the mirror's
// checkpoint when the mirror exists and has one, else the bronze table's
// when the mirror does not exist yet (bronze commits first and the mirror
// is created before any bronze batch that carries row changes), else
// nothing (start per spec.StartFrom). Errors: catalog failures (retryable).
func (a *Activities) Recover(ctx context.Context, spec TableSpec) (RecoverResult, error) {
	name, err := lake.ParseTableName(spec.Table)
	if err != nil {
		return RecoverResult{}, badSpec(err)
	}
	out := RecoverResult{Source: "none", Offsets: lake.Offsets{}}
	mirror, err := lake.LoadTable(ctx, a.Catalog, name.Mirror())
	if err != nil {
		return out, err
	}
	bronze, err := lake.LoadTable(ctx, a.Catalog, name.Bronze())
	if err != nil {
		return out, err
	}
	var bseq int64
	if bronze != nil {
		cp, err := lake.ReadCheckpoint(bronze)
		if err != nil {
			return out, err
		}
		bseq = cp.BatchSeq
		if mirror == nil && cp.BatchSeq > 0 {
			out = RecoverResult{BatchSeq: cp.BatchSeq, BatchID: cp.BatchID, Offsets: maps.Clone(cp.EndOffsets), Source: "bronze"}
		}
	}
	if mirror != nil {
		cp, err := lake.ReadCheckpoint(mirror)
		if err != nil {
			return out, err
		}
		if cp.BatchSeq > 0 {
			out = RecoverResult{BatchSeq: cp.BatchSeq, BatchID: cp.BatchID, Offsets: maps.Clone(cp.EndOffsets), Source: "mirror"}
		}
	}
	// batch numbers stay strictly increasing even when bronze is ahead
	out.BatchSeq = max(out.BatchSeq, bseq)
	return out, nil
}
