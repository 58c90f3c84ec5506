package cut

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

func TestCommitPosition(t *testing.T) {
	for _, c := range []struct {
		connector, id string
		want          cdc.Seq
	}{
		// The real END of testdata/debezium/kafka-connect-iceberg-sink.
		{"postgresql", "12117:67299632", cdc.PostgresSeq(67299632, 0)},
		{"postgresql", "571:53195832", cdc.PostgresSeq(53195832, 0)},
		{"sqlserver", "0000002b:00000588:0003", cdc.SeqOf(0x2b<<32|0x588, 3, math.MaxUint64, math.MaxUint64, math.MaxUint64)},
	} {
		got, err := CommitPosition(c.connector, c.id)
		if err != nil || got != c.want {
			t.Errorf("%s %q: %v, %v; want %v", c.connector, c.id, got, err, c.want)
		}
	}
	for _, c := range []struct{ connector, id, err string }{
		{"postgresql", "571", `cut: PostgreSQL transaction id "571" is not of the form txId:LSN`},
		{"postgresql", "x:53195832", `cut: PostgreSQL transaction id "x:53195832": txId is not a decimal number`},
		{"postgresql", "571:0", `cut: PostgreSQL transaction id "571:0": LSN is not a positive decimal number`},
		{"postgresql", "571:0/32C4A10", `cut: PostgreSQL transaction id "571:0/32C4A10": LSN is not a positive decimal number`},
		{"sqlserver", "0000002b:00000588", `cut: SQL Server transaction id "0000002b:00000588": cdc: SQL Server LSN "0000002b:00000588" is not of the form vvvvvvvv:bbbbbbbb:ssss`},
		{"mysql", "3e11fa47-71ca-11e1-9e33-c80aa9429562:23", `cut: mysql transaction id "3e11fa47-71ca-11e1-9e33-c80aa9429562:23" (a GTID or binlog coordinates) gives no commit position in (file, pos, row): cut by position instead`},
		{"mariadb", "0-1-5", `cut: mariadb transaction id "0-1-5" (a GTID or binlog coordinates) gives no commit position in (file, pos, row): cut by position instead`},
		{"oracle", "0a001b00e4030000", `cut: oracle transaction id "0a001b00e4030000" (an XID) gives no commit SCN: cut by position instead`},
		{"db2", "1", `cut: connector "db2": no commit position from transaction id "1"`},
	} {
		if _, err := CommitPosition(c.connector, c.id); err == nil || err.Error() != c.err {
			t.Errorf("%s %q: error %v, want %q", c.connector, c.id, err, c.err)
		}
	}
}

// The PostgreSQL commit position (L, 0) sits above every change of the
// transaction and below every change of the next, as the tables' `_seq`
// place them (cdc.PostgresEventWords).
func TestCommitPositionOrdersPostgresEvents(t *testing.T) {
	w, err := CommitPosition("postgresql", "600:1000")
	if err != nil {
		t.Fatal(err)
	}
	// The transaction's changes: lastCommitLsn 700 (the one before), lsn
	// 650 (interleaved in the WAL below the previous commit) and 990.
	for _, lsn := range []uint64{650, 990} {
		if e := cdc.PostgresSeq(cdc.PostgresEventWords(700, lsn, false)); e >= w {
			t.Errorf("change at lsn %d: %v not below %v", lsn, e, w)
		}
	}
	// The next transaction's: lastCommitLsn 1000, lsn 980 (written before
	// the commit at 1000, committed after it) and 1100.
	for _, lsn := range []uint64{980, 1100} {
		if e := cdc.PostgresSeq(cdc.PostgresEventWords(1000, lsn, false)); e <= w {
			t.Errorf("next change at lsn %d: %v not above %v", lsn, e, w)
		}
	}
}

func TestTxKey(t *testing.T) {
	for _, c := range []struct{ connector, id, want string }{
		{"postgresql", "571:53195829", "571"},
		{"postgresql", "571:53195832", "571"},
		{"postgresql", "571", "571"},
		{"sqlserver", "0000002b:00000588:0003", "0000002b:00000588:0003"},
		{"mysql", "3e11fa47-71ca-11e1-9e33-c80aa9429562:23", "3e11fa47-71ca-11e1-9e33-c80aa9429562:23"},
		{"", "1:2", "1:2"},
	} {
		if got := TxKey(c.connector, c.id); got != c.want {
			t.Errorf("TxKey(%q, %q) = %q, want %q", c.connector, c.id, got, c.want)
		}
	}
}

func pg(l uint64) cdc.Seq { return cdc.PostgresSeq(l, 0) }

func mustNil(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func wantCut(t *testing.T, step string, got, want Cut) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got  %+v\n want %+v", step, got, want)
	}
}

// One group's history, step by step: an END before the tables' events, a
// table that lags, progress out of order, an END after its events, a
// transaction of one table, a table caught up by its fetched position,
// redeliveries and refusals.
func TestTrackerGolden(t *testing.T) {
	// PostgreSQL ids: the changes' transaction.id carry their own LSN
	// after the txId (TxKey), the END's its commit's.
	tr := NewTracker("postgresql", []string{"public.orders", "public.items", "public.accounts", "public.items"})
	t1 := End{ID: "1:100", Commit: pg(100), TsMs: 1001, Counts: map[string]int64{"public.orders": 1, "public.items": 2}}
	t2 := End{ID: "2:200", Commit: pg(200), TsMs: 1002, Counts: map[string]int64{"public.accounts": 2, "public.items": 0}}
	t3 := End{ID: "3:300", Commit: pg(300), TsMs: 1003, Counts: map[string]int64{"public.orders": 1, "public.other": 4}}
	t4 := End{ID: "4:400", Commit: pg(400), TsMs: 1004, Counts: map[string]int64{"public.other": 5}}

	wantCut(t, "nothing seen", tr.Cut(), Cut{})

	// T1's END arrives before any of its events.
	mustNil(t, "END T1", tr.End(t1))
	wantCut(t, "END T1 first", tr.Cut(), Cut{Holds: []Hold{
		{Table: "public.items", TxID: "1:100", Commit: pg(100), Missing: 2},
		{Table: "public.orders", TxID: "1:100", Commit: pg(100), Missing: 1},
	}})
	mustNil(t, "orders T1", tr.Applied("public.orders", "1:95", 1))
	mustNil(t, "items T1 1", tr.Applied("public.items", "1:96", 1))
	wantCut(t, "items lags", tr.Cut(), Cut{Holds: []Hold{{Table: "public.items", TxID: "1:100", Commit: pg(100), Missing: 1}}})

	// T2 touches accounts only; its events arrive before its END.
	mustNil(t, "accounts T2", tr.Applied("public.accounts", "2:150", 2))
	mustNil(t, "END T2", tr.End(t2))
	wantCut(t, "T2 complete behind T1", tr.Cut(), Cut{Holds: []Hold{{Table: "public.items", TxID: "1:100", Commit: pg(100), Missing: 1}}})

	// items completes T1: the cut moves over T1 and T2 at once (orders
	// and items did not touch T2 and do not hold it).
	mustNil(t, "items T1 2", tr.Applied("public.items", "1:97", 2))
	wantCut(t, "T1 and T2", tr.Cut(), Cut{W: pg(200), TxID: "2:200", TsMs: 1002})
	// A stale report (out of order) changes nothing.
	mustNil(t, "items T1 stale", tr.Applied("public.items", "1:96", 1))
	wantCut(t, "stale report", tr.Cut(), Cut{W: pg(200), TxID: "2:200", TsMs: 1002})

	// T3: orders lags; public.other is not in the group.
	mustNil(t, "END T3", tr.End(t3))
	wantCut(t, "orders lags", tr.Cut(), Cut{W: pg(200), TxID: "2:200", TsMs: 1002,
		Holds: []Hold{{Table: "public.orders", TxID: "3:300", Commit: pg(300), Missing: 1}}})
	// Redeliveries: an END cut past, an END held, both ignored.
	mustNil(t, "END T1 again", tr.End(t1))
	mustNil(t, "END T3 again", tr.End(t3))
	// Refusals leave the state as it was.
	t3b := t3
	t3b.Counts = map[string]int64{"public.orders": 2}
	if err := tr.End(t3b); !errors.Is(err, ErrConflict) {
		t.Errorf("END T3 with other counts: %v, want ErrConflict", err)
	}
	if err := tr.End(End{ID: "9:250", Commit: pg(250), Counts: map[string]int64{"public.orders": 1}}); !errors.Is(err, ErrOutOfOrder) ||
		err.Error() != `cut: END out of commit order: "9:250" at 00000000000000fa.0000000000000000, the previous END at 000000000000012c.0000000000000000` {
		t.Errorf("END below the newest: %v, want ErrOutOfOrder", err)
	}
	if err := tr.End(End{ID: "9:500", Commit: cdc.MySQLSeq(1, 2, 3)}); !errors.Is(err, ErrWidth) {
		t.Errorf("END of another width: %v, want ErrWidth", err)
	}
	if err := tr.Applied("public.other", "3:300", 4); !errors.Is(err, ErrUnknownTable) {
		t.Errorf("report of a table outside the group: %v, want ErrUnknownTable", err)
	}
	if err := tr.FetchedPast("public.orders", cdc.MySQLSeq(1, 2, 3)); !errors.Is(err, ErrWidth) {
		t.Errorf("fetched position of another width: %v, want ErrWidth", err)
	}
	wantCut(t, "after refusals", tr.Cut(), Cut{W: pg(200), TxID: "2:200", TsMs: 1002,
		Holds: []Hold{{Table: "public.orders", TxID: "3:300", Commit: pg(300), Missing: 1}}})

	// orders has fetched past T3's commit (a change of a later
	// transaction on every partition): T3 is complete without a count.
	mustNil(t, "orders fetched below T3", tr.FetchedPast("public.orders", cdc.PostgresSeq(250, 240)))
	wantCut(t, "fetched below", tr.Cut(), Cut{W: pg(200), TxID: "2:200", TsMs: 1002,
		Holds: []Hold{{Table: "public.orders", TxID: "3:300", Commit: pg(300), Missing: 1}}})
	mustNil(t, "orders fetched past T3", tr.FetchedPast("public.orders", cdc.PostgresSeq(300, 310)))
	wantCut(t, "fetched past", tr.Cut(), Cut{W: pg(300), TxID: "3:300", TsMs: 1003})

	// T4 touches no table of the group: complete as it arrives.
	mustNil(t, "END T4", tr.End(t4))
	wantCut(t, "T4", tr.Cut(), Cut{W: pg(400), TxID: "4:400", TsMs: 1004})
	// ENDs cut past are forgotten with their counts; the stale report of
	// items for T1, sent after T1 was cut past, stays (documented).
	if len(tr.open) != 0 || len(tr.byID) != 0 || len(tr.applied["public.orders"]) != 0 || len(tr.applied["public.accounts"]) != 0 ||
		!reflect.DeepEqual(tr.applied["public.items"], map[string]int64{"1": 1}) {
		t.Errorf("state after the cut: open %d, ids %d, counts %v", len(tr.open), len(tr.byID), tr.applied)
	}
}

// Without transaction metadata: the lowest position every table has
// fetched past, per position.
func TestTrackerPositionCut(t *testing.T) {
	tr := NewTracker("mysql", []string{"b", "a"})
	wantCut(t, "nothing", tr.PositionCut(), Cut{PerPosition: true, Holds: []Hold{{Table: "a"}, {Table: "b"}}})
	mustNil(t, "a", tr.FetchedPast("a", cdc.PostgresSeq(500, 490)))
	wantCut(t, "b silent", tr.PositionCut(), Cut{PerPosition: true, Holds: []Hold{{Table: "b"}}})
	mustNil(t, "b", tr.FetchedPast("b", cdc.PostgresSeq(400, 410)))
	wantCut(t, "b behind", tr.PositionCut(), Cut{W: cdc.PostgresSeq(400, 410), PerPosition: true, Holds: []Hold{{Table: "b"}}})
	mustNil(t, "b stale", tr.FetchedPast("b", cdc.PostgresSeq(300, 300)))
	mustNil(t, "b past a", tr.FetchedPast("b", cdc.PostgresSeq(600, 0)))
	wantCut(t, "a behind", tr.PositionCut(), Cut{W: cdc.PostgresSeq(500, 490), PerPosition: true, Holds: []Hold{{Table: "a"}}})
	mustNil(t, "a even", tr.FetchedPast("a", cdc.PostgresSeq(600, 0)))
	wantCut(t, "even", tr.PositionCut(), Cut{W: cdc.PostgresSeq(600, 0), PerPosition: true, Holds: []Hold{{Table: "a"}, {Table: "b"}}})
	// The transaction-mode cut has seen no END.
	wantCut(t, "no END", tr.Cut(), Cut{})
	wantCut(t, "empty group", NewTracker("mysql", nil).PositionCut(), Cut{PerPosition: true})
}

// How a table reports its progress in the property test.
const (
	reportCounts  = iota // Applied after each event
	reportFetched        // FetchedPast after each event
	reportBoth
)

// A random serial history of transactions over 2 to 4 tables, delivered
// as END events in order and each table's events in its own order, in a
// random interleaving with redelivered ENDs and stale reports. After every
// step the Tracker's cut is the brute-force one: the commit position of
// the newest END seen such that every table has received every event of
// it and of every END before it, with the tables holding the next END
// and the events they miss.
func TestTrackerRandomInterleavings(t *testing.T) {
	for seed := range uint64(400) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { randomHistory(t, seed) })
	}
}

func randomHistory(t *testing.T, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 37))
	k := 2 + r.IntN(3)
	tables := make([]string, k)
	mode := make([]int, k)
	for i := range tables {
		tables[i] = fmt.Sprintf("public.t%d", i)
		mode[i] = r.IntN(3)
	}
	n := 1 + r.IntN(10)
	ends := make([]End, n)
	count := make([][]int64, k) // table → transaction → events
	for i := range count {
		count[i] = make([]int64, n)
	}
	stream := make([][]int, k) // table → its events' transactions, in order
	for x := range ends {
		lsn := uint64(100 * (x + 1))
		ends[x] = End{ID: fmt.Sprintf("%d:%d", 500+x, lsn), Commit: pg(lsn), TsMs: int64(x), Counts: map[string]int64{}}
		touched := 0
		for tb := range tables {
			if r.IntN(2) == 0 {
				continue
			}
			count[tb][x] = 1 + int64(r.IntN(3))
			touched++
		}
		if touched == 0 && r.IntN(2) == 0 {
			count[r.IntN(k)][x] = 1 + int64(r.IntN(3))
		}
		for tb := range tables {
			if count[tb][x] > 0 {
				ends[x].Counts[tables[tb]] = count[tb][x]
				for range count[tb][x] {
					stream[tb] = append(stream[tb], x)
				}
			}
		}
		if r.IntN(4) == 0 {
			ends[x].Counts["public.elsewhere"] = 1
		}
	}

	tr := NewTracker("postgresql", tables)
	swap := rand.New(rand.NewPCG(seed, 41)) // when to go on with a restored Tracker
	got := make([][]int64, k)               // table → transaction → events delivered
	for i := range got {
		got[i] = make([]int64, n)
	}
	cursor := make([]int, k)
	endsSeen := 0
	var log []string
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("seed tables %v modes %v counts %v\nsteps %v\n"+format, append([]any{tables, mode, count, log}, args...)...)
	}
	// eventID is a change's transaction.id: the txId and an LSN below
	// the commit's (TxKey).
	eventID := func(x int) string { return fmt.Sprintf("%d:%d", 500+x, 100*x+1+r.IntN(99)) }
	// frontier is the newest transaction all of whose events table tb
	// has received, and all before it; -1 if none.
	frontier := func(tb int) int {
		x := -1
		for x+1 < n && got[tb][x+1] == count[tb][x+1] {
			x++
		}
		return x
	}
	for step := 0; ; step++ {
		remaining := n - endsSeen
		for tb := range tables {
			remaining += len(stream[tb]) - cursor[tb]
		}
		if remaining == 0 {
			break
		}
		switch c := r.IntN(10); {
		case c < 3 && endsSeen < n:
			log = append(log, "END "+ends[endsSeen].ID)
			if err := tr.End(ends[endsSeen]); err != nil {
				fail("END: %v", err)
			}
			endsSeen++
		case c == 3 && endsSeen > 0:
			e := ends[r.IntN(endsSeen)]
			log = append(log, "END again "+e.ID)
			if err := tr.End(e); err != nil {
				fail("END again: %v", err)
			}
		case c == 4:
			// A stale report: a count or position below one sent.
			tb := r.IntN(k)
			if x := frontier(tb); x >= 0 && mode[tb] != reportCounts {
				log = append(log, fmt.Sprintf("stale fetched %d", tb))
				if err := tr.FetchedPast(tables[tb], ends[r.IntN(x+1)].Commit); err != nil {
					fail("stale fetched: %v", err)
				}
			} else if cursor[tb] > 0 && mode[tb] != reportFetched {
				x := stream[tb][cursor[tb]-1]
				log = append(log, fmt.Sprintf("stale applied %d", tb))
				if err := tr.Applied(tables[tb], eventID(x), r.Int64N(got[tb][x]+1)); err != nil {
					fail("stale applied: %v", err)
				}
			}
		default:
			tb := r.IntN(k)
			if cursor[tb] == len(stream[tb]) {
				continue
			}
			x := stream[tb][cursor[tb]]
			cursor[tb]++
			got[tb][x]++
			log = append(log, fmt.Sprintf("t%d event of %s", tb, ends[x].ID))
			if mode[tb] != reportFetched {
				if err := tr.Applied(tables[tb], eventID(x), got[tb][x]); err != nil {
					fail("applied: %v", err)
				}
			}
			if f := frontier(tb); f >= 0 && mode[tb] != reportCounts {
				if err := tr.FetchedPast(tables[tb], ends[f].Commit); err != nil {
					fail("fetched: %v", err)
				}
			}
		}

		// The state carried across continue-as-new: the restored
		// Tracker is the same, and every few steps the history goes on
		// with it (the oracle below checks it then).
		st := tr.State()
		tr2, err := Restore(st)
		if err != nil {
			fail("step %d: Restore: %v", step, err)
		}
		if st2 := tr2.State(); !reflect.DeepEqual(st2, st) || !reflect.DeepEqual(tr2.Cut(), tr.Cut()) {
			fail("step %d: restored state\n got  %+v\n want %+v", step, st2, st)
		}
		if swap.IntN(3) == 0 {
			tr = tr2
		}

		// The oracle.
		var want Cut
		for x := range endsSeen {
			var holds []Hold
			for tb := range tables {
				if got[tb][x] < count[tb][x] {
					m := count[tb][x]
					if mode[tb] != reportFetched {
						m -= got[tb][x]
					}
					holds = append(holds, Hold{Table: tables[tb], TxID: ends[x].ID, Commit: ends[x].Commit, Missing: m})
				}
			}
			if holds != nil {
				want.Holds = holds
				break
			}
			want.W, want.TxID, want.TsMs = ends[x].Commit, ends[x].ID, ends[x].TsMs
		}
		if c := tr.Cut(); !reflect.DeepEqual(c, want) {
			fail("step %d: cut\n got  %+v\n want %+v", step, c, want)
		}
	}
	if c := tr.Cut(); c.W != ends[n-1].Commit || c.Holds != nil {
		fail("all delivered: %+v", c)
	}
}

// IDConnector tells the connector from the form of an END's id, and
// CommitPosition takes every id IDConnector names a connector for.
func TestIDConnector(t *testing.T) {
	for id, want := range map[string]string{
		"571:53195832":                            Postgres,
		"0000002a:000000c8:0003":                  SQLServer,
		"0000002A:000000C8:0003":                  SQLServer,
		"3e11fa47-71ca-11e1-9e33-c80aa9429562:23": "",
		"mysql-bin.000003:1234":                   "",
		"0a.12.1":                                 "",
		"571":                                     "",
		"571:":                                    "",
		":53195832":                               "",
		"571:5319583x":                            "",
		"":                                        "",
	} {
		if got := IDConnector(id); got != want {
			t.Errorf("IDConnector(%q) = %q, want %q", id, got, want)
		}
		if want != "" {
			if _, err := CommitPosition(want, id); err != nil {
				t.Errorf("CommitPosition(%s, %q): %v", want, id, err)
			}
		}
	}
}

// A Tracker's State restores to the same Tracker (TestTrackerRandomInterleavings
// goes on with restored ones); WithTables adds a table that holds the cut
// at the first END touching it until it reports; Restore refuses a state
// that no Tracker has.
func TestTrackerStateAndWithTables(t *testing.T) {
	tr := NewTracker(Postgres, []string{"public.a"})
	mustNil(t, "END", tr.End(End{ID: "500:100", Commit: pg(100), Counts: map[string]int64{"public.a": 1}, TsMs: 7}))
	mustNil(t, "applied", tr.Applied("public.a", "500:90", 1))
	mustNil(t, "END", tr.End(End{ID: "501:200", Commit: pg(200), Counts: map[string]int64{"public.a": 1, "public.b": 2}, TsMs: 8}))
	mustNil(t, "applied", tr.Applied("public.a", "501:150", 1))
	wantCut(t, "one table", tr.Cut(), Cut{W: pg(200), TxID: "501:200", TsMs: 8})
	mustNil(t, "END", tr.End(End{ID: "502:300", Commit: pg(300), Counts: map[string]int64{"public.b": 1}, TsMs: 9}))
	wantCut(t, "b outside", tr.Cut(), Cut{W: pg(300), TxID: "502:300", TsMs: 9})
	mustNil(t, "END", tr.End(End{ID: "503:400", Commit: pg(400), Counts: map[string]int64{"public.a": 2, "public.b": 1}, TsMs: 10}))
	mustNil(t, "applied", tr.Applied("public.a", "503:350", 1))
	want := State{Connector: Postgres, Tables: []string{"public.a"}, W: pg(300).Hex(), TxID: "502:300", TsMs: 9, Last: pg(400).Hex(), Width: 16,
		Open:    []StateEnd{{ID: "503:400", Commit: pg(400).Hex(), Counts: map[string]int64{"public.a": 2, "public.b": 1}, TsMs: 10}},
		Applied: map[string]map[string]int64{"public.a": {"503": 1}}}
	if got := tr.State(); !reflect.DeepEqual(got, want) {
		t.Fatalf("State\n got  %+v\n want %+v", got, want)
	}
	u := tr.WithTables("public.b", "public.a")
	if got := u.State().Tables; !reflect.DeepEqual(got, []string{"public.a", "public.b"}) {
		t.Fatalf("WithTables: tables %v", got)
	}
	mustNil(t, "applied", u.Applied("public.a", "503:360", 2))
	wantCut(t, "b joined", u.Cut(), Cut{W: pg(300), TxID: "502:300", TsMs: 9,
		Holds: []Hold{{Table: "public.b", TxID: "503:400", Commit: pg(400), Missing: 1}}})
	mustNil(t, "fetched", u.FetchedPast("public.b", pg(400)))
	wantCut(t, "b fetched past", u.Cut(), Cut{W: pg(400), TxID: "503:400", TsMs: 10})
	if err := tr.Applied("public.b", "503:1", 1); !errors.Is(err, ErrUnknownTable) {
		t.Fatalf("the Tracker WithTables was called on changed: %v", err)
	}
	for _, bad := range []State{
		{Tables: []string{"public.a"}, W: "xyz"},
		{Tables: []string{"public.a"}, Fetched: map[string]string{"public.c": pg(1).Hex()}},
		{Tables: []string{"public.a"}, Open: []StateEnd{{ID: "1:5", Commit: pg(5).Hex()}, {ID: "1:6", Commit: pg(6).Hex()}}, Connector: Postgres},
	} {
		if _, err := Restore(bad); err == nil {
			t.Errorf("Restore(%+v): no error", bad)
		}
	}
}

// WithoutTables takes tables out of the group: the ENDs' counts for them
// are no longer waited for, so the cut moves over every END only they
// held; what they reported is kept, so that joining again (WithTables)
// they hold no transaction they had applied (a breaker's run: a table
// that left and joined again held W until a later change on a quiet
// partition). Forget drops a table's reports. The Tracker each is
// called on is not changed.
func TestTrackerWithoutTables(t *testing.T) {
	tr := NewTracker(Postgres, []string{"public.a", "public.b"})
	mustNil(t, "END", tr.End(End{ID: "500:100", Commit: pg(100), Counts: map[string]int64{"public.a": 1, "public.b": 1}, TsMs: 7}))
	mustNil(t, "END", tr.End(End{ID: "501:200", Commit: pg(200), Counts: map[string]int64{"public.b": 1}, TsMs: 8}))
	mustNil(t, "END", tr.End(End{ID: "502:300", Commit: pg(300), Counts: map[string]int64{"public.a": 1, "public.b": 1}, TsMs: 9}))
	mustNil(t, "applied", tr.AppliedEvents("public.a", "500:90", Orders{{1, 1}}, nil, pg(90)))
	mustNil(t, "applied", tr.AppliedEvents("public.b", "502:290", Orders{{1, 1}}, nil, pg(290)))
	mustNil(t, "fetched", tr.FetchedPast("public.b", pg(50)))
	wantCut(t, "b holds", tr.Cut(), Cut{Holds: []Hold{{Table: "public.b", TxID: "500:100", Commit: pg(100), Missing: 1}}})
	u := tr.WithoutTables("public.b", "public.c")
	wantCut(t, "b left", u.Cut(), Cut{W: pg(200), TxID: "501:200", TsMs: 8,
		Holds: []Hold{{Table: "public.a", TxID: "502:300", Commit: pg(300), Missing: 1}}})
	want := State{Connector: Postgres, Tables: []string{"public.a", "public.b"}, W: pg(200).Hex(), TxID: "501:200", TsMs: 8, Last: pg(300).Hex(), Width: 16,
		Open:    []StateEnd{{ID: "502:300", Commit: pg(300).Hex(), Counts: map[string]int64{"public.a": 1, "public.b": 1}, TsMs: 9}},
		Seen:    map[string]map[string]StateSeen{"public.b": {"502": {Orders: Orders{{1, 1}}}}},
		Fetched: map[string]string{"public.b": pg(50).Hex()}, Parked: []string{"public.b"}}
	if got := u.State(); !reflect.DeepEqual(got, want) {
		t.Fatalf("State\n got  %+v\n want %+v", got, want)
	}
	if r, err := Restore(u.State()); err != nil || !reflect.DeepEqual(r.State(), want) {
		t.Fatalf("Restore: %v", err)
	}
	if c := u.PositionCut(); c.W != "" || len(c.Holds) != 1 || c.Holds[0].Table != "public.a" {
		t.Fatalf("per position, b out: %+v", c)
	}
	wantCut(t, "unchanged", tr.Cut(), Cut{Holds: []Hold{{Table: "public.b", TxID: "500:100", Commit: pg(100), Missing: 1}}})
	// it joins again with what it reported: 502 is complete in it
	v := u.WithTables("public.b")
	wantCut(t, "b back", v.Cut(), Cut{W: pg(200), TxID: "501:200", TsMs: 8,
		Holds: []Hold{{Table: "public.a", TxID: "502:300", Commit: pg(300), Missing: 1}}})
	if got := v.State().Parked; got != nil {
		t.Fatalf("parked after it joined again: %v", got)
	}
	// forgotten, it holds 502 until it reports again
	f := v.Forget("public.b")
	wantCut(t, "b forgotten", f.Cut(), Cut{W: pg(200), TxID: "501:200", TsMs: 8,
		Holds: []Hold{{Table: "public.a", TxID: "502:300", Commit: pg(300), Missing: 1}, {Table: "public.b", TxID: "502:300", Commit: pg(300), Missing: 1}}})
}

// EndAbove gives the oldest END not cut past whose commit is above a
// position: the bound of a group whose tables froze at or below it.
func TestTrackerEndAbove(t *testing.T) {
	tr := NewTracker("postgresql", []string{"public.orders"})
	if e, ok := tr.EndAbove(""); ok {
		t.Fatalf("no END yet: got %+v", e)
	}
	t1 := End{ID: "1:100", Commit: pg(100), TsMs: 1001, Counts: map[string]int64{"public.orders": 1}}
	t2 := End{ID: "2:200", Commit: pg(200), TsMs: 1002, Counts: map[string]int64{"public.orders": 1}}
	mustNil(t, "END T1", tr.End(t1))
	mustNil(t, "END T2", tr.End(t2))
	for _, c := range []struct {
		pos  cdc.Seq
		want string
	}{
		{"", "1:100"},
		{cdc.PostgresSeq(cdc.PostgresEventWords(50, 99, false)), "1:100"},
		{pg(100), "2:200"},
		{cdc.PostgresSeq(cdc.PostgresEventWords(100, 150, false)), "2:200"},
		{pg(200), ""},
		{cdc.SeqOf(1), ""}, // another width
	} {
		e, ok := tr.EndAbove(c.pos)
		if e.ID != c.want || ok != (c.want != "") {
			t.Errorf("EndAbove(%v) = %q, %v; want %q", c.pos, e.ID, ok, c.want)
		}
	}
	// T1 complete: cut past, so the oldest END held is T2.
	mustNil(t, "orders T1", tr.Applied("public.orders", "1:95", 1))
	if e, _ := tr.EndAbove(""); e.ID != "2:200" || e.TsMs != 1002 || e.Commit != pg(200) {
		t.Errorf("after the cut: %+v, want T2", e)
	}
}
