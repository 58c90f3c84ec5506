package main

import (
	"context"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/devstack"
	"github.com/lakemirror/lakemirror/worker/runner"
	"github.com/lakemirror/lakemirror/workflows"
)

// `start` creates the table's three maintenance schedules at their default
// intervals, and starting again (or createDefaultSchedules again) leaves
// existing schedules as the operator set them.
func TestStartCreatesDefaultSchedules(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d, err := devstack.StartStack(ctx, devstack.StackOptions{UIPort: -1, SearchAttributes: workflows.SearchAttributeTypes})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Stop()
	c, err := runner.Dial(d.Settings, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	spec := activities.TableSpec{Table: "sched.orders", Topic: "sched.public.orders", KeyColumns: []string{"id"}}
	sc := c.ScheduleClient()
	created, err := createDefaultSchedules(ctx, sc, spec, 0)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, job := range []string{activities.JobCompact, activities.JobExpire, activities.JobPurge} {
		want = append(want, workflows.ScheduleID(spec.Table, job))
	}
	if !slices.Equal(created, want) {
		t.Fatalf("created %v, want %v", created, want)
	}
	every := func(job string) time.Duration {
		desc, err := sc.GetHandle(ctx, workflows.ScheduleID(spec.Table, job)).Describe(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return desc.Schedule.Spec.Intervals[0].Every
	}
	for job, d := range defaultEvery {
		if got := every(job); got != d {
			t.Errorf("%s every %s, want %s", job, got, d)
		}
	}
	// an operator's own interval survives a second start
	if err := upsertSchedule(ctx, sc, workflows.ScheduleID(spec.Table, activities.JobCompact), 15*time.Minute, defaultMaint.request(spec, activities.JobCompact)); err != nil {
		t.Fatal(err)
	}
	again, err := createDefaultSchedules(ctx, sc, spec, 0)
	if err != nil || len(again) != 0 {
		t.Fatalf("second run created %v (%v), want none", again, err)
	}
	if got := every(activities.JobCompact); got != 15*time.Minute {
		t.Fatalf("compaction every %s after a second start, want the operator's 15m", got)
	}
	for _, id := range want {
		_ = sc.GetHandle(ctx, id).Delete(ctx)
	}
}

// A reconcile schedule's request: the table's own source and source
// table unless given, reconcile's default parameters, the repair flag;
// a DSN, given or the table's own, is refused without being repeated, as
// is a table with no source or source table.
func TestScheduledReconcile(t *testing.T) {
	spec := activities.TableSpec{Table: "shop.orders", Topic: "shop.public.orders", KeyColumns: []string{"order_id"}, Source: "shopdb", SourceTable: "public.orders"}
	want := activities.ReconcileRequest{Spec: spec, Source: "shopdb", SourceTable: "public.orders", Chunk: 1000, Pause: 100 * time.Millisecond,
		SettleFloor: 30 * time.Second, SettleCeiling: time.Hour, CatchUpTimeout: time.Hour}
	if got, err := scheduledReconcile(spec, "", "", false); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("the table's own source: %+v, %v\nwant %+v", got, err, want)
	}
	want.Source, want.SourceTable, want.Repair = "replica", "shop.orders_v2", true
	if got, err := scheduledReconcile(spec, "replica", "shop.orders_v2", true); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("a given source: %+v, %v\nwant %+v", got, err, want)
	}
	refused := "--reconcile-source is a DSN: a schedule stores its request, credentials included; give a source name the worker maps to the DSN (worker -sources name=dsn)"
	bare := activities.TableSpec{Table: "shop.orders", Topic: "shop.public.orders", KeyColumns: []string{"order_id"}}
	dsnSpec := spec
	dsnSpec.Source = "postgres://repl:secret@db/shop"
	for _, c := range []struct {
		spec          activities.TableSpec
		src, srcTable string
		want          string
	}{
		{spec, "postgres://repl:secret@db/shop", "", refused},
		{spec, "host=db user=repl password=secret", "", refused},
		{spec, "repl:secret@tcp(db:3306)/shop", "", refused},
		{spec, "repl:secret@/shop", "", refused},
		{dsnSpec, "", "", "shop.orders's source (start --source) is a DSN, which a schedule would store: give --reconcile-source NAME, a name the worker maps to the DSN (worker -sources name=dsn)"},
		{bare, "", "public.orders", "shop.orders was started without --source: give --reconcile-source NAME, a source database the worker maps to a DSN (-sources name=dsn)"},
		{bare, "shopdb", "", "shop.orders was started without --source-table: give --reconcile-source-table SCHEMA.TABLE"},
	} {
		_, err := scheduledReconcile(c.spec, c.src, c.srcTable, false)
		if err == nil || err.Error() != c.want || exitCode(err) != exitUsage {
			t.Errorf("source %q, table %q of %+v: %v (exit %d), want %q (exit 2)", c.src, c.srcTable, c.spec, err, exitCode(err), c.want)
		}
	}
}

// schedule's reconcile flags are checked before anything is dialled: a
// DSN as --reconcile-source (exit 2, the DSN not repeated), and a
// reconcile setting without --reconcile-every.
func TestScheduleReconcileUsage(t *testing.T) {
	offline := []string{"--temporal-address", "127.0.0.1:1", "--kafka-brokers", "127.0.0.1:1", "schedule", "shop.orders"}
	out, errw, code := applyCLI(append(offline, "--reconcile-every", "6h", "--reconcile-source", "postgres://repl:secret@db/shop")...)
	if want := "starter: --reconcile-source is a DSN: a schedule stores its request, credentials included; give a source name the worker maps to the DSN (worker -sources name=dsn)\n"; code != exitUsage || out != "" || errw != want {
		t.Fatalf("a DSN: exit %d, stdout %q, stderr %q; want exit 2, %q", code, out, errw, want)
	}
	for _, fl := range [][]string{{"--reconcile-source", "shopdb"}, {"--reconcile-source-table", "public.orders"}, {"--reconcile-repair"}} {
		out, errw, code := applyCLI(append(offline, fl...)...)
		if want := "starter: " + fl[0] + " is a setting of the reconcile schedule: give it with --reconcile-every\n"; code != exitUsage || out != "" || errw != want {
			t.Errorf("%v alone: exit %d, stdout %q, stderr %q; want exit 2, %q", fl, code, out, errw, want)
		}
	}
}
