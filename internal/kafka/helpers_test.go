package kafka

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// newCluster starts an in-process kfake broker and a Client for it (with
// ManualPartitioner, so tests place records exactly).
func newCluster(t *testing.T) (*kfake.Cluster, *Client) {
	t.Helper()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatalf("kfake: %v", err)
	}
	t.Cleanup(cluster.Close)
	c, err := NewClient(cluster.ListenAddrs(), ManualPartitioner())
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	t.Cleanup(c.Close)
	return cluster, c
}

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// seedTopic creates topic with partitions and writes n records to each
// partition: key "k-<p>-<i>", value "v-<p>-<i>", offsets 0..n-1.
func seedTopic(t *testing.T, c *Client, topic string, partitions int32, n int) {
	t.Helper()
	ctx := testCtx(t)
	if err := c.CreateTopic(ctx, topic, partitions); err != nil {
		t.Fatalf("CreateTopic: %v", err)
	}
	var recs []*kgo.Record
	for p := range partitions {
		for i := range n {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p,
				Key: fmt.Appendf(nil, "k-%d-%d", p, i), Value: fmt.Appendf(nil, "v-%d-%d", p, i)})
		}
	}
	if err := c.Produce(ctx, recs...); err != nil {
		t.Fatalf("Produce: %v", err)
	}
}

// describe renders records as "p/offset=value" for exact comparison.
func describe(recs []*kgo.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		v := "<nil>"
		if r.Value != nil {
			v = string(r.Value)
		}
		out[i] = fmt.Sprintf("%d/%d=%s", r.Partition, r.Offset, v)
	}
	return out
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
