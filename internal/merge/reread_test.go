package merge

import (
	"fmt"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// pgev is ev at a streamed PostgreSQL position (lsn, lsn), or (0, lsn)
// for a source snapshot read, with the source time lsn ms.
func pgev(op cdc.Op, lsn uint64, status string) *cdc.Event {
	e := ev(op, lsn, 1, status, 100)
	if op != cdc.OpRead {
		e.Seq = cdc.PostgresSeq(lsn, lsn)
	}
	e.SourceTs = int64(lsn) * 1000
	e.TxID = fmt.Sprint(lsn)
	return e
}

// intx is e in source transaction tx.
func intx(e *cdc.Event, tx string) *cdc.Event { e.TxID = tx; return e }

func TestReplayRereads(t *testing.T) {
	read, create, update, del := cdc.OpRead, cdc.OpCreate, cdc.OpUpdate, cdc.OpDelete
	cases := []struct {
		name   string
		events []*cdc.Event
		want   string
	}{
		{"re-read after a create and an update", []*cdc.Event{
			pgev(create, 100, "a"), pgev(update, 120, "b"), pgev(read, 500, "b")},
			"a 1.00 [100..120)\nb 1.00 [120..now)"},
		{"re-read after a create alone", []*cdc.Event{
			pgev(create, 100, "a"), pgev(read, 500, "a")},
			"a 1.00 [100..now)"},
		{"read before every change opens the first version", []*cdc.Event{
			pgev(read, 300, "a"), pgev(update, 400, "b")},
			"a 1.00 [300..400)\nb 1.00 [400..now)"},
		{"read while an update written before it was in flight", []*cdc.Event{
			pgev(read, 300, "a"), pgev(update, 290, "b")},
			"a 1.00 [300..290)\nb 1.00 [290..now)"},
		{"read while a delete was in flight", []*cdc.Event{
			pgev(read, 300, "a"), pgev(del, 290, "a")},
			"a 1.00 [300..290)"},
		{"re-read after an earlier read and an update", []*cdc.Event{
			pgev(read, 300, "a"), pgev(update, 400, "b"), pgev(read, 500, "b")},
			"a 1.00 [300..400)\nb 1.00 [400..now)"},
		{"re-read after an earlier read and an in-flight update", []*cdc.Event{
			pgev(read, 300, "a"), pgev(update, 290, "b"), pgev(read, 500, "b")},
			"a 1.00 [300..290)\nb 1.00 [290..now)"},
		{"re-read after two updates", []*cdc.Event{
			pgev(update, 100, "a"), pgev(update, 120, "b"), pgev(read, 500, "b")},
			"a 1.00 [100..120)\nb 1.00 [120..now)"},
		{"read while a transaction updating the row twice was in flight", []*cdc.Event{
			pgev(read, 300, "a"), intx(pgev(update, 280, "b"), "t1"), intx(pgev(update, 290, "c"), "t1")},
			"a 1.00 [300..280)\nb 1.00 [280..290)\nc 1.00 [290..now)"},
		{"re-read after a transaction that created the row", []*cdc.Event{
			intx(pgev(create, 280, "b"), "t1"), intx(pgev(update, 290, "c"), "t1"), pgev(read, 300, "c")},
			"b 1.00 [280..290)\nc 1.00 [290..now)"},
		{"a read between changes keeps the later ones", []*cdc.Event{
			pgev(create, 100, "a"), pgev(read, 200, "a"), pgev(update, 300, "b")},
			"a 1.00 [100..300)\nb 1.00 [300..now)"},
		// a table truncate written below a read came before it: the read
		// goes after the truncate, and only later changes make it a re-read
		{"read after a truncate opens a version after it", []*cdc.Event{
			pgev(read, 140, "a"), pgev(read, 200, "b"), pgev(cdc.OpTruncate, 150, "")},
			"a 1.00 [140..150)\nb 1.00 [200..now)"},
		{"read after a truncate and a re-insert re-reads it", []*cdc.Event{
			pgev(read, 140, "a"), pgev(read, 200, "b"), pgev(cdc.OpTruncate, 150, ""), pgev(create, 160, "b")},
			"a 1.00 [140..150)\nb 1.00 [160..now)"},
		{"an earlier read before the truncate does not make a re-read", []*cdc.Event{
			pgev(read, 140, "a"), pgev(read, 200, "b"), pgev(cdc.OpTruncate, 150, ""), pgev(update, 170, "c")},
			"a 1.00 [140..150)\nb 1.00 [200..170)\nc 1.00 [170..now)"},
	}
	for _, c := range cases {
		if got := hist(replayAll(c.events, HistoryOptions{})); got != c.want {
			t.Errorf("%s:\n%s\nwant:\n%s", c.name, got, c.want)
		}
	}
	// positions other than PostgreSQL's keep the read where it sorts
	mysql := []*cdc.Event{ev(cdc.OpRead, 1, 1, "a", 100), ev(cdc.OpCreate, 2, 1, "b", 100)}
	for i, e := range mysql {
		e.Seq = cdc.MySQLSeq(0, uint64(i+1), 0)
	}
	if got, want := hist(replayAll(mysql, HistoryOptions{})), "a 1.00 [0..0)\nb 1.00 [0..now)"; got != want {
		t.Errorf("MySQL positions:\n%s\nwant:\n%s", got, want)
	}
}

// Extending a read's version by the batch's changes gives what replaying
// all changes gives, except where NeedsReplayFromStart says so.
func TestReplayRereadExtends(t *testing.T) {
	first, _ := Replay(nil, []*cdc.Event{pgev(cdc.OpRead, 300, "a")}, HistoryOptions{})
	prev := first[0]
	ext, replaces := Replay(&prev, []*cdc.Event{pgev(cdc.OpRead, 500, "b"), pgev(cdc.OpUpdate, 400, "b")}, HistoryOptions{})
	if got, want := hist(ext), "a 1.00 [300..400)\nb 1.00 [400..now)"; got != want || !replaces {
		t.Errorf("extended (replaces %v):\n%s\nwant:\n%s", replaces, got, want)
	}
	if NeedsReplayFromStart(prev.Seq, []*cdc.Event{pgev(cdc.OpUpdate, 400, "b")}) {
		t.Error("an update written after the read needs no replay from the start")
	}
	if !NeedsReplayFromStart(prev.Seq, []*cdc.Event{pgev(cdc.OpUpdate, 400, "b"), pgev(cdc.OpUpdate, 290, "c")}) {
		t.Error("an update written before the read needs a replay from the start")
	}
	if NeedsReplayFromStart(cdc.PostgresSeq(100, 100), []*cdc.Event{pgev(cdc.OpUpdate, 90, "b")}) {
		t.Error("a version opened by a streamed change needs no replay from the start")
	}
}
