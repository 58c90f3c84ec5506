package cdc

import (
	"fmt"
	"strconv"
	"strings"
)

// PostgresSnapshot is a direct re-snapshot's read: its WAL position LSN
// (its rows sit at PostgresSeq(LSN, 0)) and the transactions its
// REPEATABLE READ snapshot did not see, as pg_current_snapshot() gives
// them (xmin:xmax:xip, 64-bit transaction ids with epoch).
//
// Why it is needed. A change streamed after the snapshot has first word
// max(lastCommitLsn, lsn) (PostgresEventWords). That is at least LSN for
// every change written after the snapshot, but a transaction in progress
// when the snapshot was taken may have written its changes before LSN and
// commit after it: the first such transaction streamed has the previous
// commit as lastCommitLsn, also below LSN, so its changes sort below the
// snapshot's rows although the snapshot does not show them, and the
// sequence guard would drop them. (A transaction whose commit record was
// written just before LSN but was not yet visible is the same case.) The
// snapshot tells those transactions apart exactly: Lift raises the
// position of their changes above the snapshot.
type PostgresSnapshot struct {
	LSN  uint64   `json:"lsn"`
	Xmin uint64   `json:"xmin"`
	Xmax uint64   `json:"xmax"`
	Xip  []uint64 `json:"xip,omitempty"`
}

// liftWindow bounds how far below a re-snapshot's position Lift raises a
// change: 16 GiB of WAL, less than 2³¹ transactions write (see Lift).
const liftWindow = 1 << 34

// ParsePostgresSnapshot reads pg_current_snapshot()'s text form
// "xmin:xmax:xip1,xip2,..." for a snapshot at WAL position lsn.
func ParsePostgresSnapshot(lsn uint64, text string) (PostgresSnapshot, error) {
	s := PostgresSnapshot{LSN: lsn}
	parts := strings.Split(text, ":")
	if len(parts) != 3 {
		return s, fmt.Errorf("cdc: PostgreSQL snapshot %q is not xmin:xmax:xip", text)
	}
	var err error
	if s.Xmin, err = strconv.ParseUint(parts[0], 10, 64); err != nil {
		return s, fmt.Errorf("cdc: PostgreSQL snapshot %q: %w", text, err)
	}
	if s.Xmax, err = strconv.ParseUint(parts[1], 10, 64); err != nil {
		return s, fmt.Errorf("cdc: PostgreSQL snapshot %q: %w", text, err)
	}
	if parts[2] != "" {
		for _, x := range strings.Split(parts[2], ",") {
			v, err := strconv.ParseUint(x, 10, 64)
			if err != nil {
				return s, fmt.Errorf("cdc: PostgreSQL snapshot %q: %w", text, err)
			}
			s.Xip = append(s.Xip, v)
		}
	}
	return s, nil
}

// Invisible reports whether the committed transaction txid (Debezium's
// source.txId) is one the snapshot did not see: in progress when it was
// taken (listed in xip) or started after it (at or above xmax). A 32-bit
// id (pgoutput's, without epoch) is placed in the epoch nearest xmax.
func (s PostgresSnapshot) Invisible(txid uint64) bool {
	x := txid
	if txid <= 0xffffffff {
		d := int64(int32(uint32(txid) - uint32(s.Xmax)))
		x = uint64(int64(s.Xmax) + d)
	}
	if x >= s.Xmax {
		return true
	}
	if x < s.Xmin {
		return false
	}
	for _, v := range s.Xip {
		if v == x {
			return true
		}
	}
	return false
}

// Lift raises the position of e, a streamed change of a PostgreSQL table
// (two-word Seq), when it sorts below the snapshot's rows (LSN, 0) but
// belongs to a transaction the snapshot did not see: to (LSN, lsn), above
// the snapshot's rows and, for one row, still in the order of its changes
// (later changes of the row were written later: lsn grows; those of
// transactions committed after the snapshot's first streamed commit sort
// above LSN already). Changes without a transaction id, of transactions
// the snapshot saw, or above its rows are left as they are. It reports
// whether e changed.
//
// Debezium's txId has no epoch: a change more than 2³¹ transactions older
// than the snapshot (a bronze record read by a rebuild) would look like
// one it did not see. Such a change is far below LSN (every transaction
// writes a commit or abort record), while an unseen transaction's changes
// sort at or above the commit streamed before it: a change whose first
// word is liftWindow or more below LSN is left as it is.
func (s PostgresSnapshot) Lift(e *Event) bool {
	if len(e.Seq) != 16 || e.TxID == "" || e.Seq >= PostgresSeq(s.LSN, 0) {
		return false
	}
	if s.LSN-e.Seq.Words()[0] >= liftWindow {
		return false
	}
	tx, err := strconv.ParseUint(e.TxID, 10, 64)
	if err != nil || !s.Invisible(tx) {
		return false
	}
	e.Seq = PostgresSeq(s.LSN, e.Seq.Words()[1])
	return true
}
