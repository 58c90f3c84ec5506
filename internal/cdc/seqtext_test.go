package cdc

import "testing"

func TestSeqDescribe(t *testing.T) {
	commit, _ := ParseSQLServerLSN("0000002b:00000588:0003")
	change, _ := ParseSQLServerLSN("0000002b:00000580:0002")
	rs, _ := ParseOracleRSID(" 0x00000d.00012a4f.0010 ")
	lcr, err := OracleLCRSeq(2400, 2390, 3, []byte{0x00, 0x00, 0x09, 0x60, 0x01})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		s    Seq
		want string
	}{
		{"", "none"},
		{PostgresSeq(0x1007428, 0x1007428), "lsn 0/1007428"},
		{PostgresSeq(0x16B3800, 0x16B3748), "lsn 0/16B3748 after commit 0/16B3800"},
		{PostgresSeq(0, 0x2_016B3748), "source snapshot read at lsn 2/16B3748"},
		{PostgresSeq(0x16B3748, 0), "source snapshot at lsn 0/16B3748"},
		{MySQLSeq(3, 1234, 2), "binlog file .000003 position 1234 row 2"},
		{SQLServerSeq(commit, change, 1), "commit_lsn 0000002b:00000588:0003 change_lsn 0000002b:00000580:0002 event_serial_no 1"},
		{SQLServerSeq(commit, SQLServerLSN{}, 0), "commit_lsn 0000002b:00000588:0003"},
		{OracleSeq(2400, 2390, rs, 7, 0), "commit_scn 2400 scn 2390 rs_id 0x00000d.00012a4f.0010 ssn 7"},
		{OracleSeq(2400, 2400, OracleRSID{}, 0, 0), "commit_scn 2400 scn 2400"},
		{lcr, "commit_scn 2400 scn 2390 lcr_position 0000096001 order 3"},
		{SeqOf(1, 2, 3, 4), "0000000000000001.0000000000000002.0000000000000003.0000000000000004"},
	} {
		if got := c.s.Describe(); got != c.want {
			t.Errorf("%s: Describe %q, want %q", c.s, got, c.want)
		}
		if got := DescribeHex(c.s.Hex()); c.s != "" && got != c.want {
			t.Errorf("%s: DescribeHex %q, want %q", c.s, got, c.want)
		}
	}
	if got := DescribeHex("not hex"); got != "not hex" {
		t.Errorf("DescribeHex of other text: %q", got)
	}
}
