package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/sample"
	"github.com/lakemirror/lakemirror/worker/runner"
	"github.com/lakemirror/lakemirror/workflows"
)

// survivor measures what a surviving worker does after a peer is killed
// (issue 34 item 8: on e06dbaf the survivor refused new tables for about
// 72 s, counting the dead peer among the live workers for its share).
// Each round runs on a fresh stack: worker A takes the first half of
// -tables tables; worker B, started then, the second half (A holds its
// share, ceil(tables/2), and refuses more); B is killed with SIGKILL; at
// once -new tables start (their records already in Kafka) and one record
// goes to every table B held. Measured from the kill: each new table's
// first batch applied (A must take the claims although it then holds more
// than its share of two workers: the dead peer must no longer count), and
// each orphaned table's new record applied (its hand-over: an idle table
// notices its dead owner through its plan's heartbeat timeout, up to
// 60 s). The new tables' workflow histories are searched for timed-out
// workflow tasks and activities (a task handed to the killed worker's
// poll). Exit status 1 when a table does not get its records within 5
// minutes.
//
//	/tmp/crashsuite survivor [-rounds 3] [-tables 6] [-new 2] [-dir DIR] [-keep]
func survivor(args []string) error {
	fs := flag.NewFlagSet("survivor", flag.ExitOnError)
	rounds := fs.Int("rounds", 3, "rounds (kills)")
	tables := fs.Int("tables", 6, "tables streaming before each kill")
	newTables := fs.Int("new", 2, "tables started right after each kill")
	dir := fs.String("dir", "", "run directory (default: a new temporary one)")
	keep := fs.Bool("keep", false, "keep the run directory")
	_ = fs.Parse(args)
	cleanup, err := runDir(dir, "lakemirror-survivor.", *keep)
	if err != nil {
		return err
	}
	defer cleanup()
	ctx := context.Background()
	var newTimes, orphanTimes []time.Duration
	for round := 1; round <= *rounds; round++ {
		nt, ot, err := survivorRound(ctx, filepath.Join(*dir, fmt.Sprintf("round-%d", round)), round, *tables, *newTables)
		if err != nil {
			return fmt.Errorf("round %d: %w", round, err)
		}
		newTimes, orphanTimes = append(newTimes, nt...), append(orphanTimes, ot...)
	}
	slices.Sort(newTimes)
	slices.Sort(orphanTimes)
	fmt.Printf("new tables on the survivor (kill -> first batch): median %.2f s, max %.2f s, n %d\n",
		median(newTimes).Seconds(), newTimes[len(newTimes)-1].Seconds(), len(newTimes))
	fmt.Printf("orphaned idle tables (kill -> their new record applied): median %.2f s, max %.2f s, n %d\n",
		median(orphanTimes).Seconds(), orphanTimes[len(orphanTimes)-1].Seconds(), len(orphanTimes))
	return nil
}

// survivorRound is one round of survivor on a fresh stack under dir:
// worker A takes the first half of the tables, worker B (started then)
// the second half (A is at its share and refuses), B is killed, and the
// new tables and B's orphaned tables are timed from the kill.
func survivorRound(ctx context.Context, dir string, round, tables, newTables int) (newTimes, orphanTimes []time.Duration, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	cl, err := startCluster(ctx, dir)
	if err != nil {
		return nil, nil, err
	}
	defer cl.stop()
	if err := os.WriteFile(cl.arm, []byte("none\n"), 0o644); err != nil {
		return nil, nil, err
	}
	n := 0 // tables started
	stream := sample.Generate(sample.Options{Seed: 8, Inserts: 20, Updates: 20, Envelope: true})
	startTable := func() (string, error) {
		n++
		spec := activities.TableSpec{Table: fmt.Sprintf("surv.t%02d", n), Topic: fmt.Sprintf("surv.public.t%02d", n),
			KeyColumns: []string{"order_id"}, MaxEvents: 100, MaxWait: 200 * time.Millisecond}
		if err := cl.kc.CreateTopic(ctx, spec.Topic, 1); err != nil {
			return "", err
		}
		recs := make([]*kgo.Record, len(stream.Delivered))
		for i, m := range stream.Delivered {
			recs[i] = &kgo.Record{Topic: spec.Topic, Key: m.Key, Value: m.Value}
		}
		if err := cl.kc.Produce(ctx, recs...); err != nil {
			return "", err
		}
		_, err := cl.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: workflows.WorkflowID(spec.Table), TaskQueue: activities.TaskQueue,
			WorkflowExecutionErrorWhenAlreadyStarted: true}, workflows.TableWorkflowName, workflows.TableInput{Spec: spec})
		return spec.Table, err
	}
	topic := func(t string) string { return strings.Replace(t, "surv.", "surv.public.", 1) }
	var live []string
	// worker A with the first half, then worker B with the rest
	pidB := 0
	for _, half := range []int{tables / 2, tables - tables/2} {
		if pidB, err = cl.startWorker(); err != nil {
			return nil, nil, err
		}
		// up, and seen polling by the other worker's fleet view (cached 5 s)
		if err := cl.awaitUp(pidB, time.Minute); err != nil {
			return nil, nil, err
		}
		time.Sleep(6 * time.Second)
		var these []string
		for range half {
			t, err := startTable()
			if err != nil {
				return nil, nil, err
			}
			these = append(these, t)
		}
		for _, t := range these {
			if _, err := awaitApplied(ctx, cl.c, t, int64(len(stream.Delivered)), 3*time.Minute); err != nil {
				return nil, nil, fmt.Errorf("%s: %w", t, err)
			}
		}
		live = append(live, these...)
	}
	owners := map[string][]string{} // owner queue → tables
	for _, t := range live {
		st, err := tableStatus(ctx, cl.c, t)
		if err != nil {
			return nil, nil, err
		}
		owners[st.Owner] = append(owners[st.Owner], t)
	}
	var victim string
	for q := range owners {
		if pid, err := cl.pidOf(strings.TrimPrefix(q, runner.WorkerQueue(""))); err == nil && pid == pidB {
			victim = q // worker B, the one started last
		}
	}
	if victim == "" || len(owners) != 2 {
		return nil, nil, fmt.Errorf("the tables are not on both workers: %v", owners)
	}
	pid, err := cl.pidOf(strings.TrimPrefix(victim, runner.WorkerQueue("")))
	if err != nil {
		return nil, nil, err
	}
	var counts []string
	for q, ts := range owners {
		counts = append(counts, fmt.Sprintf("%s %d", strings.TrimPrefix(q, runner.WorkerQueue("")), len(ts)))
	}
	slices.Sort(counts)
	fmt.Printf("round %d: %d tables (%s); killing %s (pid %d)\n", round, len(live), strings.Join(counts, ", "), victim, pid)
	orphans := owners[victim]
	t0 := time.Now()
	if err := cl.kill(pid); err != nil {
		return nil, nil, err
	}
	var started []string
	for range newTables {
		t, err := startTable()
		if err != nil {
			return nil, nil, err
		}
		started = append(started, t)
	}
	want := map[string]int64{}
	for _, t := range started {
		want[t] = int64(len(stream.Delivered))
	}
	for _, t := range orphans {
		m := sample.PostgresChange("c", "null", `{"order_id":1000,"status":"after-kill"}`, 1_000_000)
		if err := cl.kc.Produce(ctx, &kgo.Record{Topic: topic(t), Key: m.Key, Value: m.Value}); err != nil {
			return nil, nil, err
		}
		want[t] = int64(len(stream.Delivered)) + 1
	}
	done := map[string]time.Duration{}
	for len(done) < len(want) {
		if time.Since(t0) > 5*time.Minute {
			var missing []string
			for t := range want {
				if _, ok := done[t]; !ok {
					st, err := tableStatus(ctx, cl.c, t)
					missing = append(missing, fmt.Sprintf("%s (phase %s, owner %q, offsets %v, claims %d, hand-overs %d, last error %q, query error %v)",
						t, st.Phase, st.Owner, st.Offsets, st.Claims, st.HandOvers, st.LastError, err))
				}
			}
			slices.Sort(missing)
			return nil, nil, fmt.Errorf("tables without their records 5 minutes after the kill: %d of %d:\n  %s", len(missing), len(want), strings.Join(missing, "\n  "))
		}
		for t, w := range want {
			if _, ok := done[t]; ok {
				continue
			}
			if st, err := tableStatus(ctx, cl.c, t); err == nil && st.Offsets[0] >= w && st.LastBatch != nil {
				done[t] = time.Since(t0)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, t := range started {
		st, _ := tableStatus(ctx, cl.c, t)
		wft, act := timeouts(ctx, cl.c, t)
		fmt.Printf("  new table %s: first batch applied %6.2f s after the kill (owner %s, claims %d; timed out: %d workflow tasks, %d activities)\n",
			t, done[t].Seconds(), st.Owner, st.Claims, wft, act)
		newTimes = append(newTimes, done[t])
	}
	for _, t := range orphans {
		st, _ := tableStatus(ctx, cl.c, t)
		fmt.Printf("  orphaned table %s: its new record applied %6.2f s after the kill (hand-overs %d)\n", t, done[t].Seconds(), st.HandOvers)
		orphanTimes = append(orphanTimes, done[t])
	}
	return newTimes, orphanTimes, nil
}

// timeouts counts the workflow task and activity timeouts in table's
// workflow history (a task dispatched to a killed worker's poll times out:
// 10 s for a workflow task).
func timeouts(ctx context.Context, c client.Client, table string) (workflowTasks, activities int) {
	it := c.GetWorkflowHistory(ctx, workflows.WorkflowID(table), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return
		}
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT:
			workflowTasks++
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT:
			activities++
		}
	}
	return
}

// awaitApplied waits until table's offset on partition 0 reaches end and
// returns its status.
func awaitApplied(ctx context.Context, c client.Client, table string, end int64, d time.Duration) (workflows.Status, error) {
	deadline := time.Now().Add(d)
	for {
		st, err := tableStatus(ctx, c, table)
		if err == nil && st.Offsets[0] >= end && st.Owner != "" {
			return st, nil
		}
		if time.Now().After(deadline) {
			return st, fmt.Errorf("not at offset %d within %s (offsets %v, phase %s, error %v)", end, d, st.Offsets, st.Phase, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// awaitUp waits until worker pid has logged that it is up.
func (cl *cluster) awaitUp(pid int, d time.Duration) error {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(cl.logs[pid]); err == nil && strings.Contains(string(b), " up (pid ") {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("worker pid %d not up within %s", pid, d)
}

// pidOf returns the pid of the running worker with worker id id, from the
// line each worker logs when it is up ("worker <id> up (pid N)").
func (cl *cluster) pidOf(id string) (int, error) {
	for pid, path := range cl.logs {
		if _, running := cl.procs[pid]; !running {
			continue
		}
		f, err := os.Open(path)
		if err != nil {
			return 0, err
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "worker "+id+" up ") {
				f.Close()
				return pid, nil
			}
		}
		f.Close()
	}
	return 0, fmt.Errorf("no running worker with id %q", id)
}
