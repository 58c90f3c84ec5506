//go:build e2e

package runner

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/telemetry"
)

// A worker with -release-idle-state frees an idle table's local state
// and its next batch loads the sidecar the release wrote: the faulty
// stream applied in two halves, with the table idle in between, ends in
// the expected mirror and bronze; the state was built from the tables
// once (reason new, the first batch), released once after each half and
// loaded from its sidecar once (the second half's first batch).
func TestIdleTableStateReleased(t *testing.T) {
	s := stack.Settings
	s.ReleaseIdleState, s.SidecarEvery = 10*time.Second, 1_000_000 // sidecars written at releases only
	r, err := Start(context.Background(), s, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	rs := []*Runner{r}
	stream := faultyStream(12)
	half := len(stream.Delivered) / 2
	spec := activities.TableSpec{Table: "e2e.released", Topic: "e2e.public.released", KeyColumns: []string{"order_id"}, MaxEvents: 17, MaxWait: 200 * time.Millisecond}
	ends := produce(t, r, spec.Topic, 1, stream.Delivered[:half])
	startWorkflow(t, r.Client, spec)
	waitCaughtUp(t, r.Client, spec.Table, ends)
	released := func(n int) func() bool {
		return func() bool { return counterSum(t, rs, telemetry.MetricStateReleases, spec.Table) == n }
	}
	waitFor(t, "the first release", released(1))
	if b, l := counterSum(t, rs, telemetry.MetricStateRebuilds, spec.Table), counterSum(t, rs, telemetry.MetricStateLoads, spec.Table); b != 1 || l != 0 {
		t.Fatalf("after the first half: %d builds, %d loads; want 1, 0", b, l)
	}
	recs := make([]*kgo.Record, 0, len(stream.Delivered)-half)
	for _, m := range stream.Delivered[half:] {
		recs = append(recs, &kgo.Record{Topic: spec.Topic, Key: m.Key, Value: m.Value})
	}
	if err := r.Kafka.Produce(context.Background(), recs...); err != nil {
		t.Fatal(err)
	}
	ends = lake.Offsets{0: int64(len(stream.Delivered))}
	waitCaughtUp(t, r.Client, spec.Table, ends)
	waitFor(t, "the second release", released(2))
	if b, l := counterSum(t, rs, telemetry.MetricStateRebuilds, spec.Table), counterSum(t, rs, telemetry.MetricStateLoads, spec.Table); b != 1 || l != 1 {
		t.Fatalf("after the second half: %d builds, %d loads; want 1, 1", b, l)
	}
	checkMirror(t, r, spec.Table, stream.Expected())
	checkBronze(t, r, spec.Table, ends)
	stopWorkflow(t, r.Client, spec.Table)
}
