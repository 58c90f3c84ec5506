package kafka

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// produceTxn writes values to topic partition 0 in one transaction and
// commits or aborts it.
func produceTxn(t *testing.T, cluster *kfake.Cluster, id, topic string, commit bool, values ...string) {
	t.Helper()
	ctx := testCtx(t)
	tx, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.TransactionalID(id),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	if err := tx.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for _, v := range values {
		if err := tx.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: 0, Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	end := kgo.TryAbort
	if commit {
		end = kgo.TryCommit
	}
	if err := tx.EndTransaction(ctx, end); err != nil {
		t.Fatal(err)
	}
}

// txnTopic builds partition 0 of "txn" as:
//
//	0 a, 1 b, 2 c          plain records
//	3 x1, 4 x2, 5 ABORT    aborted transaction
//	6 y1, 7 y2, 8 COMMIT   committed transaction
//
// so the high watermark is 9 and offsets 3, 4, 5, 8 hold no readable data.
func txnTopic(t *testing.T) (*kfake.Cluster, *Client) {
	t.Helper()
	cluster, c := newCluster(t)
	ctx := testCtx(t)
	if err := c.CreateTopic(ctx, "txn", 1); err != nil {
		t.Fatal(err)
	}
	var plain []*kgo.Record
	for _, v := range []string{"a", "b", "c"} {
		plain = append(plain, &kgo.Record{Topic: "txn", Partition: 0, Value: []byte(v)})
	}
	if err := c.Produce(ctx, plain...); err != nil {
		t.Fatal(err)
	}
	produceTxn(t, cluster, "tx-abort", "txn", false, "x1", "x2")
	produceTxn(t, cluster, "tx-commit", "txn", true, "y1", "y2")
	end, err := c.EndOffsets(ctx, "txn")
	if err != nil {
		t.Fatal(err)
	}
	if want := map[int32]int64{0: 9}; !maps.Equal(end, want) {
		t.Fatalf("EndOffsets = %v, want %v (3 plain + 2 aborted + marker + 2 committed + marker)", end, want)
	}
	return cluster, c
}

func TestFetchNonDenseTransactionalOffsets(t *testing.T) {
	cases := []struct {
		r    Range
		want []string
	}{
		{Range{0, 0, 9}, []string{"0/0=a", "0/1=b", "0/2=c", "0/6=y1", "0/7=y2"}}, // ends at the HWM (commit marker)
		{Range{0, 3, 9}, []string{"0/6=y1", "0/7=y2"}},
		{Range{0, 3, 6}, nil},               // aborted records + abort marker only
		{Range{0, 3, 5}, nil},               // ends on an aborted record
		{Range{0, 2, 4}, []string{"0/2=c"}}, // ends inside the aborted transaction
		{Range{0, 6, 8}, []string{"0/6=y1", "0/7=y2"}},
		{Range{0, 8, 9}, nil}, // the commit marker alone
	}
	for _, keep := range []bool{true, false} {
		// keep = false hides control markers from the consumer, so every
		// range whose last offset is not a readable record completes only
		// through the fetch-position probe.
		t.Run(fmt.Sprintf("keepControl=%v", keep), func(t *testing.T) {
			_, c := txnTopic(t)
			c.keepControl = keep
			c.idleProbe = 100 * time.Millisecond
			for _, tc := range cases {
				start := time.Now()
				got, err := c.Fetch(testCtx(t), "txn", []Range{tc.r})
				if err != nil {
					t.Fatalf("Fetch(%v): %v", tc.r, err)
				}
				if d := describe(got); !equalStrings(d, tc.want) {
					t.Errorf("Fetch(%v) = %v, want %v", tc.r, d, tc.want)
				}
				t.Logf("Fetch(%v): %d records in %v", tc.r, len(got), time.Since(start).Round(time.Millisecond))
			}
			// With markers visible every range completes on sight; without
			// them the ranges ending on a marker need the probe.
			if n := c.probes.Load(); keep != (n == 0) {
				t.Errorf("%d position probes, keepControl=%v", n, keep)
			}
			t.Logf("%d position probes", c.probes.Load())
		})
	}
}

func TestFetchWaitsForOpenTransaction(t *testing.T) {
	cluster, c := txnTopic(t)
	ctx := testCtx(t)
	tx, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.TransactionalID("tx-open"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	if err := tx.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := tx.ProduceSync(ctx, &kgo.Record{Topic: "txn", Partition: 0, Value: []byte("z1")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	// z1 is offset 9, HWM 10, but the last stable offset stays 9 until the
	// transaction ends: the range cannot complete yet.
	short, cancel := context.WithTimeout(ctx, 700*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = c.Fetch(short, "txn", []Range{{0, 6, 10}})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("open transaction: err = %v, want context.DeadlineExceeded", err)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Fatalf("Fetch returned %v after its deadline", el)
	}

	done := make(chan struct{})
	var got []*kgo.Record
	go func() {
		defer close(done)
		got, err = c.Fetch(ctx, "txn", []Range{{0, 6, 10}})
	}()
	time.Sleep(300 * time.Millisecond)
	if err := tx.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	<-done
	if err != nil {
		t.Fatal(err)
	}
	if d, want := describe(got), []string{"0/6=y1", "0/7=y2", "0/9=z1"}; !equalStrings(d, want) {
		t.Fatalf("Fetch = %v, want %v", d, want)
	}
}
