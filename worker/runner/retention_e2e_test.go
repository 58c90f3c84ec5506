//go:build e2e

package runner

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/lake"
)

// A batch committed to every table before its worker died, whose Kafka
// records are then deleted (retention), is recognised as committed by its
// retry before any fetch: the table goes on instead of blocking with a
// retention gap, and nothing is lost.
func TestCommittedBatchNeedsNoRecords(t *testing.T) {
	stream := faultyStream(21)
	spec := activities.TableSpec{Table: "e2e.gone", Topic: "e2e.public.gone", KeyColumns: []string{"order_id"}, MaxEvents: 25, MaxWait: 200 * time.Millisecond}
	r1 := startRunner(t)
	committed := make(chan lake.Batch, 1)
	var once sync.Once
	r1.Activities.AfterCommit = func(_ context.Context, b lake.Batch, table string) error {
		if b.Seq != 3 || table != "history" {
			return nil
		}
		once.Do(func() { committed <- b })
		return errors.New("simulated crash after the last commit of batch 3")
	}
	ends := produce(t, r1, spec.Topic, 1, stream.Delivered)
	startWorkflow(t, r1.Client, spec)
	var b lake.Batch
	select {
	case b = <-committed:
	case <-time.After(60 * time.Second):
		t.Fatal("batch 3 was never committed")
	}
	r1.Stop()
	// retention removes everything up to the end of batch 3 before the retry
	if err := stack.Kafka.Cluster().DeleteRecords(spec.Topic, 0, b.EndOffsets[0]); err != nil {
		t.Fatal(err)
	}
	r2 := startRunner(t)
	defer r2.Stop()
	st := waitCaughtUp(t, r2.Client, spec.Table, ends)
	if st.Phase == "blocked" || st.LastError != "" {
		t.Fatalf("phase %s, last error %q", st.Phase, st.LastError)
	}
	checkMirror(t, r2, spec.Table, stream.Expected())
	checkBronze(t, r2, spec.Table, ends)
	stopWorkflow(t, r2.Client, spec.Table)
}
