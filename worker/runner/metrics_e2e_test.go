//go:build e2e

package runner

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/telemetry"
	"github.com/lakemirror/lakemirror/workflows"
)

// scrape fetches /metrics over HTTP and returns the families by name.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// sum adds the samples of a family whose labels include want.
func sum(fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	var total float64
	f := fams[name]
	if f == nil {
		return -1
	}
next:
	for _, m := range f.Metric {
		have := map[string]string{}
		for _, l := range m.Label {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			total += m.Counter.GetValue()
		case m.Gauge != nil:
			total += m.Gauge.GetValue()
		case m.Histogram != nil:
			total += float64(m.Histogram.GetSampleCount())
		case m.Summary != nil:
			total += float64(m.Summary.GetSampleCount())
		}
	}
	return total
}

// The worker's /metrics endpoint, scraped during a run, shows throughput,
// freshness and lag that match the workload, and the Temporal SDK's
// metrics beside the pipeline's.
func TestMetricsEndpoint(t *testing.T) {
	ctx := context.Background()
	r := startRunner(t)
	defer r.Stop()
	srv := httptest.NewServer(r.Metrics.Handler())
	defer srv.Close()
	stream := faultyStream(51)
	spec := activities.TableSpec{Table: "e2e.metrics", Topic: "e2e.public.metrics", KeyColumns: []string{"order_id"}, MaxEvents: 25, MaxWait: 200 * time.Millisecond}
	ends := produce(t, r, spec.Topic, 1, stream.Delivered)
	startWorkflow(t, r.Client, spec)
	st := waitCaughtUp(t, r.Client, spec.Table, ends)
	fams := scrape(t, srv.URL)
	table := map[string]string{"table": spec.Table}
	checks := []struct {
		name string
		got  float64
		want float64
	}{
		{telemetry.MetricRecords, sum(fams, telemetry.MetricRecords, table), float64(st.Totals.Records)},
		{telemetry.MetricEventsApplied, sum(fams, telemetry.MetricEventsApplied, table), float64(st.Totals.Applied)},
		{telemetry.MetricEventsDropped + " duplicate", sum(fams, telemetry.MetricEventsDropped, map[string]string{"table": spec.Table, "reason": "duplicate"}), float64(st.Totals.Duplicates)},
		{telemetry.MetricEventsDropped + " stale", sum(fams, telemetry.MetricEventsDropped, map[string]string{"table": spec.Table, "reason": "stale"}), float64(st.Totals.Stale)},
		{telemetry.MetricTombstones, sum(fams, telemetry.MetricTombstones, table), float64(st.Totals.Tombstones)},
		{telemetry.MetricBatchRecords + " count", sum(fams, telemetry.MetricBatchRecords, table), float64(st.Totals.Batches)},
		{telemetry.MetricRowsWritten + " bronze", sum(fams, telemetry.MetricRowsWritten, map[string]string{"table": spec.Table, "kind": "bronze"}), float64(st.Totals.BronzeRows)},
		{telemetry.MetricLag, sum(fams, telemetry.MetricLag, table), 0},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if st.Totals.Applied == 0 || st.Totals.Duplicates == 0 {
		t.Fatalf("the workload should apply and drop events: %+v", st.Totals)
	}
	fresh := sum(fams, telemetry.MetricFreshness, table)
	wantFresh := time.Since(time.UnixMicro(st.NewestSourceTs)).Seconds()
	if fresh <= 0 || fresh < wantFresh-60 || fresh > wantFresh+60 {
		t.Fatalf("freshness %v s, want about %v s (now − newest applied source commit)", fresh, wantFresh)
	}
	if sum(fams, "temporal_activity_execution_latency_seconds", nil) <= 0 {
		var names []string
		for n := range fams {
			names = append(names, n)
		}
		t.Errorf("no Temporal SDK activity latency metric among %v", names)
	}

	// paused while records arrive: the lag shows them
	if err := r.Client.SignalWorkflow(ctx, workflows.WorkflowID(spec.Table), "", workflows.SignalPause, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "paused", func() bool { return status(t, r.Client, spec.Table).Phase == workflows.PhasePaused })
	var recs []*kgo.Record
	for _, m := range stream.Delivered[:17] {
		recs = append(recs, &kgo.Record{Topic: spec.Topic, Key: m.Key, Value: m.Value})
	}
	if err := r.Kafka.Produce(ctx, recs...); err != nil {
		t.Fatal(err)
	}
	if lag := sum(scrape(t, srv.URL), telemetry.MetricLag, table); lag != 17 {
		t.Fatalf("lag while paused = %v, want 17", lag)
	}
	if err := r.Client.SignalWorkflow(ctx, workflows.WorkflowID(spec.Table), "", workflows.SignalResume, nil); err != nil {
		t.Fatal(err)
	}
	stopWorkflow(t, r.Client, spec.Table)
}
