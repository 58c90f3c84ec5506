package activities

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/validation"
	"github.com/lakemirror/lakemirror/internal/sample"
	"github.com/lakemirror/lakemirror/internal/validate"
	"github.com/lakemirror/lakemirror/schemas"
)

// A key purged from the mirror keeps its history, also when a worker that
// rebuilt its state from the tables loads the past changes from bronze
// while the key is purged and later rebuilds the key (re-created, then a
// late change): the bronze scan is history, not new changes, so the purge
// refuses none of it (a breaker's run lost the pre-purge versions).
func TestPurgedKeyKeepsHistoryThroughRebuilds(t *testing.T) {
	// the restarted worker reads past changes from bronze for the late
	// keys alone ("keys") or all at once ("all")
	for _, mode := range []string{"keys", "all"} {
		t.Run(mode, func(t *testing.T) {
			testPastRead = mode
			defer func() { testPastRead = "" }()
			purgedKeyKeepsHistory(t, mode == "all")
		})
	}
}

func purgedKeyKeepsHistory(t *testing.T, all bool) {
	ctx := context.Background()
	cat := mustCatalog(t)
	spec := TableSpec{Table: "shop.orders", Topic: "shop.public.orders", KeyColumns: []string{"order_id"}, MaxQuarantine: 1000}.Defaults()
	newWorker := func() *Activities {
		a := New(cat, nil)
		a.StateDir = t.TempDir()
		return a
	}
	a := newWorker()
	var offset, seq int64
	apply := func(msgs ...sample.Message) ApplyResult {
		t.Helper()
		st, name, err := a.state(spec)
		if err != nil {
			t.Fatal(err)
		}
		recs := make([]schemas.Record, len(msgs))
		for j, m := range msgs {
			recs[j] = schemas.Record{Topic: spec.Topic, Offset: offset + int64(j), Key: m.Key, Value: m.Value}
		}
		seq++
		b := lake.Batch{ID: fmt.Sprintf("b%d", seq), Seq: seq, Topic: spec.Topic,
			Ranges: []lake.Range{{From: offset, To: offset + int64(len(msgs))}}, EndOffsets: lake.Offsets{0: offset + int64(len(msgs))}}
		offset += int64(len(msgs))
		stage := ""
		st.mu.Lock()
		defer st.mu.Unlock()
		res, _, err := a.applyRecords(ctx, st, name, spec, b, recs, nil, "", &stage)
		if err == nil && res.History.Pending > 0 {
			_, err = a.rebuildPending(ctx, st, name)
		}
		if err != nil {
			t.Fatalf("batch %d (%s): %v", seq, stage, err)
		}
		return res
	}
	pg := sample.PostgresChange
	apply(pg("c", "null", `{"order_id":1,"status":"new"}`, 100), pg("u", `{"order_id":1,"status":"new"}`, `{"order_id":1,"status":"paid"}`, 150),
		pg("d", `{"order_id":1}`, "null", 200), pg("c", "null", `{"order_id":2,"status":"new"}`, 300), pg("u", `{"order_id":2,"status":"new"}`, `{"order_id":2,"status":"paid"}`, 320))
	if res, err := a.Maintain(ctx, MaintenanceRequest{Spec: spec, Job: JobPurge, Retention: 24 * time.Hour, RetentionFloor: time.Hour}); err != nil || res.Purge.Purged != 1 {
		t.Fatalf("purge: %+v, %v", res.Purge, err)
	}
	// the validation's replay check passes on the purged mirror: key 1 has
	// no row, and its purge covers its last change
	name, _ := lake.ParseTableName(spec.Table)
	bronze, err := validation.ReadBronzeAudit(ctx, cat, name, spec.Topic)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := validation.ReadMirrorReplayState(ctx, cat, name)
	if err != nil {
		t.Fatal(err)
	}
	if r := validate.Replay(bronze.Records, rs.Rows, rs.Purges, rs.Pending); r.Verdict != validate.Pass || len(rs.Rows) != 1 || len(rs.Purges.Keys) != 1 {
		t.Fatalf("replay check after the purge: %s (%s), %d rows, purged %v", r.Verdict, r.Details(), len(rs.Rows), rs.Purges.Keys)
	}
	a = newWorker() // a restart: the state is rebuilt from the tables
	// a late change of key 2 loads the past changes from bronze while key 1 is purged
	if res := apply(pg("u", `{"order_id":2,"status":"new"}`, `{"order_id":2,"status":"held"}`, 310)); res.History.Pending != 1 {
		t.Fatalf("the late change left %d keys pending, want 1", res.History.Pending)
	}
	// key 1 comes back, then a late change rebuilds it from the loaded past
	apply(pg("c", "null", `{"order_id":1,"status":"again"}`, 400))
	apply(pg("u", `{"order_id":1,"status":"again"}`, `{"order_id":1,"status":"later"}`, 500))
	// all: the log holds every past change now, the batch weaves the key
	// inline; keys: key 1's past is not loaded, RebuildKeys reads it
	wantPending, wantWoven := 1, 0
	if all {
		wantPending, wantWoven = 0, 1
	}
	if res := apply(pg("u", `{"order_id":1,"status":"again"}`, `{"order_id":1,"status":"between"}`, 450)); res.History.Pending != wantPending || res.History.Woven != wantWoven {
		t.Fatalf("the late change of key 1 left %d keys pending and wove %d, want %d and %d", res.History.Pending, res.History.Woven, wantPending, wantWoven)
	}
	name = lake.TableName{Namespace: "shop", Name: "orders"}
	got := tableText(t, cat, name, true, "order_id", "status", lake.ColSeq, lake.ColValidToSeq, lake.ColIsCurrent)
	s := func(lsn uint64) string { return cdc.SeqOf(lsn, lsn).Hex() }
	want := strings.Join([]string{
		fmt.Sprintf("1 new %s %s false", s(100), s(150)),
		fmt.Sprintf("1 paid %s %s false", s(150), s(200)),
		fmt.Sprintf("1 again %s %s false", s(400), s(450)),
		fmt.Sprintf("1 between %s %s false", s(450), s(500)),
		fmt.Sprintf("1 later %s <nil> true", s(500)),
		fmt.Sprintf("2 new %s %s false", s(300), s(310)),
		fmt.Sprintf("2 held %s %s false", s(310), s(320)),
		fmt.Sprintf("2 paid %s <nil> true", s(320)),
	}, "\n")
	if got != want {
		t.Fatalf("history\ngot:\n%s\nwant:\n%s", got, want)
	}
}
