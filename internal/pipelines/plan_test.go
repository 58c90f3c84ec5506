package pipelines

import (
	"bytes"
	"reflect"
	"testing"
	"time"
)

func pipe(table, topic string) Pipeline {
	p := Defaults
	p.Table, p.Topic, p.Key = table, topic, []string{"id"}
	return p
}

// Compute: every kind of step, from desired and observed pipelines alone.
func TestComputePlan(t *testing.T) {
	same := pipe("shop.same", "srv.shop.same")
	batch := pipe("shop.batch", "srv.shop.batch")
	batchOld := batch
	batchOld.Settings.MaxEvents, batchOld.Settings.MaxWait = 1000, time.Second
	sched := pipe("shop.sched", "srv.shop.sched")
	sched.Maintenance.CompactEvery, sched.Maintenance.PurgeEvery, sched.Maintenance.Retention = 15*time.Minute, 0, 10*24*time.Hour
	schedOld := pipe("shop.sched", "srv.shop.sched")
	schedOld.Maintenance.Retention = 40 * 24 * time.Hour // ignored: the file schedules no purge
	rekey := pipe("shop.rekey", "srv.shop.rekey")
	rekey.Key, rekey.Settings.MaxEvents = []string{"tenant", "id"}, 10
	rekeyOld := pipe("Shop.Rekey", "srv.shop.rekey")
	fresh := pipe("shop.fresh", "srv.shop.fresh")
	restarted := pipe("shop.restarted", "srv.shop.restarted")
	moved := pipe("shop.moved", "srv2.shop.moved")
	otherKey := pipe("shop.otherkey", "srv.shop.otherkey")
	extra := pipe("old.extra", "srv.old.extra")

	desired := []Pipeline{same, batch, sched, rekey, fresh, restarted, moved, otherKey}
	obs := Observed{
		Running: []Pipeline{extra, same, batchOld, schedOld, rekeyOld},
		Stored: map[string]Stored{
			"shop.restarted": {Topic: "srv.shop.restarted", Key: []string{"id"}},
			"shop.moved":     {Topic: "srv.shop.moved"},
			"shop.otherkey":  {Topic: "srv.shop.otherkey", Key: []string{"key"}},
		},
		LastRun: map[string]string{"shop.restarted": "completed"},
	}
	plan := Compute(desired, obs, true)
	type row struct {
		action  Action
		table   string
		changes []Change
		note    string
	}
	var got []row
	for _, s := range plan.Steps {
		got = append(got, row{s.Action, s.Table, s.Changes, s.Note})
	}
	want := []row{
		{ActionUnchanged, "shop.same", nil, ""},
		{ActionUpdate, "shop.batch", []Change{{"batch_size", "1000", "5000", true}, {"max_wait", "1s", "2s", true}}, ""},
		{ActionUpdate, "shop.sched", []Change{{"maintenance.compact_every", "1h", "15m", true}, {"maintenance.purge_every", "1d", "off", true}}, ""},
		{ActionRefuse, "shop.rekey", []Change{{"key", "id", "tenant,id", false}, {"batch_size", "5000", "10", true}}, "cannot change while its pipeline runs"},
		{ActionCreate, "shop.fresh", nil, ""},
		{ActionCreate, "shop.restarted", nil, "its last run completed; continues from the offsets its tables record"},
		{ActionRefuse, "shop.moved", nil, "its tables hold the records of topic srv.shop.moved, not srv2.shop.moved: their offsets are srv.shop.moved's; give topic srv.shop.moved, or mirror srv2.shop.moved into a new table name"},
		{ActionRefuse, "shop.otherkey", nil, "its mirror was created with key columns key, not id: give key key (a different key needs a new table)"},
		{ActionStop, "old.extra", nil, ""},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("plan:\n%+v\nwant\n%+v", got, want)
	}
	if c := plan.Counts(); c[ActionCreate] != 2 || c[ActionUpdate] != 2 || c[ActionRefuse] != 3 || c[ActionStop] != 1 || c[ActionUnchanged] != 1 {
		t.Fatalf("counts %v", c)
	}
	if len(plan.Refused()) != 3 || !plan.HasChanges() {
		t.Fatalf("refused %d, changes %v", len(plan.Refused()), plan.HasChanges())
	}
	// without prune, the extra pipeline is left running and named
	plan = Compute(desired, obs, false)
	if n := plan.Counts()[ActionStop]; n != 0 || !reflect.DeepEqual(plan.NotInFile, []string{"old.extra"}) {
		t.Fatalf("without prune: %d stops, not in file %v", n, plan.NotInFile)
	}
}

// The same pipelines observed as desired: nothing to do, and the plan says
// so in one line.
func TestPlanNoChanges(t *testing.T) {
	var desired []Pipeline
	for _, n := range []string{"a", "b", "c"} {
		desired = append(desired, pipe("shop."+n, "srv.shop."+n))
	}
	plan := Compute(desired, Observed{Running: append([]Pipeline(nil), desired...)}, true)
	if plan.HasChanges() {
		t.Fatalf("changes: %+v", plan.Steps)
	}
	var buf bytes.Buffer
	plan.Write(&buf)
	if buf.String() != "no changes: 3 pipelines unchanged\n" {
		t.Fatalf("%q", buf.String())
	}
}

// Write prints creates, updates, refusals and stops, then the counts.
func TestPlanWrite(t *testing.T) {
	a, b, c, d := pipe("shop.a", "srv.shop.a"), pipe("shop.b", "srv.shop.b"), pipe("shop.c", "srv.shop.c"), pipe("shop.d", "srv.shop.d")
	bOld := b
	bOld.Settings.MaxBatchEvents, bOld.Maintenance.ExpireEvery = 20000, 0
	cOld := c
	cOld.Bronze, cOld.Columns = false, `[{"name":"id"}]`
	c.Definition = "defs/c.json"
	c.Columns = `[{"name":"id"},{"name":"v"}]`
	plan := Compute([]Pipeline{a, b, c, d}, Observed{Running: []Pipeline{bOld, cOld, d, pipe("x.gone", "srv.x.gone")}}, true)
	var buf bytes.Buffer
	plan.Write(&buf)
	want := `+ create shop.a ← srv.shop.a
~ update shop.b
    max_batch_size: 20000 → 0
    maintenance.expire_every: off → 1d
! refuse shop.c: cannot change while its pipeline runs
    bronze: false → true (cannot change while it runs)
    definition: other declared columns → the columns of defs/c.json (cannot change while it runs)
- stop x.gone ← srv.x.gone (not in the file)
= 1 unchanged
Plan: 1 to create, 1 to update, 1 to stop, 1 unchanged, 1 refused.
`
	if buf.String() != want {
		t.Fatalf("plan:\n%s\nwant:\n%s", buf.String(), want)
	}
}
