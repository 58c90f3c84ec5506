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

// PostgresSeq is the position of a Debezium PostgreSQL event: words
// (commitLSN, lsn). commitLSN is the first element of source.sequence (the
// last commit LSN, 0 when null or absent, as in source snapshot reads); lsn
// is source.lsn. For one row, a later change always has a higher lsn and a
// not-lower commit LSN, because PostgreSQL serializes writers of a row and
// Debezium streams in commit order.
func PostgresSeq(commitLSN, lsn uint64) Seq { return SeqOf(commitLSN, lsn) }

// MySQLSeq is the position of a Debezium MySQL event: words (binlog file
// index, pos, row), from source.file ("mysql-bin.000003" → 3), source.pos
// (byte offset of the event in the file) and source.row (row number within
// a multi-row event).
func MySQLSeq(fileIndex, pos, row uint64) Seq { return SeqOf(fileIndex, pos, row) }

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
