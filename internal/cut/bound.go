package cut

import (
	"encoding/binary"
	"fmt"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// At is one record of a partition as the cut bound sees it: its Kafka
// offset and its source position (a decoded change event's `_seq`), or
// "" for a record that has none (a tombstone, transaction metadata, a
// record the decoder could not read).
type At struct {
	Offset int64
	Seq    cdc.Seq
}

// CutOffset is o_p(W) of one partition of a table's topic
// (docs/design.md, "Batches cut at W"): the offset of the first record
// whose source position is above w, or end when there is none. recs are
// the partition's records of a batch in offset order, end the offset
// after the batch's range there. A connector writes each transaction
// whole, in commit order, so within a partition offset order is commit
// order and the records below o_p(W) are those of the transactions
// committed at or below W (with w a commit position, CommitPosition);
// a record without a position never cuts (a tombstone stays with the
// delete before it), and one at or below w after the first above it is a
// redelivery, applied with the rest (the merge rules make it a no-op).
//
// A PostgreSQL source snapshot read sits at (0, L) (cdc.PostgresReadLSN:
// Debezium's initial and blocking snapshot reads), below every streamed
// change and so below every W, yet it holds the row as of L: with L
// above W's commit LSN (its first word) it may show transactions
// committed above W, so it cuts like a record above W.
// Error: ErrWidth for a position of another width than w's (an empty w
// is refused: there is no cut).
func CutOffset(recs []At, w cdc.Seq, end int64) (int64, error) {
	if len(w) == 0 || len(w)%8 != 0 {
		return 0, fmt.Errorf("%w: W of %d bytes", ErrWidth, len(w))
	}
	wCommit := binary.BigEndian.Uint64([]byte(w[:8])) // a PostgreSQL W's commit LSN (the first word)
	for _, r := range recs {
		if r.Seq == "" {
			continue
		}
		if len(r.Seq) != len(w) {
			return 0, fmt.Errorf("%w: the record at offset %d has %d bytes, W %d", ErrWidth, r.Offset, len(r.Seq), len(w))
		}
		if r.Seq > w {
			return r.Offset, nil
		}
		if l, ok := cdc.PostgresReadLSN(r.Seq); ok && l > wCommit {
			return r.Offset, nil
		}
	}
	return end, nil
}
