package cdc

import (
	"strings"
	"testing"
)

func TestParseSQLServerLSN(t *testing.T) {
	l, err := ParseSQLServerLSN("0000002b:00000588:0003")
	if err != nil || l != (SQLServerLSN{Hi: 0x2b<<32 | 0x588, Lo: 3}) {
		t.Fatalf("%+v %v", l, err)
	}
	a, _ := ParseSQLServerLSN("0000002B:FFFFFFFF:ffff")
	b, _ := ParseSQLServerLSN("0000002c:00000000:0000")
	if SQLServerSeq(a, a, 1).Compare(SQLServerSeq(b, b, 0)) >= 0 {
		t.Error("LSN order is not byte order")
	}
	for _, bad := range []string{"", "0000002b:00000588:003", "0000002b-00000588:0003", "0000002g:00000588:0003", "NULL"} {
		if _, err := ParseSQLServerLSN(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	s := SQLServerSeq(SQLServerLSN{1, 2}, SQLServerLSN{3, 4}, 5)
	if w := s.Words(); len(w) != 5 || w[0] != 1 || w[1] != 2 || w[2] != 3 || w[3] != 4 || w[4] != 5 {
		t.Errorf("words %v", w)
	}
}

func TestParseOracleRSID(t *testing.T) {
	r, err := ParseOracleRSID(" 0x00000d.00012a4f.0010 ")
	if err != nil || r != (OracleRSID{LogSeq: 0xd, BlockOffset: 0x12a4f<<16 | 0x10}) {
		t.Fatalf("%+v %v", r, err)
	}
	if r2, err := ParseOracleRSID("00000d.00012a4f.0011"); err != nil || r2.BlockOffset != r.BlockOffset+1 {
		t.Errorf("%+v %v", r2, err)
	}
	for _, bad := range []string{"", "0x", "0x0d.12", "0x0d.12.zz", "0x0d.12.00100"} {
		if _, err := ParseOracleRSID(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	s := OracleSeq(9, 8, OracleRSID{7, 6}, 5, 4)
	if w := s.Words(); len(w) != 6 || w[0] != 9 || w[5] != 4 {
		t.Errorf("words %v", w)
	}
}

// XStream: the LCR position follows the SCN words, zero-padded to whole
// words, and orders changes of one transaction at one SCN.
func TestOracleLCRSeq(t *testing.T) {
	a, err := OracleLCRSeq(205, 204, 0, []byte{0xcd, 0xcc, 0x01})
	if err != nil {
		t.Fatal(err)
	}
	if a.Hex() != "00000000000000cd00000000000000cc"+strings.Repeat("0", 64)+"cdcc010000000000" {
		t.Errorf("hex %s", a.Hex())
	}
	b, _ := OracleLCRSeq(205, 204, 0, []byte{0xcd, 0xcc, 0x02})
	c, _ := OracleLCRSeq(206, 100, 0, []byte{0x00, 0x00, 0x00})
	if !(a < b && b < c) {
		t.Errorf("order: %s %s %s", a.Hex(), b.Hex(), c.Hex())
	}
	if !(OracleSeq(205, 204, OracleRSID{}, 0, 0) < a) {
		t.Error("an event without an LCR position sorts after one with it at the same SCNs")
	}
	for _, n := range []int{0, MaxOracleLCRBytes + 1} {
		if _, err := OracleLCRSeq(1, 1, 0, make([]byte, n)); err == nil {
			t.Errorf("%d bytes: no error", n)
		}
	}
	if s, err := OracleLCRSeq(1, 1, 0, make([]byte, MaxOracleLCRBytes)); err != nil || len(s.Words()) != 6+MaxOracleLCRBytes/8 {
		t.Errorf("longest: %d words, %v", len(s.Words()), err)
	}
}
