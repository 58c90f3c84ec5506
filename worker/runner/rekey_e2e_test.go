//go:build e2e

package runner

import (
	"strings"
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/sample"
	"github.com/lakemirror/lakemirror/workflows"
)

// A table restarted with other key columns than its mirror records blocks
// at once with an error naming both, and applies nothing: merging under
// another key would fold different rows together.
func TestRestartWithOtherKeyBlocks(t *testing.T) {
	r := startRunner(t)
	defer r.Stop()
	fields := []string{"id:int32", "name:string"}
	msgs := []sample.Message{
		{Key: []byte(`{"id":1}`), Value: enveloped("c", 100, fields, `{"id":1,"name":"a"}`)},
	}
	spec := activities.TableSpec{Table: "e2e.rekey", Topic: "e2e.public.rekey", KeyColumns: []string{"id"}, MaxEvents: 10, MaxWait: 200 * time.Millisecond}
	ends := produce(t, r, spec.Topic, 1, msgs)
	startWorkflow(t, r.Client, spec)
	waitCaughtUp(t, r.Client, spec.Table, ends)
	stopWorkflow(t, r.Client, spec.Table)

	spec.KeyColumns = []string{"name"}
	startWorkflow(t, r.Client, spec)
	var st workflows.Status
	waitFor(t, "blocked on the key", func() bool {
		st = status(t, r.Client, spec.Table)
		return st.Phase == workflows.PhaseBlocked
	})
	want := "the mirror is keyed by id, the table spec by name"
	if !strings.Contains(st.LastError, want) {
		t.Fatalf("last error %q, want it to contain %q", st.LastError, want)
	}
	stopWorkflow(t, r.Client, spec.Table)
}

// A table restarted on another topic blocks at once with an error naming
// both topics and applies nothing from the new topic: resuming at the old
// topic's offsets would skip the new topic's records while status showed
// lag 0.
func TestRestartOnOtherTopicBlocks(t *testing.T) {
	r := startRunner(t)
	defer r.Stop()
	fields := []string{"id:int32", "name:string"}
	spec := activities.TableSpec{Table: "e2e.retopic", Topic: "e2e.public.retopic_a", KeyColumns: []string{"id"}, MaxEvents: 10, MaxWait: 200 * time.Millisecond}
	ends := produce(t, r, spec.Topic, 1, []sample.Message{
		{Key: []byte(`{"id":1}`), Value: enveloped("c", 100, fields, `{"id":1,"name":"a"}`)},
		{Key: []byte(`{"id":2}`), Value: enveloped("c", 101, fields, `{"id":2,"name":"b"}`)},
	})
	startWorkflow(t, r.Client, spec)
	waitCaughtUp(t, r.Client, spec.Table, ends)
	stopWorkflow(t, r.Client, spec.Table)

	spec.Topic = "e2e.public.retopic_b"
	produce(t, r, spec.Topic, 1, []sample.Message{
		{Key: []byte(`{"id":3}`), Value: enveloped("c", 200, fields, `{"id":3,"name":"c"}`)},
	})
	startWorkflow(t, r.Client, spec)
	var st workflows.Status
	waitFor(t, "blocked on the topic", func() bool {
		st = status(t, r.Client, spec.Table)
		return st.Phase == workflows.PhaseBlocked
	})
	want := "holds the records of topic e2e.public.retopic_a, not e2e.public.retopic_b"
	if !strings.Contains(st.LastError, want) {
		t.Fatalf("last error %q, want it to contain %q", st.LastError, want)
	}
	if st.Totals.Records != 0 {
		t.Fatalf("applied %d records of the new topic", st.Totals.Records)
	}
	stopWorkflow(t, r.Client, spec.Table)
}
