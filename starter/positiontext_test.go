package main

import (
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// status, validate and erase show a position in the source's terms,
// then the _seq value the tables hold.
func TestPositionText(t *testing.T) {
	for h, want := range map[string]string{
		"":                                 "none",
		"00000000010074280000000001007428": "lsn 0/1007428 (_seq 00000000010074280000000001007428)",
		cdc.MySQLSeq(12, 4, 0).Hex():       "binlog file .000012 position 4 row 0 (_seq " + cdc.MySQLSeq(12, 4, 0).Hex() + ")",
		"0000000000000047":                 "position 0000000000000047",
		"zz":                               "position zz",
	} {
		if got := positionText(h); got != want {
			t.Errorf("positionText(%q) = %q, want %q", h, got, want)
		}
	}
}
