//go:build e2e

package runner

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/sample"
	"github.com/lakemirror/lakemirror/workflows"
)

// A topic deleted and re-created under a running table: its new log ends
// below the offsets the table recorded. The table blocks with
// KafkaLogReset naming the partition and both offsets, instead of waiting
// forever with lag 0 (or mixing the two logs).
func TestTopicRecreatedBlocks(t *testing.T) {
	ctx := context.Background()
	r := startRunner(t)
	defer r.Stop()
	fields := []string{"id:int32", "name:string"}
	var msgs []sample.Message
	for i := 1; i <= 5; i++ {
		msgs = append(msgs, sample.Message{Key: []byte(`{"id":1}`), Value: enveloped("u", 100+10*i, fields, `{"id":1,"name":"a"}`)})
	}
	spec := activities.TableSpec{Table: "e2e.recreated", Topic: "e2e.public.recreated", KeyColumns: []string{"id"}, MaxEvents: 10, MaxWait: 200 * time.Millisecond}
	ends := produce(t, r, spec.Topic, 1, msgs)
	startWorkflow(t, r.Client, spec)
	waitCaughtUp(t, r.Client, spec.Table, ends)

	adm := kadm.NewClient(r.Kafka.Kgo())
	if _, err := adm.DeleteTopics(ctx, spec.Topic); err != nil {
		t.Fatal(err)
	}
	// a fresh client: r.Kafka's producer still knows the old topic ID
	cl, err := kgo.NewClient(kgo.SeedBrokers(stack.Settings.KafkaBrokers...), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, -1, nil, spec.Topic); err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs[:2] {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: spec.Topic, Key: m.Key, Value: m.Value}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	var st workflows.Status
	waitFor(t, "blocked on the re-created topic", func() bool {
		st = status(t, r.Client, spec.Table)
		return st.Phase == workflows.PhaseBlocked
	})
	want := "KafkaLogReset: kafka: e2e.public.recreated partition 0 ends at offset 2, below offset 5 already consumed"
	if !strings.HasPrefix(st.LastError, want) || st.Offsets[0] != 5 {
		t.Fatalf("status: offsets %v, error %q; want the error to start with %q", st.Offsets, st.LastError, want)
	}
	stopWorkflow(t, r.Client, spec.Table)
}

// A table started before its topic exists waits with TopicMissing in its
// status, then applies the topic's records once they are produced.
func TestTopicNotYetCreated(t *testing.T) {
	r := startRunner(t)
	defer r.Stop()
	spec := activities.TableSpec{Table: "e2e.later", Topic: "e2e.public.later", KeyColumns: []string{"id"}, MaxEvents: 10, MaxWait: 200 * time.Millisecond}
	startWorkflow(t, r.Client, spec)
	waitFor(t, "status reports the missing topic", func() bool {
		return status(t, r.Client, spec.Table).TopicMissing
	})
	fields := []string{"id:int32", "name:string"}
	ends := produce(t, r, spec.Topic, 1, []sample.Message{{Key: []byte(`{"id":1}`), Value: enveloped("c", 100, fields, `{"id":1,"name":"a"}`)}})
	st := waitCaughtUp(t, r.Client, spec.Table, ends)
	if st.TopicMissing || st.Totals.Applied != 1 {
		t.Fatalf("after the topic appeared: topic_missing %v, applied %d; want false, 1", st.TopicMissing, st.Totals.Applied)
	}
	stopWorkflow(t, r.Client, spec.Table)
}
