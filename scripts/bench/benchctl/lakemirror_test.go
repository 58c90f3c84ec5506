package main

import (
	"encoding/json"
	"testing"
	"time"
)

// TestFirstBatchReadings: the watcher of phase 2's start records the
// first reading at which an activity had started, the state was loaded or
// built and the first batch was recorded, the CPU at the batch, and its
// result gives the waits in the queue, the first batch's apply time and
// where the state came from, as differences from the readings at the
// resume.
func TestFirstBatchReadings(t *testing.T) {
	base := parseProm(`lakemirror_batch_duration_seconds_count{table="bench.orders"} 600
lakemirror_batch_duration_seconds_sum{table="bench.orders"} 900.5
temporal_activity_schedule_to_start_latency_seconds_count{activity_type="ApplyBatch"} 3
temporal_activity_schedule_to_start_latency_seconds_sum{activity_type="ApplyBatch"} 0.25
`)
	t0 := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	f := &firstBatch{base: base, t0: t0, activityAt: -1, stateAt: -1, batchAt: -1}
	cpu := func() float64 { return 123.4 }
	if f.see(base, 200*time.Millisecond, cpu) || f.activityAt != -1 || f.stateAt != -1 {
		t.Fatalf("no change seen as one: %+v", f)
	}
	started := parseProm(`lakemirror_batch_duration_seconds_count{table="bench.orders"} 600
lakemirror_batch_duration_seconds_sum{table="bench.orders"} 900.5
temporal_activity_schedule_to_start_latency_seconds_count{activity_type="ApplyBatch"} 3
temporal_activity_schedule_to_start_latency_seconds_count{activity_type="PlanBatch"} 1
temporal_activity_schedule_to_start_latency_seconds_sum{activity_type="ApplyBatch"} 0.25
temporal_activity_schedule_to_start_latency_seconds_sum{activity_type="PlanBatch"} 61.5
`)
	if f.see(started, 62*time.Second, cpu) || f.activityAt != 62*time.Second || f.stateAt != -1 {
		t.Fatalf("activity start: %+v", f)
	}
	built := started
	built[`lakemirror_state_rebuilds_total{reason="new",table="bench.orders"}`] = 1
	if f.see(built, 95*time.Second, cpu) || f.stateAt != 95*time.Second {
		t.Fatalf("state built: %+v", f)
	}
	first := parseProm(`lakemirror_batch_duration_seconds_count{table="bench.orders"} 601
lakemirror_batch_duration_seconds_sum{table="bench.orders"} 902.75
lakemirror_state_rebuilds_total{reason="new",table="bench.orders"} 1
temporal_activity_schedule_to_start_latency_seconds_count{activity_type="ApplyBatch"} 4
temporal_activity_schedule_to_start_latency_seconds_count{activity_type="PlanBatch"} 1
temporal_activity_schedule_to_start_latency_seconds_sum{activity_type="ApplyBatch"} 0.5
temporal_activity_schedule_to_start_latency_seconds_sum{activity_type="PlanBatch"} 61.5
`)
	if !f.see(first, 97200*time.Millisecond, cpu) || f.batchAt != 97200*time.Millisecond || f.cpuAtBatch != 123.4 ||
		f.activityAt != 62*time.Second || f.stateAt != 95*time.Second {
		t.Fatalf("first batch: %+v", f)
	}
	got := f.result(first, t0.Add(300*time.Millisecond))
	b, _ := json.Marshal(got)
	want := `{"first_batch_apply_s":2.25,"resume_call_s":0.3,"resume_to_first_activity_s":62,"resume_to_first_batch_s":97.2,` +
		`"resume_to_state_ready_s":95,"schedule_to_start_before_first_batch":{"ApplyBatch_count":1,"ApplyBatch_sum":0.25,` +
		`"PlanBatch_count":1,"PlanBatch_sum":61.5},"state_builds_by_reason":{"new":1},"state_loads_from_sidecar":0}`
	if string(b) != want {
		t.Errorf("result\n got %s\nwant %s", b, want)
	}
	none := &firstBatch{activityAt: -1, stateAt: -1, batchAt: -1}
	if b, _ := json.Marshal(none.result(first, t0)); string(b) != `{"seen":false}` {
		t.Errorf("unseen: %s", b)
	}
}

// TestIndexState: the index's RAM and disk by medium, the chain log and
// the budget by scope, in MiB, from the worker's metrics.
func TestIndexState(t *testing.T) {
	m := parseProm(`lakemirror_state_index_bytes{medium="ram",table="bench.orders"} 1.34217728e+08
lakemirror_state_index_bytes{medium="disk",table="bench.orders"} 7.8643200e+08
lakemirror_state_log_bytes{table="bench.orders"} 2097152
lakemirror_state_index_budget_bytes{scope="worker"} 1.073741824e+09
lakemirror_state_index_budget_bytes{scope="table"} 2.68435456e+08
`)
	b, _ := json.Marshal(indexState(m))
	want := `{"budget_table_mib":256,"budget_worker_mib":1024,"index_disk_mib":750,"index_ram_mib":128,"log_mib":2}`
	if string(b) != want {
		t.Errorf("got %s\nwant %s", b, want)
	}
}
