package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/cuts"
)

// cutRows are the `_cuts` rows of two cuts of group shop (and one of
// another group in the same table): cut 1 at END 102:103, cut 2 at END
// 110:111; shop.audit was empty at cut 1, shop.transfers has no history.
func cutRows() []cuts.Row {
	pub := time.Date(2026, 12, 6, 15, 0, 0, 0, time.UTC)
	w1, w2 := cdc.PostgresSeq(103, 0).Hex(), cdc.PostgresSeq(111, 0).Hex()
	return []cuts.Row{
		{Group: "shop", Number: 1, W: w1, TxID: "102:103", SourceTsMs: 1767258000103, Table: "shop.accounts", Mirror: 11, History: 12, PublishedAt: pub},
		{Group: "shop", Number: 1, W: w1, TxID: "102:103", SourceTsMs: 1767258000103, Table: "shop.audit", PublishedAt: pub},
		{Group: "shop", Number: 1, W: w1, TxID: "102:103", SourceTsMs: 1767258000103, Table: "shop.transfers", Mirror: 13, PublishedAt: pub},
		{Group: "other", Number: 5, W: w2, Table: "shop.other", Mirror: 99, PublishedAt: pub},
		{Group: "shop", Number: 2, W: w2, TxID: "110:111", SourceTsMs: 1767258060111, Table: "shop.transfers", Mirror: 23, PublishedAt: pub.Add(time.Minute)},
		{Group: "shop", Number: 2, W: w2, TxID: "110:111", SourceTsMs: 1767258060111, Table: "shop.accounts", Mirror: 21, History: 22, PublishedAt: pub.Add(time.Minute)},
		{Group: "shop", Number: 2, W: w2, TxID: "110:111", SourceTsMs: 1767258060111, Table: "shop.audit", Mirror: 24, History: 25, PublishedAt: pub.Add(time.Minute)},
	}
}

// cut's text: the cut, W in the source's terms, its END and source
// commit time, and each table's snapshots at the cut with the tag to
// read (none for a table empty at the cut), then how to read it.
func TestCutText(t *testing.T) {
	v, err := pickCut("shop", cutRows(), cutAt{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	printCut(&b, v)
	want := `group               shop
cut                 2 (tag cut-2)
W                   commit at lsn 0/6F (_seq 000000000000006f0000000000000000)
transaction         110:111
source commit time  2026-01-01T09:01:00.111Z
published           2026-12-06T15:01:00Z

TABLE           MIRROR          SNAPSHOT  HISTORY                 SNAPSHOT  TAG
shop.accounts   shop.accounts   21        shop.accounts_history   22        cut-2
shop.audit      shop.audit      24        shop.audit_history      25        cut-2
shop.transfers  shop.transfers  23        shop.transfers_history  -         cut-2

read every table at tag cut-2: Spark and Trino ` + "`SELECT * FROM shop.accounts FOR VERSION AS OF 'cut-2'`; pyiceberg `tbl.scan(snapshot_id=tbl.snapshot_by_name('cut-2').snapshot_id)`; or at the snapshot ids above" + `
`
	if b.String() != want {
		t.Fatalf("cut text:\n%s\nwant:\n%s", b.String(), want)
	}

	// --at 1 ms before cut 2's commit time: cut 1, with the empty table
	v, err = pickCut("shop", cutRows(), mustCutAt(t, "2026-01-01T09:01:00.110Z"))
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	printCut(&b, v)
	if got := strings.Split(b.String(), "\n"); got[1] != "cut                 1 (tag cut-1)" || got[9] != "shop.audit      shop.audit      -         shop.audit_history      -         - (empty at the cut)" {
		t.Fatalf("cut 1 text:\n%s", b.String())
	}
	b.Reset()
	if err := writeJSON(&b, v); err != nil {
		t.Fatal(err)
	}
	wantJSON := `{
  "group": "shop",
  "cut": 1,
  "tag": "cut-1",
  "w": "00000000000000670000000000000000",
  "tx_id": "102:103",
  "source_ts": "2026-01-01T09:00:00.103Z",
  "published_at": "2026-12-06T15:00:00Z",
  "tables": [
    {
      "table": "shop.accounts",
      "mirror": "shop.accounts",
      "mirror_snapshot_id": 11,
      "history": "shop.accounts_history",
      "history_snapshot_id": 12
    },
    {
      "table": "shop.audit",
      "mirror": "shop.audit",
      "mirror_snapshot_id": 0,
      "history": "shop.audit_history",
      "history_snapshot_id": 0
    },
    {
      "table": "shop.transfers",
      "mirror": "shop.transfers",
      "mirror_snapshot_id": 13,
      "history": "shop.transfers_history",
      "history_snapshot_id": 0
    }
  ],
  "read": "read every table at tag cut-1: Spark and Trino ` + "`SELECT * FROM shop.accounts FOR VERSION AS OF 'cut-1'`; pyiceberg `tbl.scan(snapshot_id=tbl.snapshot_by_name('cut-1').snapshot_id)`; or at the snapshot ids above" + `"
}
`
	if b.String() != wantJSON {
		t.Fatalf("cut JSON:\n%s\nwant:\n%s", b.String(), wantJSON)
	}
}

func mustCutAt(t *testing.T, s string) cutAt {
	t.Helper()
	at, err := parseCutAt(s)
	if err != nil {
		t.Fatal(err)
	}
	return at
}

// --at picks the newest cut at or before a position or a source commit
// time; before the first cut, without any cut and for a bad --at the
// errors say so (exit codes 3 and 2).
func TestCutAt(t *testing.T) {
	w1, w2 := cdc.PostgresSeq(103, 0), cdc.PostgresSeq(111, 0)
	for _, c := range []struct {
		at   string
		want int64
	}{
		{"", 2},
		{w2.Hex(), 2},
		{w2.String(), 2}, // dotted words
		{strings.ToUpper(w1.Hex()), 1},
		{cdc.PostgresSeq(110, 0).Hex(), 1},
		{"2026-01-01T09:01:00.111Z", 2},
		{"2026-01-01T10:01:00.110+01:00", 1},
		{"2027-01-01T00:00:00Z", 2},
	} {
		v, err := pickCut("shop", cutRows(), mustCutAt(t, c.at))
		if err != nil || v.Cut != c.want {
			t.Errorf("--at %q: cut %d, %v; want cut %d", c.at, v.Cut, err, c.want)
		}
	}
	for _, c := range []struct {
		group, at string
		rows      []cuts.Row
		code      int
		want      string
	}{
		{"shop", cdc.PostgresSeq(100, 0).Hex(), cutRows(), exitNotFound, "--at 00000000000000640000000000000000 is before the first cut of group shop (cut 1 at 00000000000000670000000000000000, source commit time 2026-01-01T09:00:00.103Z)"},
		{"shop", "2026-01-01T09:00:00Z", cutRows(), exitNotFound, "--at 2026-01-01T09:00:00Z is before the first cut of group shop (cut 1 at 00000000000000670000000000000000, source commit time 2026-01-01T09:00:00.103Z)"},
		{"other", "2026-01-01T09:00:00Z", cutRows(), exitNotFound, "--at 2026-01-01T09:00:00Z: the cuts of group other have no source commit time (cuts per position): give --at a position (hex _seq)"},
		{"audit", "", cutRows(), exitNotFound, "the group audit has published no cut: see `starter status TABLE` of a table of the group for what holds it"},
		{"shop", "yesterday", nil, exitUsage, `--at "yesterday": give a source position as the tables' _seq holds it (hex, 16 digits a word) or a source commit time (RFC 3339, e.g. 2026-12-06T10:00:00Z)`},
		{"shop", "abc", nil, exitUsage, `--at "abc": give a source position as the tables' _seq holds it (hex, 16 digits a word) or a source commit time (RFC 3339, e.g. 2026-12-06T10:00:00Z)`},
	} {
		at, err := parseCutAt(c.at)
		if err == nil {
			_, err = pickCut(c.group, c.rows, at)
		}
		if err == nil || err.Error() != c.want || exitCode(err) != c.code {
			t.Errorf("group %s --at %q: %v (exit %d); want %q (exit %d)", c.group, c.at, err, exitCode(err), c.want, c.code)
		}
	}
}

// A cut per position says so: its consistency, W as a change's position,
// its source time's meaning and the caveat in how to read it.
func TestCutTextPerPosition(t *testing.T) {
	pub := time.Date(2026, 12, 6, 15, 0, 0, 0, time.UTC)
	w := cdc.PostgresSeq(100, 111).Hex()
	rows := []cuts.Row{
		{Group: "shop", Number: 1, W: w, SourceTsMs: 1767258000103, Table: "shop.accounts", Mirror: 11, History: 12, PublishedAt: pub, PerPosition: true},
	}
	v, err := pickCut("shop", rows, cutAt{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	printCut(&b, v)
	want := `group               shop
cut                 1 (tag cut-1)
consistent          per position, not per transaction (no transaction topic): a transaction may straddle W
W                   ` + positionText(w) + `
source commit time  2026-01-01T09:00:00.103Z (the newest change the tables had applied when they froze)
published           2026-12-06T15:00:00Z

TABLE          MIRROR         SNAPSHOT  HISTORY                SNAPSHOT  TAG
shop.accounts  shop.accounts  11        shop.accounts_history  12        cut-1

read every table at tag cut-1: Spark and Trino ` + "`SELECT * FROM shop.accounts FOR VERSION AS OF 'cut-1'`; pyiceberg `tbl.scan(snapshot_id=tbl.snapshot_by_name('cut-1').snapshot_id)`; or at the snapshot ids above; per position: every change at or below W is in the tables and none above, but a transaction may straddle W (part of it in the tables)" + `
`
	if b.String() != want {
		t.Fatalf("cut text:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	if err := writeJSON(&b, v); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"per_position": true`) {
		t.Fatalf("cut JSON without per_position:\n%s", b.String())
	}
}
