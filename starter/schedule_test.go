package main

import (
	"context"
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
	created, err := createDefaultSchedules(ctx, sc, spec)
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
	again, err := createDefaultSchedules(ctx, sc, spec)
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
