package cdc

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
)

// Seq is a source log position: the `_seq` that orders changes. It is a
// sequence of unsigned 64-bit words compared lexicographically, held as
// their big-endian bytes so that plain string comparison is the order.
// Every event of one table comes from one connector and so has the same
// number of words; positions of different widths are not comparable.
//
// The word layouts per connector (see the constructors) follow the fields
// Debezium puts in the "source" block of each event.
//
// The zero Seq ("") is "no position": it sorts before every real position.
type Seq string

// SeqOf builds a Seq from its words, most significant first.
func SeqOf(words ...uint64) Seq {
	b := make([]byte, 8*len(words))
	for i, w := range words {
		binary.BigEndian.PutUint64(b[8*i:], w)
	}
	return Seq(b)
}

// PostgresSeq is a PostgreSQL position with words (first, lsn) as given:
// PostgresEventWords computes them for a Debezium event; a source snapshot
// at WAL position X taken outside Debezium sits at (X, 0) (above every
// change committed before X) or (0, X) (below every streamed change).
func PostgresSeq(first, lsn uint64) Seq { return SeqOf(first, lsn) }

// PostgresEventWords returns the Seq words of a Debezium PostgreSQL event:
// (max(lastCommitLsn, lsn), lsn), or (0, lsn) for a blocking source
// snapshot read (Debezium's initial and blocking snapshots), with or
// without a lastCommitLsn.
//
// Source fields: lastCommitLsn is the first element of source.sequence
// (["lastCommitLsn","lsn"], Debezium ≥ 1.5; 0 when it is null or the
// sequence is absent); lsn is source.lsn (or the second
// element of the sequence when source.lsn is null, as in Debezium 3.x
// incremental snapshot reads), the WAL position of the change itself.
// blockingRead is a source snapshot read (op r) that is not incremental
// (source.snapshot is not "incremental").
//
// Why the order is right. Logical decoding hands Debezium whole
// transactions in commit order, and lastCommitLsn is the commit LSN of the
// transaction streamed before this one. Every change of a transaction T
// has lsn below T's commit LSN, and so does lastCommitLsn; hence every
// event of T has a first word below commit(T), while every event of the
// next transaction has a first word of at least commit(T): the first word
// never decreases along the stream and orders events by the commit order
// of their transactions, even when their changes interleaved in the WAL.
// Within T the first word never decreases and lsn grows. The first word
// is also at least the change's own WAL position, so a change written
// after a source snapshot taken at WAL position X sorts above (X, 0),
// whatever lastCommitLsn says: that is what a re-snapshot needs, and what
// the bare lastCommitLsn (below X when the previous commit was) lacked.
// The first transaction streamed after a connector starts without offsets
// has a null lastCommitLsn and gets (lsn, lsn). For one row the order also
// holds by lsn alone (PostgreSQL row locks make the next writer wait for
// the previous one's commit). Debezium's blocking snapshot reads carry
// the snapshot's LSN: (0, lsn) puts them below every streamed change,
// including those of transactions still in flight when the snapshot was
// taken, whose changes may sit below its LSN. A blocking snapshot taken
// after the connector streamed a transaction also carries that
// transaction's commit as lastCommitLsn (Debezium 3.6, seen by the
// real-stack suite); at (max(lastCommitLsn, lsn), lsn) its reads would
// outrank the changes of those in-flight transactions, which commit after
// the snapshot but sort below it, and the mirror would drop them as stale.
// Such reads sit at (0, lsn) too. A read at lsn 0 is lakemirror's own
// (a direct re-snapshot's or a reconciliation repair's, rendered at
// source.sequence [P, 0]: internal/source/repair.go) and keeps its
// position (P, 0); Debezium's reads always carry the snapshot's LSN.
func PostgresEventWords(lastCommit uint64, lsn uint64, blockingRead bool) (first, second uint64) {
	if blockingRead && lsn > 0 {
		return 0, lsn
	}
	return max(lastCommit, lsn), lsn
}

// PostgresReadAfterTruncate reports whether the PostgreSQL source
// snapshot read at position read was taken after the table truncate at
// position t was written: read is (0, L), the position of Debezium's
// initial and blocking snapshot reads (PostgresEventWords), t is
// (first, lsn) with first above 0, and L is above lsn. It returns false
// for any other pair (other connectors' positions included), and then the
// positions alone order the two.
//
// Why L against the truncate's lsn. A snapshot read sorts below every
// streamed change, truncates included, so that it never overrides one; by
// position alone a truncate streamed before a blocking snapshot would
// delete every row the snapshot reads. TRUNCATE holds an ACCESS EXCLUSIVE
// lock until its transaction ends and is not MVCC-safe (PostgreSQL manual,
// TRUNCATE, "Notes"): a SELECT that reads the table after the truncate
// committed sees none of the rows it removed, also with an older snapshot,
// and a SELECT that read first holds its lock to the end of the snapshot's
// transaction, so the truncate is written after L. The one window: a
// truncate written between L (the WAL position Debezium takes when the
// snapshot starts) and the table's SELECT counts as after the read; its
// rows are then re-inserted ones, whose streamed inserts sort above it.
func PostgresReadAfterTruncate(read, t Seq) bool {
	l, ok := PostgresReadLSN(read)
	if !ok || len(t) != 16 || binary.BigEndian.Uint64([]byte(t[:8])) == 0 {
		return false
	}
	w, ok := PostgresWritten(t)
	return ok && l > w
}

// TruncateCovers reports whether the table truncate (Debezium op t) at
// t applies to a row change at s: s is below t, and s is not a PostgreSQL
// source snapshot read taken after t (PostgresReadAfterTruncate:
// Debezium's blocking source snapshot reads sit at (0, LSN), below every
// streamed change).
func TruncateCovers(t, s Seq) bool {
	return s < t && !PostgresReadAfterTruncate(s, t)
}

// PostgresReadLSN returns L for the position (0, L) of a PostgreSQL
// source snapshot read (Debezium's initial and blocking snapshot reads,
// PostgresEventWords, and lakemirror's own initial load): the WAL
// position of the snapshot. ok is false for any other position.
func PostgresReadLSN(s Seq) (l uint64, ok bool) {
	if len(s) != 16 || s[:8] != "\x00\x00\x00\x00\x00\x00\x00\x00" {
		return 0, false
	}
	l = binary.BigEndian.Uint64([]byte(s[8:]))
	return l, l > 0
}

// PostgresWritten returns the WAL position at which the change at
// PostgreSQL position s = (first, lsn) was written: lsn, or first for a
// direct re-snapshot's row or ghost delete at (P, 0). ok is false for a
// source snapshot read at (0, L) and for other connectors' positions.
func PostgresWritten(s Seq) (w uint64, ok bool) {
	if len(s) != 16 {
		return 0, false
	}
	first, lsn := binary.BigEndian.Uint64([]byte(s[:8])), binary.BigEndian.Uint64([]byte(s[8:]))
	switch {
	case first == 0:
		return 0, false
	case lsn == 0:
		return first, true
	}
	return lsn, true
}

// MySQLSeq is the position of a Debezium MySQL or MariaDB event: words
// (binlog file index, pos, row).
//
// Source fields: source.file ("mysql-bin.000003" → 3), source.pos (the
// byte offset of the binlog event that holds the row) and source.row (the
// row number within a multi-row event). source.gtid is the transaction id
// (Event.TxID), not part of the position.
//
// Why the order is right: the server writes a transaction to the binlog
// as a whole when it commits, so binlog coordinates are commit order; a
// binlog file rotation moves to the next index with pos restarting, which
// the leading word keeps in order; rows of one multi-row event share pos
// and differ in row.
//
// GTIDs and failover: binlog coordinates belong to one server. With GTIDs
// (gtid_mode=ON) Debezium can resume on another server after a failover,
// but the new server's binlog files have their own names and numbering:
// positions read after the failover are not comparable with those before
// it (they may sort lower, and the sequence guard would then ignore real
// changes). GTIDs do not give a total order either (each server numbers
// its own transactions, and RESET MASTER starts the numbering over). The
// decoder orders by whatever file index the server reports; a change that
// shows its binlog started over (RESET MASTER, a rebuilt server, a
// replica switch, found by Kafka delivery order: merge.FindBinlogRestart)
// stops the table, and a new table from a new source snapshot goes on.
func MySQLSeq(fileIndex, pos, row uint64) Seq { return SeqOf(fileIndex, pos, row) }

// IsMySQLSeq reports whether s has the MySQL and MariaDB layout (three
// words: MySQLSeq). No other connector's position has three words
// (PostgreSQL two, SQL Server five, Oracle six or more), so the width
// alone tells a binlog position from the others.
func IsMySQLSeq(s Seq) bool { return len(s) == 24 }

// SQLServerLSN is a SQL Server log sequence number: 10 bytes, written by
// Debezium as "0000002b:00000588:0003" (virtual log file sequence number,
// log block offset, slot number, in hex). Hi holds the first 8 bytes
// (VLF<<32 | block) and Lo the last 2 (slot), so comparing (Hi, Lo) is
// comparing the LSN bytes.
type SQLServerLSN struct{ Hi, Lo uint64 }

// ParseSQLServerLSN reads the "vvvvvvvv:bbbbbbbb:ssss" text form (8, 8
// and 4 hex digits; upper or lower case). It returns an error for any
// other shape.
func ParseSQLServerLSN(s string) (SQLServerLSN, error) {
	if len(s) != 22 || s[8] != ':' || s[17] != ':' {
		return SQLServerLSN{}, fmt.Errorf("cdc: SQL Server LSN %q is not of the form vvvvvvvv:bbbbbbbb:ssss", s)
	}
	vlf, ok1 := hexWord(s[0:8])
	blk, ok2 := hexWord(s[9:17])
	slot, ok3 := hexWord(s[18:22])
	if !ok1 || !ok2 || !ok3 {
		return SQLServerLSN{}, fmt.Errorf("cdc: SQL Server LSN %q is not hexadecimal", s)
	}
	return SQLServerLSN{Hi: vlf<<32 | blk, Lo: slot}, nil
}

// SQLServerSeq is the position of a Debezium SQL Server event: words
// (commit LSN Hi, commit LSN Lo, change LSN Hi, change LSN Lo,
// event_serial_no).
//
// Source fields: source.commit_lsn (the LSN of the transaction's commit
// record, __$start_lsn of the CDC change table), source.change_lsn (the
// LSN of the change itself, __$seqval) and source.event_serial_no (which
// tells apart events Debezium emits for one change LSN, such as the two
// rows of an update). Snapshot reads carry the snapshot's LSN as
// commit_lsn and no change_lsn or event_serial_no: those words are 0.
//
// Why the order is right: the capture job fills the change tables from
// the transaction log and Debezium reads them ordered by (commit LSN,
// change LSN, operation), so (commit_lsn, change_lsn, event_serial_no) is
// the stream order: transactions by commit, changes within one by their
// log position. For one row, a later change belongs to a transaction that
// committed later (row locks) and so has a higher commit LSN. Every
// change streamed after a snapshot committed after the snapshot's LSN.
func SQLServerSeq(commit, change SQLServerLSN, eventSerialNo uint64) Seq {
	return SeqOf(commit.Hi, commit.Lo, change.Hi, change.Lo, eventSerialNo)
}

// OracleRSID is LogMiner's record set id (RS_ID), written by Debezium as
// " 0x00000d.00012a4f.0010 ": redo log sequence number, block number and
// byte offset in hex. (RS_ID, SSN) identify one row change in the redo.
type OracleRSID struct {
	LogSeq      uint64 // redo log sequence number
	BlockOffset uint64 // block number << 16 | byte offset within the block
}

// ParseOracleRSID reads the RS_ID text form; surrounding spaces and the
// 0x prefix are optional. It returns an error for any other shape.
func ParseOracleRSID(s string) (OracleRSID, error) {
	t := s
	for len(t) > 0 && t[0] == ' ' {
		t = t[1:]
	}
	for len(t) > 0 && t[len(t)-1] == ' ' {
		t = t[:len(t)-1]
	}
	if len(t) > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X') {
		t = t[2:]
	}
	var parts [3]string
	for i := 0; i < 2; i++ {
		j := 0
		for j < len(t) && t[j] != '.' {
			j++
		}
		if j == len(t) {
			return OracleRSID{}, fmt.Errorf("cdc: Oracle RS_ID %q is not of the form 0xLLLLLL.BBBBBBBB.OOOO", s)
		}
		parts[i], t = t[:j], t[j+1:]
	}
	parts[2] = t
	seq, ok1 := hexWord(parts[0])
	blk, ok2 := hexWord(parts[1])
	off, ok3 := hexWord(parts[2])
	if !ok1 || !ok2 || !ok3 || len(parts[1]) > 12 || len(parts[2]) > 4 {
		return OracleRSID{}, fmt.Errorf("cdc: Oracle RS_ID %q is not of the form 0xLLLLLL.BBBBBBBB.OOOO", s)
	}
	return OracleRSID{LogSeq: seq, BlockOffset: blk<<16 | off}, nil
}

// OracleSeq is the position of a Debezium Oracle (LogMiner) event: words
// (commit SCN, SCN, RS_ID log sequence, RS_ID block/offset, SSN, order in
// transaction).
//
// Source fields: source.commit_scn (the SCN of the transaction's commit;
// snapshot reads have none and use source.scn), source.scn (the SCN of
// the change), source.rs_id and source.ssn (LogMiner's record set id and
// SQL sequence number, which order changes that share an SCN; rs_id is
// null when log.mining.buffer.track.rs_id=false, ssn absent before
// Debezium 2.x: those words are then 0), and transaction.total_order (the
// event's place among its transaction's events, with
// provide.transaction.metadata=true; else 0). SCNs are decimal strings in
// the source block.
//
// Why the order is right: Debezium buffers each transaction and emits it
// when it commits, in commit order, so the commit SCN orders transactions
// even when their changes interleaved in the redo; within a transaction
// changes come in redo order: SCN, then (RS_ID, SSN), then the emission
// order kept by total_order. For one row, a later change belongs to a
// transaction that committed later (row locks), so its commit SCN is
// higher. A snapshot is read AS OF its SCN; changes streamed after it
// committed after that SCN.
//
// Without rs_id, ssn, an LCR position (OracleLCRSeq) and transaction
// metadata, two changes of one row in one transaction at the same SCN get
// equal positions, and the merge keeps only one of them: keep rs_id
// tracking on (the default).
func OracleSeq(commitSCN, scn uint64, rs OracleRSID, ssn, txOrder uint64) Seq {
	return SeqOf(commitSCN, scn, rs.LogSeq, rs.BlockOffset, ssn, txOrder)
}

// MaxOracleLCRBytes is the longest XStream LCR position OracleLCRSeq
// takes, in bytes.
const MaxOracleLCRBytes = 64

// OracleLCRSeq is the position of a Debezium Oracle event streamed by the
// XStream adapter: OracleSeq's words (commit SCN, SCN, 0, 0, 0, order in
// transaction), then the raw LCR position (source.lcr_position, hex in
// the source block), zero-padded to whole words. XStream events carry no
// rs_id or ssn; the LCR position is what orders two changes of one
// transaction at the same SCN. Oracle's outbound server streams LCRs in
// strictly increasing positions, and Debezium compares them as unsigned
// bytes (io.debezium.connector.oracle.xstream.LcrPosition.compareTo),
// which is how Seq compares. It returns an error for an empty position
// or one longer than MaxOracleLCRBytes.
func OracleLCRSeq(commitSCN, scn, txOrder uint64, lcr []byte) (Seq, error) {
	if len(lcr) == 0 || len(lcr) > MaxOracleLCRBytes {
		return "", fmt.Errorf("cdc: Oracle LCR position of %d bytes (want 1 to %d)", len(lcr), MaxOracleLCRBytes)
	}
	b := []byte(OracleSeq(commitSCN, scn, OracleRSID{}, 0, txOrder))
	b = append(b, lcr...)
	for len(b)%8 != 0 {
		b = append(b, 0)
	}
	return Seq(b), nil
}

// hexWord parses 1 to 16 hex digits.
func hexWord(s string) (uint64, bool) {
	if len(s) == 0 || len(s) > 16 {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		n = n<<4 | uint64(d)
	}
	return n, true
}

// Words returns the position's words, most significant first. A Seq whose
// byte length is not a multiple of 8 (never produced by this package) yields
// the complete words only.
func (s Seq) Words() []uint64 {
	n := len(s) / 8
	out := make([]uint64, n)
	for i := range n {
		out[i] = binary.BigEndian.Uint64([]byte(s[8*i : 8*i+8]))
	}
	return out
}

// Compare returns -1, 0 or +1 as s sorts before, equal to or after t.
func (s Seq) Compare(t Seq) int {
	switch {
	case s < t:
		return -1
	case s > t:
		return 1
	}
	return 0
}

// Hex is the form stored in the `_seq` column of every table: 16 lowercase
// hex digits per word, so that sorting the strings sorts the positions.
// The zero Seq is "".
func (s Seq) Hex() string { return hex.EncodeToString([]byte(s)) }

// String is Hex with a dot between words, for logs and errors.
func (s Seq) String() string {
	h := s.Hex()
	out := make([]byte, 0, len(h)+len(h)/16)
	for i := 0; i < len(h); i += 16 {
		if i > 0 {
			out = append(out, '.')
		}
		end := min(i+16, len(h))
		out = append(out, h[i:end]...)
	}
	return string(out)
}

// ParseSeqHex reads the `_seq` column form written by Hex. It returns an
// error when h is not hex or not a whole number of 16-digit words.
func ParseSeqHex(h string) (Seq, error) {
	if len(h)%16 != 0 {
		return "", fmt.Errorf("cdc: _seq %q is not a whole number of 16-digit words", h)
	}
	b, err := hex.DecodeString(h)
	if err != nil {
		return "", fmt.Errorf("cdc: _seq %q: %w", h, err)
	}
	return Seq(b), nil
}

// FetchedPast is the position up to which ev, once fetched, shows its
// Kafka partition complete: no change event at or below it can still
// come on that partition (Debezium writes a partition's events in
// position order). It is ev's own position, but for a source snapshot
// read that is not the last (SnapshotRow) the position just below it:
// the reads of one source snapshot share a position (MySQL's binlog
// coordinates with row 0, PostgreSQL's (0, L): PostgresEventWords) and
// more of them may follow. "" for an event without a position, or a read
// at the lowest one.
func FetchedPast(ev *Event) Seq {
	if ev.Snapshot != SnapshotRow || ev.Seq == "" {
		return ev.Seq
	}
	b := []byte(ev.Seq)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] > 0 {
			b[i]--
			return Seq(b)
		}
		b[i] = 0xff
	}
	return "" // all zeros: nothing below
}
