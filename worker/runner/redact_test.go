package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/sample"
	"github.com/lakemirror/lakemirror/workflows"
)

// The secret of these tests: a catalog property the worker is given, and
// an error text that quotes it and an Azure SAS URL (as Go's net/http
// does for a failed request).
const (
	redactSecret = "hunter2-secret-value"
	leakyError   = `upload failed: Put "http://127.0.0.1:1/acct/lake/wh%2Ff?se=2030&sig=c2lnbmF0dXJl%3D&sv=2024": secret ` + redactSecret
	leakRedacted = `upload failed: Put "http://127.0.0.1:1/acct/lake/wh%2Ff?se=2030&sig=REDACTED&sv=2024": secret REDACTED`
)

// Activity errors leave the worker redacted: an ApplicationError keeps
// its type and retry flag, any other error becomes its redacted text,
// with no cause that would still hold the secret; clean errors pass
// through untouched.
func TestRedactActivityError(t *testing.T) {
	redact := func(s string) string {
		return lake.RedactText(map[string]string{"s3.secret-access-key": redactSecret}, s)
	}
	plain := redactActivityError(fmt.Errorf("lake: %w", errors.New(leakyError)), redact)
	var pe *temporal.ApplicationError
	if !errors.As(plain, &pe) || pe.Message() != "lake: "+leakRedacted || pe.Type() != "wrapError" || pe.NonRetryable() || pe.Unwrap() != nil {
		t.Errorf("plain: %q (cause %v)", plain, errors.Unwrap(plain))
	}
	app := redactActivityError(temporal.NewNonRetryableApplicationError(leakyError, "StorageError", errors.New(leakyError)), redact)
	var ae *temporal.ApplicationError
	if !errors.As(app, &ae) || ae.Message() != leakRedacted || ae.Type() != "StorageError" || !ae.NonRetryable() || ae.Unwrap() != nil {
		t.Errorf("application error: %v", app)
	}
	clean := temporal.NewApplicationError("schema blocked", activities.ErrTypeSchemaBlocked, []string{"details kept"})
	if got := redactActivityError(clean, redact); got != clean {
		t.Errorf("a clean error was replaced: %v", got)
	}
}

// The worker's log records are redacted: message, string and error
// attributes, in groups and in attributes bound with With.
func TestRedactHandler(t *testing.T) {
	var buf bytes.Buffer
	redact := func(s string) string {
		return lake.RedactText(map[string]string{"s3.secret-access-key": redactSecret}, s)
	}
	l := redactLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}})), redact)
	l.With("key", redactSecret).Warn("write failed: "+redactSecret, "error", errors.New(leakyError), slog.Group("g", "s", redactSecret, "n", 3))
	want := `level=WARN msg="write failed: REDACTED" key=REDACTED error="` + strings.ReplaceAll(leakRedacted, `"`, `\"`) + `" g.s=REDACTED g.n=3` + "\n"
	if buf.String() != want {
		t.Fatalf("logged\n%s\nwant\n%s", buf.String(), want)
	}
}

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
