//go:build e2e

package runner

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.temporal.io/sdk/client"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/tablestate"
	"github.com/lakemirror/lakemirror/internal/sample"
	"github.com/lakemirror/lakemirror/internal/telemetry"
	"github.com/lakemirror/lakemirror/workflows"
)

// Routing on the embedded Temporal server (docs/design.md, "Routing"):
// three workers in this process, each with its own activity set, local
// state and worker id (its own task queue). A table applied over many
// batches builds its local state exactly once, on the worker that claimed
// it, and never again while that worker lives; when that worker stops,
// the table is handed over to another, which builds the state once more,
// and the mirror is still exactly the expected one.
func TestRoutingSteadyStateAndHandOver(t *testing.T) {
	rs := []*Runner{startRunner(t), startRunner(t), startRunner(t)}
	stopped := map[*Runner]bool{}
	defer func() {
		for _, r := range rs {
			if !stopped[r] {
				r.Stop()
			}
		}
	}()
	ids := map[string]bool{}
	for _, r := range rs {
		ids[r.WorkerID] = true
	}
	if len(ids) != 3 {
		t.Fatalf("worker ids %v, want 3 distinct", ids)
	}
	stream := faultyStream(41)
	third := len(stream.Delivered) / 3
	parts := [][]sample.Message{stream.Delivered[:third], stream.Delivered[third : 2*third], stream.Delivered[2*third:]}
	spec := activities.TableSpec{Table: "route.orders", Topic: "route.public.orders", KeyColumns: []string{"order_id"}, MaxEvents: 10, MaxWait: 200 * time.Millisecond}
	ends := produce(t, rs[0], spec.Topic, 1, parts[0])
	startWorkflow(t, rs[0].Client, spec)
	st := waitCaughtUp(t, rs[0].Client, spec.Table, ends)
	owner := ownerOf(t, rs, st)
	if got := stateBuilds(t, rs, spec.Table); got != "new=1" {
		t.Fatalf("state builds after the first part: %s, want new=1", got)
	}
	first := st.Totals.Batches

	// steady state: many more batches, no build
	ends = produceMore(t, rs[0], spec.Topic, parts[1])
	st = waitCaughtUp(t, rs[0].Client, spec.Table, ends)
	if st.Totals.Batches-first < 5 {
		t.Fatalf("only %d batches in the steady-state part", st.Totals.Batches-first)
	}
	if got := ownerOf(t, rs, st); got != owner {
		t.Fatalf("owner moved from %s to %s without a reason", owner.WorkerID, got.WorkerID)
	}
	if got := stateBuilds(t, rs, spec.Table); got != "new=1" {
		t.Fatalf("state builds after %d batches: %s, want new=1 (steady-state batches never build)", st.Totals.Batches, got)
	}
	if st.Claims != 1 || st.HandOvers != 0 || st.Releases != 0 {
		t.Fatalf("claims %d, hand-overs %d, releases %d; want 1, 0, 0", st.Claims, st.HandOvers, st.Releases)
	}

	// the owner stops: the table moves to another worker
	owner.Stop()
	stopped[owner] = true
	var live *Runner
	for _, r := range rs {
		if !stopped[r] {
			live = r
			break
		}
	}
	ends = produceMore(t, live, spec.Topic, parts[2])
	st = waitCaughtUpWithin(t, live.Client, spec.Table, ends, 4*time.Minute)
	next := ownerOf(t, rs, st)
	if next == owner {
		t.Fatalf("the table stayed on the stopped worker %s", owner.WorkerID)
	}
	if got := stateBuilds(t, rs, spec.Table); got != "new=2" {
		t.Fatalf("state builds after the hand-over: %s, want new=2 (exactly one more)", got)
	}
	if st.StopHandOvers != 1 || st.HandOvers != 0 || st.HeartbeatsLost != 0 || st.Claims != 2 {
		t.Fatalf("hand-overs on stop %d, by timeout %d, heartbeats lost %d, claims %d; want 1, 0, 0, 2 (the stopping worker handed the table over)",
			st.StopHandOvers, st.HandOvers, st.HeartbeatsLost, st.Claims)
	}
	checkMirror(t, live, spec.Table, stream.Expected())
	checkBronze(t, live, spec.Table, ends)
	stopWorkflow(t, live.Client, spec.Table)
}

// A worker that stops gracefully writes the state sidecar of the table
// it holds (sidecars on, here only on stop): the worker that takes the
// table over loads the state instead of building it from the tables, and
// the mirror and bronze are exact.
func TestStoppedWorkerLeavesSidecar(t *testing.T) {
	first := startWithSidecars(t)
	rs := []*Runner{first}
	stopped := map[*Runner]bool{}
	defer func() {
		for _, r := range rs {
			if !stopped[r] {
				r.Stop()
			}
		}
	}()
	stream := faultyStream(43)
	half := len(stream.Delivered) / 2
	spec := activities.TableSpec{Table: "sidecar.orders", Topic: "sidecar.public.orders", KeyColumns: []string{"order_id"}, MaxEvents: 10, MaxWait: 200 * time.Millisecond}
	ends := produce(t, first, spec.Topic, 1, stream.Delivered[:half])
	startWorkflow(t, first.Client, spec)
	st := waitCaughtUp(t, first.Client, spec.Table, ends)
	if got := ownerOf(t, rs, st); got != first {
		t.Fatalf("owner %s, want the only worker", got.WorkerID)
	}
	if got := stateBuilds(t, rs, spec.Table); got != "new=1" {
		t.Fatalf("state builds on the first worker: %s, want new=1", got)
	}
	second := startWithSidecars(t)
	rs = append(rs, second)
	first.Stop() // writes the sidecar
	stopped[first] = true
	ends = produceMore(t, second, spec.Topic, stream.Delivered[half:])
	st = waitCaughtUpWithin(t, second.Client, spec.Table, ends, 4*time.Minute)
	if got := ownerOf(t, rs, st); got != second {
		t.Fatalf("owner %s, want the second worker", got.WorkerID)
	}
	if got := stateBuilds(t, rs, spec.Table); got != "new=1" {
		t.Fatalf("state builds after the hand-over: %s, want new=1 (the second worker loads the sidecar)", got)
	}
	if l := counterSum(t, rs, telemetry.MetricStateLoads, spec.Table); l != 1 {
		t.Fatalf("state loads %d, want 1", l)
	}
	checkMirror(t, second, spec.Table, stream.Expected())
	checkBronze(t, second, spec.Table, ends)
	stopWorkflow(t, second.Client, spec.Table)
}

// Rebalancing: three tables on one worker; a second worker joins and
// takes one table (the first holds more than ceil(3/2)), a third joins
// and takes another: each worker ends holding one of the tables. The
// workers write a table's state sidecar when they release it (and every
// 10,000 batches): each moved table's new worker loads its state from the
// sidecar, so the states are built from the tables exactly 3 times (one
// per table, on the first worker) and loaded once per release.
func TestRoutingRebalancesWhenWorkersJoin(t *testing.T) {
	rs := []*Runner{startWithSidecars(t)}
	defer func() {
		for _, r := range rs {
			r.Stop()
		}
	}()
	var specs []activities.TableSpec
	var streams []sample.Stream
	for i := range 3 {
		specs = append(specs, activities.TableSpec{Table: fmt.Sprintf("rebal.t%d", i), Topic: fmt.Sprintf("rebal.public.t%d", i),
			KeyColumns: []string{"order_id"}, MaxEvents: 10, MaxWait: 200 * time.Millisecond})
		streams = append(streams, faultyStream(int64(50+i)))
	}
	const rounds = 40 // each table's stream in this many chunks
	chunk := func(i, n int) []sample.Message {
		d := streams[i].Delivered
		size := (len(d) + rounds - 1) / rounds
		return d[min(n*size, len(d)):min((n+1)*size, len(d))]
	}
	round := 0
	feed := func() { // the next chunk of every table, applied
		for i, spec := range specs {
			var ends lake.Offsets
			if round == 0 {
				ends = produce(t, rs[0], spec.Topic, 1, chunk(i, round))
				startWorkflow(t, rs[0].Client, spec)
			} else {
				ends = produceMore(t, rs[0], spec.Topic, chunk(i, round))
			}
			waitCaughtUpWithin(t, rs[0].Client, spec.Table, ends, 3*time.Minute)
		}
		round++
	}
	owners := func() map[string]int { // worker id → tables of specs it holds ("" a table between owners)
		out := map[string]int{}
		for _, spec := range specs {
			st := status(t, rs[0].Client, spec.Table)
			if st.Owner == "" {
				out[""]++
				continue
			}
			out[ownerOf(t, rs, st).WorkerID]++
		}
		return out
	}
	balanced := func(want int) bool { // every worker holds one table per len(rs)/3
		o := owners()
		if len(o) != want || o[""] > 0 {
			return false
		}
		for _, n := range o {
			if n > (len(specs)+len(rs)-1)/len(rs) {
				return false
			}
		}
		return true
	}
	// the workers' view of the fleet counts a stopped worker (of an
	// earlier test) for up to pollerFresh: wait until it counts these
	fleetIs := func(n int) {
		f := &fleet{c: rs[0].Client}
		waitForWithin(t, fmt.Sprintf("the fleet to count %d workers", n), 2*pollerFresh, func() bool {
			w, _, err := f.count(context.Background(), true)
			return err == nil && w == n
		})
	}
	fleetIs(1)
	feed()
	if o := owners(); len(o) != 1 || o[rs[0].WorkerID] != 3 {
		t.Fatalf("owners with one worker: %v", o)
	}
	for _, workers := range []int{2, 3} {
		rs = append(rs, startWithSidecars(t))
		fleetIs(workers)
		for !balanced(workers) {
			if round == rounds-1 {
				t.Fatalf("with %d workers, owners %v after %d rounds", workers, owners(), round)
			}
			time.Sleep(time.Second) // the workers' view of the fleet is cached for fleetTTL
			feed()
		}
	}
	for round < rounds { // the rest of the streams, on the balanced workers
		feed()
	}
	waitFor(t, "every table claimed", func() bool { return owners()[""] == 0 })
	o := owners()
	for _, r := range rs {
		if o[r.WorkerID] != 1 {
			t.Fatalf("owners %v, want one table on each of the 3 workers", o)
		}
	}
	releases, builds, loads := 0, 0, 0
	for i, spec := range specs {
		st := status(t, rs[0].Client, spec.Table)
		releases += st.Releases
		b := stateBuildsBy(t, rs, spec.Table)
		builds += b[tablestate.BuildNew]
		l := counterSum(t, rs, telemetry.MetricStateLoads, spec.Table)
		loads += l
		if len(b) != 1 || b[tablestate.BuildNew] != 1 || l != st.Releases {
			t.Errorf("%s: state builds %v, loads %d; want new=1 and one load per release (%d)", spec.Table, b, l, st.Releases)
		}
		checkMirror(t, rs[0], spec.Table, streams[i].Expected())
	}
	if releases != 2 || builds != 3 || loads != 2 {
		t.Fatalf("releases %d, state builds %d, loads %d; want 2 (one per joining worker), 3 and 2", releases, builds, loads)
	}
	for _, spec := range specs {
		stopWorkflow(t, rs[0].Client, spec.Table)
	}
}

// waitForWithin is waitFor giving up after d.
func waitForWithin(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// produceMore appends msgs to an existing topic and returns its end
// offsets.
func produceMore(t *testing.T, r *Runner, topic string, msgs []sample.Message) lake.Offsets {
	t.Helper()
	ctx := context.Background()
	recs := make([]*kgo.Record, len(msgs))
	for i, m := range msgs {
		recs[i] = &kgo.Record{Topic: topic, Key: m.Key, Value: m.Value}
	}
	if err := r.Kafka.Produce(ctx, recs...); err != nil {
		t.Fatal(err)
	}
	ends, err := r.Kafka.EndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	return lake.Offsets(ends)
}

// ownerOf is the runner whose own queue the status names as the table's
// owner.
// startWithSidecars starts a runner on the shared stack that writes a
// table's state sidecar every 10,000 batches, when it releases the table
// and when it stops; the caller stops it.
func startWithSidecars(t *testing.T) *Runner {
	t.Helper()
	settings := stack.Settings
	settings.SidecarEvery = 10_000
	r, err := Start(context.Background(), settings, quiet)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func ownerOf(t *testing.T, rs []*Runner, st workflows.Status) *Runner {
	t.Helper()
	for _, r := range rs {
		if WorkerQueue(r.WorkerID) == st.Owner {
			return r
		}
	}
	t.Fatalf("owner %q is none of the test's workers", st.Owner)
	return nil
}

// stateBuildsBy sums lakemirror_state_rebuilds_total{table} over the
// runners' registries, by reason.
func stateBuildsBy(t *testing.T, rs []*Runner, table string) map[string]int {
	t.Helper()
	return countersBy(t, rs, telemetry.MetricStateRebuilds, table, "reason")
}

// counterSum sums counter name{table} over the runners' registries.
func counterSum(t *testing.T, rs []*Runner, name, table string) int {
	t.Helper()
	return countersBy(t, rs, name, table, "")[""]
}

// countersBy sums counter name{table} over the runners' registries, by
// the value of label by ("": one sum).
func countersBy(t *testing.T, rs []*Runner, name, table, by string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, r := range rs {
		fams, err := r.Metrics.Registry.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fams {
			if f.GetName() != name {
				continue
			}
			for _, m := range f.GetMetric() {
				labels := map[string]string{}
				for _, l := range m.GetLabel() {
					labels[l.GetName()] = l.GetValue()
				}
				if labels["table"] == table {
					out[labels[by]] += int(m.GetCounter().GetValue())
				}
			}
		}
	}
	return out
}

// stateBuilds is stateBuildsBy as "reason=n,..." in reason order.
func stateBuilds(t *testing.T, rs []*Runner, table string) string {
	t.Helper()
	b := stateBuildsBy(t, rs, table)
	var keys []string
	for k := range b {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	s := ""
	for i, k := range keys {
		if i > 0 {
			s += ","
		}
		s += fmt.Sprintf("%s=%d", k, b[k])
	}
	return s
}

// Jobs outside the table workflow run on the table's worker: with two
// workers, purges (which need the key index) and a compaction started as
// MaintenanceWorkflows all run where the table's state is: the state is
// built once as new, then once more after the compaction moved the mirror,
// never on the other worker, and the mirror is exact afterwards (its
// purged soft deletes gone).
func TestMaintenanceRunsOnTheTableOwner(t *testing.T) {
	ctx := context.Background()
	rs := []*Runner{startRunner(t), startRunner(t)}
	defer func() {
		for _, r := range rs {
			r.Stop()
		}
	}()
	stream := faultyStream(47)
	spec := activities.TableSpec{Table: "route.jobs", Topic: "route.public.jobs", KeyColumns: []string{"order_id"}, MaxEvents: 20, MaxWait: 200 * time.Millisecond}
	ends := produce(t, rs[0], spec.Topic, 1, stream.Delivered)
	startWorkflow(t, rs[0].Client, spec)
	st := waitCaughtUp(t, rs[0].Client, spec.Table, ends)
	owner := ownerOf(t, rs, st)
	if got := stateBuilds(t, rs, spec.Table); got != "new=1" {
		t.Fatalf("state builds after the stream: %s, want new=1", got)
	}
	var live []sample.Row
	for _, r := range stream.Expected() {
		if !r.Deleted {
			live = append(live, r)
		}
	}
	jobs := []string{activities.JobPurge, activities.JobPurge, activities.JobCompact, activities.JobPurge, activities.JobPurge}
	purged := 0
	for i, job := range jobs {
		run, err := rs[1].Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: fmt.Sprintf("route-jobs-%d", i), TaskQueue: activities.TaskQueue},
			workflows.MaintenanceWorkflowName, activities.MaintenanceRequest{Spec: spec.Defaults(), Job: job})
		if err != nil {
			t.Fatal(err)
		}
		var res activities.MaintenanceResult
		if err := run.Get(ctx, &res); err != nil {
			t.Fatalf("%s: %v", job, err)
		}
		if res.Purge != nil {
			purged += res.Purge.Purged
		}
	}
	// the stream's deletes are older than the default 30 days: the first
	// purge removes every soft-deleted row, the others find none
	if want := len(stream.Expected()) - len(live); purged != want {
		t.Fatalf("purged %d rows, want %d", purged, want)
	}
	// the compaction's commit moves the mirror to a snapshot the state does
	// not reflect, so the next job rebuilds it once, on the same worker
	if got := stateBuilds(t, rs, spec.Table); got != "new=1,snapshot-moved=1" {
		t.Fatalf("state builds after %d maintenance jobs: %s, want new=1,snapshot-moved=1 (every job ran on the table's worker)", len(jobs), got)
	}
	if got := ownerOf(t, rs, status(t, rs[0].Client, spec.Table)); got != owner {
		t.Fatalf("owner moved from %s to %s", owner.WorkerID, got.WorkerID)
	}
	checkMirror(t, owner, spec.Table, live)
	stopWorkflow(t, rs[0].Client, spec.Table)
}
