package devstack

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestKafkaProduceConsume(t *testing.T) {
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	k, err := StartKafka(KafkaOptions{Port: port})
	if err != nil {
		t.Fatalf("StartKafka: %v", err)
	}
	defer k.Stop()
	want := fmt.Sprintf("127.0.0.1:%d", port)
	if b := k.Brokers(); len(b) != 1 || b[0] != want {
		t.Fatalf("Brokers() = %v, want [%s]", b, want)
	}
	if k.Cluster() == nil {
		t.Fatal("Cluster() = nil")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	prod, err := kgo.NewClient(kgo.SeedBrokers(k.Brokers()...), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	var recs []*kgo.Record
	for i := range 3 {
		recs = append(recs, &kgo.Record{Topic: "orders", Key: fmt.Appendf(nil, "k%d", i), Value: fmt.Appendf(nil, "v%d", i)})
	}
	if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}

	cons, err := kgo.NewClient(kgo.SeedBrokers(k.Brokers()...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"orders": {0: kgo.NewOffset().At(0)}}),
		kgo.ConsumeResetOffset(kgo.NoResetOffset()),
		kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	var got []string
	for len(got) < 3 {
		fs := cons.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consume: %v after %v", err, got)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			got = append(got, fmt.Sprintf("%d:%d:%s=%s", r.Partition, r.Offset, r.Key, r.Value))
		})
	}
	wantRecs := []string{"0:0:k0=v0", "0:1:k1=v1", "0:2:k2=v2"}
	if fmt.Sprint(got) != fmt.Sprint(wantRecs) {
		t.Fatalf("consumed %v, want %v", got, wantRecs)
	}

	adm := kadm.NewClient(prod)
	ends, err := adm.ListEndOffsets(ctx, "orders")
	if err != nil {
		t.Fatalf("ListEndOffsets: %v", err)
	}
	if n := len(ends["orders"]); n != 1 {
		t.Fatalf("topic orders has %d partitions, want 1", n)
	}
	o, ok := ends.Lookup("orders", 0)
	if !ok || o.Err != nil || o.Offset != 3 {
		t.Fatalf("end offset orders/0 = %+v (found %v), want 3", o, ok)
	}

	cons.Close() // clients first: closing them after the broker is gone waits ~2 s
	prod.Close()
	k.Stop()
	k.Stop() // idempotent
	if err := checkPortsFree("127.0.0.1", port); err != nil {
		t.Fatalf("after Stop: %v", err)
	}
}
