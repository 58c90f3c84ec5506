package cdc

import (
	"fmt"
	"strconv"
	"strings"
)

// Describe renders the position for people, in the source database's own
// terms, chosen by the position's width (IsMySQLSeq):
//
//   - PostgreSQL (2 words, PostgresEventWords): "lsn 0/16B3748" (the
//     pg_lsn text form), with "after commit 0/16B3800" when the first word
//     (the previous transaction's commit, lastCommitLsn) is above the
//     change's lsn; "source snapshot read at lsn 0/16B3748" for (0, L);
//     "source snapshot at lsn 0/16B3748" for (P, 0);
//   - MySQL and MariaDB (3 words, MySQLSeq): "binlog file .000003 position
//     1234 row 0" (the file's index as in its name; the prefix is not
//     kept);
//   - SQL Server (5 words, SQLServerSeq): "commit_lsn 0000002b:00000588:0003
//     change_lsn 0000002b:00000588:0002 event_serial_no 1" (Debezium's
//     text forms; change_lsn and event_serial_no left out when 0, as in a
//     source snapshot read);
//   - Oracle (6 words or more, OracleSeq, OracleLCRSeq): "commit_scn 2400
//     scn 2390" with "rs_id", "ssn", "lcr_position" and "order" (the
//     transaction's total_order) when set.
//
// The zero Seq is "none"; a width no connector writes gets String's
// dotted hex.
func (s Seq) Describe() string {
	w := s.Words()
	switch {
	case s == "":
		return "none"
	case len(s)%8 != 0:
		return s.String()
	case len(w) == 2:
		first, lsn := w[0], w[1]
		switch {
		case first == 0:
			return "source snapshot read at lsn " + FormatLSN(lsn)
		case lsn == 0:
			return "source snapshot at lsn " + FormatLSN(first)
		case first > lsn:
			return "lsn " + FormatLSN(lsn) + " after commit " + FormatLSN(first)
		}
		return "lsn " + FormatLSN(lsn)
	case len(w) == 3:
		return fmt.Sprintf("binlog file .%06d position %d row %d", w[0], w[1], w[2])
	case len(w) == 5:
		t := "commit_lsn " + formatSQLServerLSN(w[0], w[1])
		if w[2] != 0 || w[3] != 0 {
			t += " change_lsn " + formatSQLServerLSN(w[2], w[3])
		}
		if w[4] != 0 {
			t += " event_serial_no " + strconv.FormatUint(w[4], 10)
		}
		return t
	case len(w) >= 6:
		t := "commit_scn " + strconv.FormatUint(w[0], 10) + " scn " + strconv.FormatUint(w[1], 10)
		if w[2] != 0 || w[3] != 0 {
			t += fmt.Sprintf(" rs_id 0x%06x.%08x.%04x", w[2], w[3]>>16, w[3]&0xffff)
		}
		if w[4] != 0 {
			t += " ssn " + strconv.FormatUint(w[4], 10)
		}
		if len(w) > 6 {
			lcr := s[48:].Hex()
			for strings.HasSuffix(lcr, "00") { // the padding to whole words
				lcr = lcr[:len(lcr)-2]
			}
			t += " lcr_position " + lcr
		}
		if w[5] != 0 {
			t += " order " + strconv.FormatUint(w[5], 10)
		}
		return t
	}
	return s.String()
}

// DescribeHex is Describe for the `_seq` column form (Seq.Hex); text that
// is not that form is returned as it is.
func DescribeHex(h string) string {
	s, err := ParseSeqHex(h)
	if err != nil {
		return h
	}
	return s.Describe()
}

// FormatLSN is PostgreSQL's pg_lsn text form: the high and low 32 bits
// in upper-case hex, "16/B374D848".
func FormatLSN(lsn uint64) string {
	return strings.ToUpper(strconv.FormatUint(lsn>>32, 16)) + "/" + strings.ToUpper(strconv.FormatUint(lsn&0xffffffff, 16))
}

// formatSQLServerLSN is Debezium's SQL Server LSN text form,
// "0000002b:00000588:0003", of an LSN held as SQLServerLSN's (Hi, Lo).
func formatSQLServerLSN(hi, lo uint64) string {
	return fmt.Sprintf("%08x:%08x:%04x", hi>>32, hi&0xffffffff, lo)
}
