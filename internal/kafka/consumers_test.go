package kafka

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"
)

func wantStats(t *testing.T, what string, c *Client, want ConsumerStats) {
	t.Helper()
	if got := c.Consumers(); got != want {
		t.Fatalf("%s: consumers = %+v, want %+v", what, got, want)
	}
}

func wantFetch(t *testing.T, c *Client, topic string, r Range, want []string) {
	t.Helper()
	got, err := c.Fetch(testCtx(t), topic, []Range{r})
	if err != nil {
		t.Fatalf("Fetch(%s %v): %v", topic, r, err)
	}
	if d := describe(got); !equalStrings(d, want) {
		t.Fatalf("Fetch(%s %v) = %v, want %v", topic, r, d, want)
	}
}

// Two tables' topics fetched one after the other, in any order and
// backwards within a topic, all go through one consuming client, and
// each Fetch returns exactly its range.
func TestFetchesShareOneConsumer(t *testing.T) {
	_, c := newCluster(t)
	seedTopic(t, c, "orders", 2, 6)
	seedTopic(t, c, "users", 1, 4)
	wantStats(t, "before any Fetch", c, ConsumerStats{})
	wantFetch(t, c, "orders", Range{1, 3, 6}, []string{"1/3=v-1-3", "1/4=v-1-4", "1/5=v-1-5"})
	wantStats(t, "after the first Fetch", c, ConsumerStats{Made: 1, Idle: 1})
	wantFetch(t, c, "users", Range{0, 0, 2}, []string{"0/0=v-0-0", "0/1=v-0-1"})
	// the same partition again, below the range read before: nothing
	// buffered from the earlier Fetch may leak in
	wantFetch(t, c, "orders", Range{1, 0, 3}, []string{"1/0=v-1-0", "1/1=v-1-1", "1/2=v-1-2"})
	got, err := c.Fetch(testCtx(t), "orders", []Range{{0, 4, 6}, {1, 5, 6}})
	if err != nil {
		t.Fatal(err)
	}
	if d, want := describe(got), []string{"0/4=v-0-4", "0/5=v-0-5", "1/5=v-1-5"}; !equalStrings(d, want) {
		t.Fatalf("two partitions = %v, want %v", d, want)
	}
	wantFetch(t, c, "users", Range{0, 2, 4}, []string{"0/2=v-0-2", "0/3=v-0-3"})
	wantStats(t, "after five Fetches of two topics", c, ConsumerStats{Made: 1, Reused: 4, Idle: 1})
}

// A Fetch that fails closes its consuming client; the next Fetch builds a
// new one and reads correctly.
func TestFailedConsumerIsReplaced(t *testing.T) {
	cluster, c := newCluster(t)
	seedTopic(t, c, "orders", 3, 10)
	wantFetch(t, c, "orders", Range{0, 0, 2}, []string{"0/0=v-0-0", "0/1=v-0-1"})
	// the log start moves past the range while the consumer reads it
	var once sync.Once
	cluster.ControlKey(int16(kmsg.Fetch), func(kmsg.Request) (kmsg.Response, error, bool) {
		once.Do(func() {
			cluster.SleepControl(func() {
				if err := cluster.DeleteRecords("orders", 2, 6); err != nil {
					t.Error(err)
				}
			})
		})
		return nil, nil, false
	})
	if _, err := c.Fetch(testCtx(t), "orders", []Range{{2, 3, 9}}); !errors.Is(err, ErrRetentionGap) {
		t.Fatalf("err = %v, want a retention gap", err)
	}
	wantStats(t, "after the failed Fetch", c, ConsumerStats{Made: 1, Reused: 1, Dropped: 1})
	wantFetch(t, c, "orders", Range{2, 6, 8}, []string{"2/6=v-2-6", "2/7=v-2-7"})
	wantStats(t, "after the next Fetch", c, ConsumerStats{Made: 2, Reused: 1, Dropped: 1, Idle: 1})

	// a cancelled Fetch (waiting on an open transaction) is a failure too
	_, tc := txnTopic(t)
	wantFetch(t, tc, "txn", Range{0, 0, 3}, []string{"0/0=a", "0/1=b", "0/2=c"})
	tx, err := kgo.NewClient(kgo.SeedBrokers(tc.brokers...), kgo.TransactionalID("tx-open"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	if err := tx.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := tx.ProduceSync(testCtx(t), &kgo.Record{Topic: "txn", Partition: 0, Value: []byte("z1")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(testCtx(t))
	done := make(chan error)
	go func() {
		_, err := tc.Fetch(ctx, "txn", []Range{{0, 6, 10}})
		done <- err
	}()
	waitStats(t, tc, func(s ConsumerStats) bool { return s.Reused == 1 && s.Idle == 0 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Fetch: err = %v, want context.Canceled", err)
	}
	wantStats(t, "after the cancelled Fetch", tc, ConsumerStats{Made: 1, Reused: 1, Dropped: 1})
}

// waitStats waits (bounded by the test context) until c's consumer
// counts satisfy ok.
func waitStats(t *testing.T, c *Client, ok func(ConsumerStats) bool) {
	t.Helper()
	ctx := testCtx(t)
	for !ok(c.Consumers()) {
		if ctx.Err() != nil {
			t.Fatalf("consumers = %+v", c.Consumers())
		}
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// Concurrent Fetches never share a consuming client: the second gets its
// own, and both are pooled afterwards.
func TestConcurrentFetchesUseTwoConsumers(t *testing.T) {
	cluster, c := txnTopic(t)
	seedTopic(t, c, "users", 1, 3)
	tx, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.TransactionalID("tx-open"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	if err := tx.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := tx.ProduceSync(testCtx(t), &kgo.Record{Topic: "txn", Partition: 0, Value: []byte("z1")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	type result struct {
		recs []*kgo.Record
		err  error
	}
	done := make(chan result)
	go func() {
		recs, err := c.Fetch(testCtx(t), "txn", []Range{{0, 6, 10}}) // waits for the transaction
		done <- result{recs, err}
	}()
	waitStats(t, c, func(s ConsumerStats) bool { return s.Made == 1 })
	wantFetch(t, c, "users", Range{0, 0, 3}, []string{"0/0=v-0-0", "0/1=v-0-1", "0/2=v-0-2"})
	wantStats(t, "while the first Fetch waits", c, ConsumerStats{Made: 2, Idle: 1})
	if err := tx.EndTransaction(testCtx(t), kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res.err != nil {
		t.Fatal(res.err)
	}
	if d, want := describe(res.recs), []string{"0/6=y1", "0/7=y2", "0/9=z1"}; !equalStrings(d, want) {
		t.Fatalf("Fetch = %v, want %v", d, want)
	}
	wantStats(t, "after both", c, ConsumerStats{Made: 2, Idle: 2})
	c.Close()
	if _, err := c.Fetch(context.Background(), "users", []Range{{0, 0, 1}}); err == nil {
		t.Fatal("Fetch after Close succeeded")
	}
	wantStats(t, "after Close", c, ConsumerStats{Made: 2})
}

// Clients with different credentials keep separate consuming clients: a
// Fetch reads with its own Client's SASL user, and one user's refused
// Fetch does not touch the other's pool.
func TestConsumersKeepCredentialsApart(t *testing.T) {
	topicACL := func(name string, ops ...kmsg.ACLOperation) []kfake.ACL {
		var out []kfake.ACL
		for _, op := range ops {
			out = append(out, kfake.ACL{Resource: kmsg.ACLResourceTypeTopic, Name: name,
				Pattern: kmsg.ACLResourcePatternTypeLiteral, Operation: op, Allow: true})
		}
		return out
	}
	read, describeOp := kmsg.ACLOperationRead, kmsg.ACLOperationDescribe
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.EnableSASL(), kfake.EnableACLs(),
		kfake.Superuser("PLAIN", "admin", "admin-pw"),
		kfake.User("PLAIN", "alice", "alice-pw", topicACL("a.orders", read, describeOp)...),
		kfake.User("PLAIN", "bob", "bob-pw", append(topicACL("b.orders", read, describeOp), topicACL("a.orders", describeOp)...)...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	client := func(user, pass string) *Client {
		c, err := NewClient(cluster.ListenAddrs(), ManualPartitioner(), kgo.SASL(plain.Auth{User: user, Pass: pass}.AsMechanism()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		return c
	}
	admin, alice, bob := client("admin", "admin-pw"), client("alice", "alice-pw"), client("bob", "bob-pw")
	seedTopic(t, admin, "a.orders", 1, 3)
	seedTopic(t, admin, "b.orders", 1, 3)

	wantFetch(t, alice, "a.orders", Range{0, 0, 3}, []string{"0/0=v-0-0", "0/1=v-0-1", "0/2=v-0-2"})
	wantFetch(t, bob, "b.orders", Range{0, 1, 3}, []string{"0/1=v-0-1", "0/2=v-0-2"})
	// bob may see a.orders' offsets but not read its records
	_, err = bob.Fetch(testCtx(t), "a.orders", []Range{{0, 0, 3}})
	if !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("bob reading a.orders: err = %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}
	wantStats(t, "bob", bob, ConsumerStats{Made: 1, Reused: 1, Dropped: 1})
	wantFetch(t, alice, "a.orders", Range{0, 2, 3}, []string{"0/2=v-0-2"})
	wantStats(t, "alice", alice, ConsumerStats{Made: 1, Reused: 1, Idle: 1})
	wantStats(t, "admin (produce only)", admin, ConsumerStats{})
}
