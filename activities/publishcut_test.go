package activities

import (
	"context"
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/telemetry"
)

// PublishCut records the cut's source commit time in the worker's
// metrics: the group's cut lag counts from it (a cut per position, with
// no time, records none).
func TestPublishCutRecordsCutLag(t *testing.T) {
	a := New(mustCatalog(t), nil)
	a.Metrics = telemetry.New()
	src := time.Now().Add(-time.Hour)
	for _, req := range []PublishCutRequest{
		{Group: "shop", Number: 1, W: cdc.PostgresSeq(103, 0).Hex(), TxID: "102:103", SourceTsMs: src.UnixMilli(), Tables: []string{"shop.orders"}},
		{Group: "audit", Number: 1, W: cdc.PostgresSeq(103, 0).Hex(), Tables: []string{"shop.audit"}},
	} {
		res, err := a.PublishCut(context.Background(), req)
		if err != nil || len(res.Tagged) != 1 {
			t.Fatalf("PublishCut %s: %+v, %v", req.Group, res, err)
		}
	}
	fams, err := a.Metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range fams {
		if f.GetName() == telemetry.MetricGroupCutLag {
			for _, m := range f.GetMetric() {
				got[m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
			}
		}
	}
	if v, ok := got["shop"]; len(got) != 1 || !ok || v < 3600 || v > 3660 {
		t.Fatalf("%s: %v, want shop alone at about 3600", telemetry.MetricGroupCutLag, got)
	}
}
