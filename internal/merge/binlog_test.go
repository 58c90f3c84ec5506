package merge

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// bl is a Debezium MySQL change of key k at mysql-bin.<file>:pos, delivered
// at partition part, offset off; ts is its commit time (ms) and gtid its
// source.gtid.
func bl(k string, op cdc.Op, file, pos uint64, part int32, off int64, ts int64, gtid string) *cdc.Event {
	return &cdc.Event{Op: op, Key: cdc.Key(k), Seq: cdc.MySQLSeq(file, pos, 0), SourceTs: ts * 1000, TxID: gtid,
		Origin: cdc.Origin{Topic: "my.shop.orders", Partition: part, Offset: off}}
}

func TestFindBinlogRestartGolden(t *testing.T) {
	const u, c, d, r = cdc.OpUpdate, cdc.OpCreate, cdc.OpDelete, cdc.OpRead
	pg := &cdc.Event{Op: u, Key: "a", Seq: cdc.PostgresSeq(1, 1), Origin: cdc.Origin{Topic: "pg", Offset: 9}}
	pgHigh := &cdc.Event{Op: u, Key: "a", Seq: cdc.PostgresSeq(9, 9), Origin: cdc.Origin{Topic: "pg", Offset: 1}}
	trunc := bl("a", cdc.OpTruncate, 1, 10, 0, 5, 60, "")
	repair := bl("a", r, 1, 10, 0, 0, 70, "")
	repair.Origin.Topic = "my.shop.orders#reconcile-1"
	cases := []struct {
		name        string
		events      []*cdc.Event
		change, abv int // indexes into events; -1: no restart
	}{
		{"in order", []*cdc.Event{bl("a", c, 42, 100, 0, 1, 10, ""), bl("a", u, 42, 200, 0, 2, 11, ""), bl("a", d, 43, 4, 0, 3, 12, "")}, -1, -1},
		{"given out of offset order (a backfill re-read)", []*cdc.Event{bl("a", u, 42, 200, 0, 2, 11, ""), bl("a", c, 42, 100, 0, 1, 10, "")}, -1, -1},
		{"a redelivery after a connector restart", []*cdc.Event{bl("a", c, 42, 100, 0, 1, 10, "s:1"), bl("a", u, 42, 200, 0, 2, 11, "s:2"),
			bl("a", c, 42, 100, 0, 3, 10, "s:1"), bl("a", u, 42, 200, 0, 4, 11, "s:2"), bl("a", u, 42, 300, 0, 5, 12, "s:3")}, -1, -1},
		{"one record seen twice (log and batch)", []*cdc.Event{bl("a", u, 42, 200, 0, 2, 11, ""), bl("a", u, 42, 200, 0, 2, 11, "")}, -1, -1},
		{"RESET MASTER: an update at mysql-bin.000001", []*cdc.Event{bl("a", c, 42, 100, 0, 1, 10, ""), bl("a", u, 42, 2000, 0, 2, 11, ""),
			bl("a", u, 1, 500, 0, 7, 20, "")}, 2, 1},
		{"a delete after a replica switch", []*cdc.Event{bl("b", c, 42, 2000, 1, 4, 11, ""), bl("b", d, 3, 900, 1, 9, 20, "")}, 1, 0},
		{"a new server's source snapshot read", []*cdc.Event{bl("a", u, 42, 2000, 0, 2, 11, ""), bl("a", r, 1, 157, 0, 3, 0, "")}, 1, 0},
		{"the same position reused by another change", []*cdc.Event{bl("a", u, 1, 500, 0, 2, 11, ""), bl("a", d, 1, 500, 0, 8, 20, "")}, 1, 0},
		{"the same position and op, another GTID", []*cdc.Event{bl("a", u, 1, 500, 0, 2, 11, "s:7"), bl("a", u, 1, 500, 0, 8, 11, "s:1")}, 1, 0},
		{"late in another partition (a repartitioned topic)", []*cdc.Event{bl("a", u, 42, 2000, 0, 2, 11, ""), bl("a", u, 42, 1000, 1, 3, 10, "")}, -1, -1},
		{"other keys", []*cdc.Event{bl("a", u, 42, 2000, 0, 2, 11, ""), bl("b", u, 1, 500, 0, 3, 20, "")}, -1, -1},
		{"another topic", []*cdc.Event{bl("a", u, 42, 2000, 0, 2, 11, ""), func() *cdc.Event { e := bl("a", u, 1, 500, 0, 3, 20, ""); e.Origin.Topic = "x"; return e }()}, -1, -1},
		{"lakemirror's own records and truncates", []*cdc.Event{bl("a", u, 42, 2000, 0, 2, 11, ""), repair, trunc}, -1, -1},
		{"other connectors' positions", []*cdc.Event{pgHigh, pg}, -1, -1},
	}
	for _, tc := range cases {
		got, ok := FindBinlogRestart(tc.events)
		if tc.change < 0 {
			if ok {
				t.Errorf("%s: restart %v above %v, want none", tc.name, got.Change, got.Above)
			}
			continue
		}
		if !ok || got.Change != tc.events[tc.change] || got.Above != tc.events[tc.abv] {
			t.Errorf("%s: got %v (%+v above %+v), want event %d above event %d", tc.name, ok, got.Change, got.Above, tc.change, tc.abv)
		}
	}
}

// Property: a single binlog delivered with redeliveries (a connector
// restarted from an earlier offset), late records in other partitions and
// given in any order is never a restart; the same stream with one change
// of the restarted binlog (positions from mysql-bin.000001, a commit time
// after every earlier change) delivered into a partition that held a
// higher position of its key is always found, that change reported.
func TestFindBinlogRestartProperty(t *testing.T) {
	ops := []cdc.Op{cdc.OpCreate, cdc.OpUpdate, cdc.OpDelete}
	for seed := range uint64(500) {
		rr := rand.New(rand.NewPCG(seed, 7))
		nKeys := 1 + rr.IntN(4)
		var stream []*cdc.Event
		off := map[int32]int64{}
		file, pos, ts := uint64(40+rr.IntN(5)), uint64(4), int64(1000)
		keyPart := map[string]int32{}
		for i := range 10 + rr.IntN(30) {
			k := fmt.Sprintf("k%d", rr.IntN(nKeys))
			if rr.IntN(8) == 0 {
				file, pos = file+1, 4
			}
			pos += uint64(1 + rr.IntN(300))
			ts += int64(rr.IntN(3))
			p, ok := keyPart[k]
			if !ok {
				p = int32(rr.IntN(3))
				keyPart[k] = p
			}
			if rr.IntN(10) == 0 {
				p = 3 // late: delivered through another partition
			}
			off[p] += int64(1 + rr.IntN(3))
			e := bl(k, ops[rr.IntN(len(ops))], file, pos, p, off[p], ts, fmt.Sprintf("s:%d", i))
			stream = append(stream, e)
			if rr.IntN(6) == 0 { // redeliveries from an earlier record on
				from := rr.IntN(len(stream))
				for _, o := range stream[from:] {
					if o.Origin.Partition != p {
						continue
					}
					off[p]++
					cp := *o
					cp.Origin.Offset = off[p]
					stream = append(stream, &cp)
				}
			}
		}
		shuffled := append([]*cdc.Event(nil), stream...)
		rr.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		if got, ok := FindBinlogRestart(shuffled); ok {
			t.Fatalf("seed %d: one binlog reported restarted: %+v above %+v", seed, got.Change, got.Above)
		}
		// the restart: a change of a key below a position of the key
		// delivered before it in the same partition
		victim := stream[rr.IntN(len(stream))]
		p := victim.Origin.Partition
		off[p]++
		restarted := bl(string(victim.Key), ops[rr.IntN(len(ops))], 1, uint64(4+rr.IntN(int(victim.Seq.Words()[1]))), p, off[p], ts+1, "t:1")
		if victim.Seq.Words()[0] == 1 { // never: files start at 40
			t.Fatal("seed", seed)
		}
		all := append(shuffled, restarted)
		rr.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
		got, ok := FindBinlogRestart(all)
		if !ok || got.Change != restarted || got.Above.Key != victim.Key || got.Above.Seq <= restarted.Seq || got.Above.Origin.Partition != p {
			t.Fatalf("seed %d: restart not found: %v %+v above %+v", seed, ok, got.Change, got.Above)
		}
	}
}

// FindBinlogRestarts reports the first restart of every key, by key.
func TestFindBinlogRestartsPerKey(t *testing.T) {
	a1, a2, a3 := bl("a", cdc.OpCreate, 42, 100, 0, 1, 10, ""), bl("a", cdc.OpUpdate, 1, 50, 0, 2, 20, ""), bl("a", cdc.OpUpdate, 1, 40, 0, 3, 21, "")
	b1, b2 := bl("b", cdc.OpCreate, 42, 200, 0, 4, 11, ""), bl("b", cdc.OpDelete, 2, 9, 0, 5, 22, "")
	c1, c2 := bl("c", cdc.OpCreate, 42, 300, 0, 6, 12, ""), bl("c", cdc.OpUpdate, 42, 400, 0, 7, 13, "")
	got := FindBinlogRestarts([]*cdc.Event{c2, b2, a3, a1, c1, b1, a2})
	if len(got) != 2 || got[0].Change != a2 || got[0].Above != a1 || got[1].Change != b2 || got[1].Above != b1 {
		t.Fatalf("got %+v", got)
	}
}
