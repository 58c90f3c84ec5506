package sample

import (
	"math/rand/v2"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// PCG stream selectors: the source changes and the delivery faults draw
// from separate generators, so the fault options never change Clean.
const (
	streamSource = 0x6c616b656d697272 // "lakemirr"
	streamFaults = 0x6661756c74730000 // "faults"
)

// Generate builds a change stream from opts (see Options for defaults). It
// is deterministic: the same Options give byte-identical Streams, and the
// fault options (Duplicates, Late, OutOfOrder) change only Delivered.
//
// Positions follow PostgreSQL and Debezium: every change has a strictly
// greater lsn than the one before it; a transaction's changes share txId,
// commit time (source.ts_ms/ts_us/ts_ns) and source.sequence[0], which is
// the previous transaction's commit LSN (null for the first transaction);
// a commit LSN is above all of its transaction's change LSNs. Seq is
// streamSeq(sequence[0], lsn), strictly increasing over Clean's changes.
func Generate(opts Options) Stream {
	o := opts.normalized()
	changes := simulate(rand.New(rand.NewPCG(uint64(o.Seed), streamSource)), o)

	n := len(changes)
	if o.Tombstones {
		n += o.Deletes + o.UnseenDeletes
	}
	// Keys and values are carved out of 1 MiB chunks (no per-record
	// allocation, no copying on growth); one record is at most ~4 KiB.
	const chunk, reserve = 1 << 20, 8 << 10
	var arena []byte
	clean := make([]Message, 0, n)
	for i := range changes {
		c := &changes[i]
		if cap(arena)-len(arena) < reserve {
			arena = make([]byte, 0, chunk)
		}
		start := len(arena)
		arena = appendKey(arena, c.id, o.Envelope)
		key := arena[start:len(arena):len(arena)]
		start = len(arena)
		arena = appendValue(arena, c, o.Envelope)
		value := arena[start:len(arena):len(arena)]
		clean = append(clean, Message{Key: key, Value: value, Op: c.op, OrderID: c.id, Seq: streamSeq(c.prevCommit, c.lsn)})
		if c.op == 'd' && o.Tombstones {
			clean = append(clean, Message{Key: key, OrderID: c.id})
		}
	}
	return Stream{
		Clean:     clean,
		Delivered: deliver(rand.New(rand.NewPCG(uint64(o.Seed), streamFaults)), clean, o),
	}
}

// streamSeq is the Seq of a streamed change with lastCommitLsn prevCommit
// (0 = null) at lsn (cdc.PostgresEventWords).
func streamSeq(prevCommit, lsn uint64) cdc.Seq {
	return cdc.PostgresSeq(cdc.PostgresEventWords(prevCommit, lsn, false))
}
