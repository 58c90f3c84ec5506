//go:build e2e

package runner

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/sample"
	"github.com/lakemirror/lakemirror/workflows"
	"go.temporal.io/api/enums/v1"
)

// Through a real worker and Temporal server: a batch attempt fails with
// an error quoting the worker's secret and a SAS URL; the failure Temporal
// records in the workflow history, the status the workflow shows while
// it retries and the worker's log carry only the redacted text, and the
// retry applies the batch.
func TestActivityErrorsRedacted(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "worker.log")
	logs, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logs.Close()
	s := stack.Settings
	s.Catalog.Props = map[string]string{"s3.secret-access-key": redactSecret}
	r, err := Start(context.Background(), s, slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		t.Fatal(err)
	}
	stopRunner := sync.OnceFunc(r.Stop)
	defer stopRunner()
	// every attempt Temporal makes before the workflow sees the failure
	// fails; the workflow shows the table retrying, then runs it again
	var mu sync.Mutex
	attempts := 0
	r.Activities.AfterCommit = func(_ context.Context, b lake.Batch, table string) error {
		mu.Lock()
		defer mu.Unlock()
		if attempts++; attempts <= 4 {
			return errors.New(leakyError)
		}
		return nil
	}
	spec := activities.TableSpec{Table: "e2e.redact", Topic: "e2e.public.redact", KeyColumns: []string{"order_id"}, MaxEvents: 10, MaxWait: 200 * time.Millisecond}
	ends := produce(t, r, spec.Topic, 1, []sample.Message{sample.PostgresChange("c", "null", `{"order_id":1,"status":"new"}`, 100)})
	startWorkflow(t, r.Client, spec)
	deadline := time.Now().Add(time.Minute)
	for st := status(t, r.Client, spec.Table); st.Phase != workflows.PhaseRetrying; st = status(t, r.Client, spec.Table) {
		if time.Now().After(deadline) {
			t.Fatalf("the table never showed retrying: %+v", st)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if st := status(t, r.Client, spec.Table); st.LastError != ": "+leakRedacted { // errors.New has no type in Temporal: ": <message>", as without redaction
		t.Fatalf("status while retrying: last error %q", st.LastError)
	}
	waitCaughtUp(t, r.Client, spec.Table, ends)
	var failures []string
	it := r.Client.GetWorkflowHistory(context.Background(), workflows.WorkflowID(spec.Table), "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if a := e.GetActivityTaskFailedEventAttributes(); a != nil {
			f := a.GetFailure()
			failures = append(failures, f.GetMessage())
			if f.GetCause() != nil {
				t.Errorf("the recorded failure has a cause: %v", f.GetCause())
			}
		}
	}
	if len(failures) != 1 || failures[0] != leakRedacted {
		t.Fatalf("recorded activity failures %q, want [%q]", failures, leakRedacted)
	}
	stopWorkflow(t, r.Client, spec.Table)
	stopRunner()
	out, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), redactSecret) || strings.Contains(string(out), "c2lnbmF0dXJl") || !strings.Contains(string(out), "sig=REDACTED") {
		t.Fatalf("the worker's log holds the secret or not the redacted failure:\n%s", out)
	}
}
